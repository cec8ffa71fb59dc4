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

// OpenScratch creates an empty database named after name on the server of
// baseURL and opens a store in it; close drops the database. The benchmark
// uses it for its throw-away stores.
func OpenScratch(ctx context.Context, baseURL, name string) (*Store, func(), error) {
	cfg, err := Config(baseURL)
	if err != nil {
		return nil, nil, err
	}
	conn, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	db := sql.OpenDB(conn)
	var b [4]byte
	rand.Read(b[:])
	dbname := "ck_scratch_" + identPart(name) + "_" + hex.EncodeToString(b[:])
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+dbname+" CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("create database %s: %w", dbname, err)
	}
	drop := func() {
		db.Exec("DROP DATABASE " + dbname)
		db.Close()
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		drop()
		return nil, nil, err
	}
	u.Path = "/" + dbname
	st, err := Open(ctx, u.String())
	if err != nil {
		drop()
		return nil, nil, err
	}
	return st, func() { st.Close(); drop() }, nil
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
