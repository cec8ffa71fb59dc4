package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	driver "github.com/go-sql-driver/mysql"

	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
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
	dbname := storeenc.ScratchName(name)
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
