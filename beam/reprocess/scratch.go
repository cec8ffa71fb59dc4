package reprocess

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"

	"github.com/crawlkeeper/crawlkeeper"
)

// ScratchPostgres creates an empty schema on the PostgreSQL server of
// base and returns a store URL whose search_path selects it, and a
// function that drops it. The pipeline opens stores by URL, which the
// core's backends.OpenScratch does not return.
func ScratchPostgres(ctx context.Context, base string) (string, func(), error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "scratch store %q: give a postgres:// URL", base)
	}
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s: %w", u.Redacted(), err)
	}
	var b [4]byte
	rand.Read(b[:])
	schema := "ck_beam_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		conn.Close(ctx)
		return "", nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	drop := func() {
		conn.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
		conn.Close(context.Background())
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}
