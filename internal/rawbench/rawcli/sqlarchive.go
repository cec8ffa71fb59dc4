//go:build sqlite || mysql

package main

import (
	"context"
	"database/sql"

	"github.com/crawlkeeper/crawlkeeper/internal/rawbench/rawsql"
)

// sqlArchive is the raw archive pass on a database/sql engine: the
// indexed selection, then INSERT ... SELECT and DELETE in batches.
func sqlArchive(ctx context.Context, db *sql.DB, cols string, cutoff, now int64, dry bool) (int, error) {
	rows, err := db.QueryContext(ctx, rawsql.AgeSelect, cutoff)
	if err != nil {
		return 0, err
	}
	var ids []any
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || dry {
		return len(ids), err
	}
	for i := 0; i < len(ids); i += rawsql.MoveBatch {
		c := ids[i:min(i+rawsql.MoveBatch, len(ids))]
		ins, del := rawsql.MoveSQL(cols, len(c))
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, ins, append([]any{now}, c...)...); err != nil {
			tx.Rollback()
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, del, c...); err != nil {
			tx.Rollback()
			return 0, err
		}
		if err := tx.Commit(); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}
