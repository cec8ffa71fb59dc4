//go:build postgres

package main

import (
	"context"

	"github.com/crawlkeeper/crawlkeeper/internal/rawbench/rawsql"
	"github.com/jackc/pgx/v5"
)

func init() {
	engine.count = func(ctx context.Context, u string) (int64, error) {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		var n int64
		return n, conn.QueryRow(ctx, rawsql.Count).Scan(&n)
	}
	engine.search = func(ctx context.Context, u string, q rawsql.Query) ([]hit, error) {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			return nil, err
		}
		defer conn.Close(ctx)
		s, args := rawsql.PostgresSearch(q)
		rows, err := conn.Query(ctx, s, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var cols []string
		for _, f := range rows.FieldDescriptions() {
			cols = append(cols, f.Name)
		}
		var hits []hit
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				return nil, err
			}
			hits = append(hits, pick(cols, vals))
		}
		return hits, rows.Err()
	}
}
