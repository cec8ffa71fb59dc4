package mysql

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

var _ crawlkeeper.LeaseReader = (*Store)(nil)

// LeaseOwner implements crawlkeeper.LeaseReader.
func (s *Store) LeaseOwner(ctx context.Context, name string, now time.Time) (string, time.Time, error) {
	var owner string
	var until int64
	err := s.db.QueryRowContext(ctx, `SELECT owner, expires_at FROM leases WHERE name = ? AND expires_at > ?`, name, now.UnixMicro()).Scan(&owner, &until)
	if errors.Is(err, sql.ErrNoRows) {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, s.wrap("read lease "+name, err)
	}
	return owner, crawlkeeper.MicrosTime(until), nil
}
