package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	var b [4]byte
	rand.Read(b[:])
	schema := sanitizeIdent("ck_scratch_" + name + "_" + hex.EncodeToString(b[:]))
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

// sanitizeIdent keeps letters, digits and underscores of s, lower-cased,
// so it can be used unquoted.
func sanitizeIdent(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			out = append(out, c)
		case c >= 'A' && c <= 'Z':
			out = append(out, c+'a'-'A')
		default:
			out = append(out, '_')
		}
	}
	return string(out)
}
