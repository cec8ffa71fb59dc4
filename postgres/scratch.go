package postgres

import (
	"context"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"

	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

// NewScratch creates an empty schema named after name on the server of
// baseURL and returns a store URL whose search_path selects it; drop
// removes the schema. Tests and the benchmark use throw-away schemas.
func NewScratch(ctx context.Context, baseURL, name string) (string, func(), error) {
	conn, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s: %s", storeenc.Redact(baseURL), storeenc.RedactErr(err, baseURL))
	}
	schema := storeenc.ScratchName(name)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		conn.Close(ctx)
		return "", nil, fmt.Errorf("create schema %s: %w", schema, err)
	}
	drop := func() {
		conn.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
		conn.Close(context.Background())
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		drop()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}
