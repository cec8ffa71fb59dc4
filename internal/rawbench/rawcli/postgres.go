//go:build postgres

package main

import (
	"context"
	"strings"

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
	engine.next = func(ctx context.Context, u string, a nextArgs) error {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, strings.Replace(nextSQL, "?", "$1", 1), a.source)
		if err != nil {
			return err
		}
		recs, err := readRows(rows)
		rows.Close()
		if err != nil {
			return err
		}
		plan, ids, err := rank(recs, a)
		if err != nil || len(ids) == 0 {
			return err
		}
		rows, err = conn.Query(ctx, namesSQL(len(ids), true), int64Args(ids)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		return printNames(plan, rows)
	}
	engine.archive = func(ctx context.Context, u string, cutoff, now int64, dry bool) (int, error) {
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, `SELECT id FROM active WHERE crawled_at <= $1 ORDER BY crawled_at, id`, cutoff)
		if err != nil {
			return 0, err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil || dry {
			return len(ids), err
		}
		cols := rawsql.PostgresCols
		for i := 0; i < len(ids); i += rawsql.MoveBatch {
			c := ids[i:min(i+rawsql.MoveBatch, len(ids))]
			err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `INSERT INTO archive (`+cols+`, item_bytes, archived_at, archive_reason) SELECT `+cols+
					`, length(item), $1, 'age' FROM active WHERE id = ANY($2)`, now, c); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, `DELETE FROM active WHERE id = ANY($1)`, c)
				return err
			})
			if err != nil {
				return 0, err
			}
		}
		return len(ids), nil
	}
}
