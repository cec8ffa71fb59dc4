package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/jackc/pgx/v5"
)

var _ crawlkeeper.LeaseReader = (*Store)(nil)

// LeaseOwner implements crawlkeeper.LeaseReader.
func (s *Store) LeaseOwner(ctx context.Context, name string, now time.Time) (string, time.Time, error) {
	var owner string
	var until int64
	err := s.pool.QueryRow(ctx, `SELECT owner, expires_at FROM leases WHERE name = $1 AND expires_at > $2`, enc(name), now.UnixMicro()).Scan(&owner, &until)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, s.wrap("read lease "+name, err)
	}
	return dec(owner), crawlkeeper.MicrosTime(until), nil
}
