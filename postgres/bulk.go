package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// PostgreSQL's Bulk writes are one statement per chunk over unnest() of
// one array per column: the rows travel as a few array values, and the
// statement text stays the same whatever the number of rows.

// maxStatementBytes bounds the payload bytes of one statement: PostgreSQL
// limits one array value to 1 GB, and smaller statements keep memory flat
// when items are large.
const maxStatementBytes = 32 << 20

// unnest returns "unnest($1::t1[], ...) AS u(cols)" over the columns of
// rows, and the arrays: one per column, typed by the first row's values,
// text escaped as enc does (JSON text is not).
func unnest(cols []string, rows [][]any, first int) (string, []any, error) {
	arrays := make([]any, len(cols))
	types := make([]string, len(cols))
	for c := range cols {
		switch rows[0][c].(type) {
		case int64:
			arrays[c], types[c] = sqlstore.Map(rows, func(r []any) int64 { return r[c].(int64) }), "bigint"
		case *int64:
			arrays[c], types[c] = sqlstore.Map(rows, func(r []any) *int64 { return r[c].(*int64) }), "bigint"
		case bool:
			arrays[c], types[c] = sqlstore.Map(rows, func(r []any) bool { return r[c].(bool) }), "boolean"
		case *float64:
			arrays[c], types[c] = sqlstore.Map(rows, func(r []any) *float64 { return r[c].(*float64) }), "double precision"
		case string:
			arrays[c], types[c] = sqlstore.Map(rows, func(r []any) string { return enc(r[c].(string)) }), "text"
		case *string:
			arrays[c], types[c] = sqlstore.Map(rows, func(r []any) *string { return r[c].(*string) }), "text"
		case sqlstore.JSONText:
			arrays[c], types[c] = sqlstore.Map(rows, func(r []any) string { return string(r[c].(sqlstore.JSONText)) }), "text"
		case *sqlstore.JSONText:
			arrays[c], types[c] = sqlstore.Map(rows, func(r []any) *string { return (*string)(r[c].(*sqlstore.JSONText)) }), "text"
		case []byte:
			arrays[c], types[c] = sqlstore.Map(rows, func(r []any) []byte { return r[c].([]byte) }), "bytea"
		default:
			return "", nil, fmt.Errorf("bulk write: column %s: no array type for %T", cols[c], rows[0][c])
		}
	}
	args := make([]string, len(cols))
	for c := range cols {
		args[c] = "$" + strconv.Itoa(first+c) + "::" + types[c] + "[]"
	}
	return "unnest(" + strings.Join(args, ", ") + ") AS u(" + strings.Join(cols, ", ") + ")", arrays, nil
}

// rawChunks runs fn over chunks of rows of at most maxStatementBytes, on
// the transaction's pgx runner (the arrays are escaped by unnest, not by
// the adapter).
func rawChunks(tx sqlstore.Querier, rows [][]any, fn func(r pgRunner, c [][]any) error) error {
	r := tx.(pgQuerier).r
	for _, c := range sqlstore.ChunkRows(rows, len(rows), maxStatementBytes) {
		if err := fn(r, c); err != nil {
			return err
		}
	}
	return nil
}

// quote spells a shared statement's `quoted` name as PostgreSQL does.
func quote(col string) string { return strings.ReplaceAll(col, "`", `"`) }

// Insert implements sqlstore.Bulk.
func (engine) Insert(ctx context.Context, tx sqlstore.Querier, table string, cols []string, rows [][]any, key int) error {
	cols = sqlstore.Map(cols, quote)
	return rawChunks(tx, rows, func(r pgRunner, c [][]any) error {
		from, arrays, err := unnest(cols, c, 1)
		if err != nil {
			return err
		}
		q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") SELECT * FROM " + from
		if key > 0 {
			set := sqlstore.Map(cols[key:], func(col string) string { return col + " = excluded." + col })
			q += " ON CONFLICT (" + strings.Join(cols[:key], ", ") + ") DO UPDATE SET " + strings.Join(set, ", ")
		}
		_, err = r.Exec(ctx, q, arrays...)
		return err
	})
}

// Update implements sqlstore.Bulk.
func (engine) Update(ctx context.Context, tx sqlstore.Querier, table string, match, set []string, rows [][]any) (int64, error) {
	cols := sqlstore.Map(slices.Concat(match, set), quote)
	eq := sqlstore.Map(cols, func(col string) string { return col + " = u." + col })
	var n int64
	err := rawChunks(tx, rows, func(r pgRunner, c [][]any) error {
		from, arrays, err := unnest(cols, c, 1)
		if err != nil {
			return err
		}
		tag, err := r.Exec(ctx, "UPDATE "+table+" t SET "+strings.Join(eq[len(match):], ", ")+" FROM "+from+" WHERE t."+strings.Join(eq[:len(match)], " AND t."), arrays...)
		n += tag.RowsAffected()
		return err
	})
	return n, err
}

// Delete implements sqlstore.Bulk.
func (engine) Delete(ctx context.Context, tx sqlstore.Querier, table string, conds []string, rows [][]any) error {
	cols, where := sqlstore.DeleteOn(sqlstore.Map(conds, quote))
	return rawChunks(tx, rows, func(r pgRunner, c [][]any) error {
		from, arrays, err := unnest(cols, c, 1)
		if err != nil {
			return err
		}
		_, err = r.Exec(ctx, "DELETE FROM "+table+" t USING "+from+" WHERE "+strings.Join(where, " AND "), arrays...)
		return err
	})
}

// lockKeysSQL inserts the missing keys of $1 into record_keys and locks
// the rows of all of them, in key order, without writing existing rows
// (see the package documentation).
const lockKeysSQL = `INSERT INTO record_keys (key) SELECT k FROM unnest($1::text[]) AS k ORDER BY k COLLATE "C"
	ON CONFLICT (key) DO UPDATE SET key = excluded.key WHERE false`

// LockKeys implements sqlstore.Keys through record_keys.
func (engine) LockKeys(ctx context.Context, tx sqlstore.Querier, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, lockKeysSQL, keys)
	return err
}

// TakeIDs takes ids from the sequence record_ids: concurrent callers
// interleave, so the values are unique but need sorting.
func (engine) TakeIDs(ctx context.Context, tx sqlstore.Querier, n int) ([]int64, error) {
	ids, err := sqlstore.Collect[int64](tx.Query(ctx, `SELECT nextval('record_ids') FROM generate_series(1, $1)`, n))
	slices.Sort(ids)
	return ids, err
}

// Increment adds to the counters of one shard picked at random, in one
// statement over unnest() in source order.
func (engine) Increment(ctx context.Context, tx sqlstore.Querier, table string, counters []string, rows [][]any) error {
	cols := append([]string{"source"}, counters...)
	from, arrays, err := unnest(cols, rows, 1)
	if err != nil {
		return err
	}
	set := sqlstore.Map(counters, func(c string) string { return c + " = " + table + "." + c + " + excluded." + c })
	_, err = tx.(pgQuerier).r.Exec(ctx, "INSERT INTO "+table+" (source, shard, "+strings.Join(counters, ", ")+") SELECT source, "+
		strconv.Itoa(sqlstore.CounterShard())+", "+strings.Join(counters, ", ")+" FROM "+from+` ORDER BY source COLLATE "C"
		ON CONFLICT (source, shard) DO UPDATE SET `+strings.Join(set, ", "), arrays...)
	return err
}
