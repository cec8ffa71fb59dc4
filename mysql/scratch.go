package mysql

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"

	driver "github.com/go-sql-driver/mysql"
)

// NewScratch creates an empty database named after name on the server of
// baseURL and returns the store URL naming it; drop removes the database.
// Tests and the benchmark use throw-away databases.
func NewScratch(ctx context.Context, baseURL, name string) (string, func(), error) {
	cfg, err := Config(baseURL)
	if err != nil {
		return "", nil, err
	}
	conn, err := driver.NewConnector(cfg)
	if err != nil {
		return "", nil, err
	}
	db := sql.OpenDB(conn)
	var b [4]byte
	rand.Read(b[:])
	dbname := "ck_scratch_" + identPart(name) + "_" + hex.EncodeToString(b[:])
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+dbname+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		db.Close()
		return "", nil, fmt.Errorf("create database %s: %w", dbname, err)
	}
	drop := func() {
		db.Exec("DROP DATABASE " + dbname)
		db.Close()
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		drop()
		return "", nil, err
	}
	u.Path = "/" + dbname
	return u.String(), drop, nil
}

// identPart keeps letters, digits and underscores of s.
func identPart(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			out = append(out, c)
		} else {
			out = append(out, '_')
		}
	}
	return string(out)
}
