package sqlite

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// SQLite's Bulk writes run one statement per row, prepared once on the
// writer connection: in process a statement costs no round trip, so
// multi-row statements would save little and cost a statement for each
// batch size. Updates of many rows are the exception (updateChunk).

// execRows runs q once with each row.
func execRows(ctx context.Context, tx sqlstore.Querier, q string, rows [][]any) error {
	for _, r := range rows {
		if _, err := tx.Exec(ctx, q, r...); err != nil {
			return err
		}
	}
	return nil
}

// Insert implements sqlstore.Bulk.
func (engine) Insert(ctx context.Context, tx sqlstore.Querier, table string, cols []string, rows [][]any, key int) error {
	verb := "INSERT"
	if key > 0 {
		verb = "INSERT OR REPLACE"
	}
	q := verb + " INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" + sqlstore.In(len(cols)) + ")"
	return execRows(ctx, tx, q, rows)
}

// updateChunk is the number of rows one UPDATE ... FROM (VALUES ...)
// applies: for many small rows (processing results) the statement
// overhead costs more than the row writes.
const updateChunk = 200

// Update implements sqlstore.Bulk: whole chunks of updateChunk rows in one
// UPDATE ... FROM (VALUES ...) each (one statement text, prepared once),
// the rest a statement per row.
func (engine) Update(ctx context.Context, tx sqlstore.Querier, table string, match, set []string, rows [][]any) (int64, error) {
	var n int64
	for len(rows) >= updateChunk {
		k, err := tx.Exec(ctx, updateValuesSQL(table, match, set), slices.Concat(rows[:updateChunk]...)...)
		if err != nil {
			return n, err
		}
		n += k
		rows = rows[updateChunk:]
	}
	if len(rows) == 0 {
		return n, nil
	}
	eqArg := func(c string) string { return c + " = ?" }
	q := "UPDATE " + table + " SET " + strings.Join(sqlstore.Map(set, eqArg), ", ") + " WHERE " + strings.Join(sqlstore.Map(match, eqArg), " AND ")
	for _, r := range rows {
		// The statement's placeholders are the set values, then the
		// match values.
		k, err := tx.Exec(ctx, q, slices.Concat(r[len(match):], r[:len(match)])...)
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

// updateValuesSQL is the UPDATE of updateChunk rows given as VALUES, whose
// columns SQLite names column1, column2, ...
func updateValuesSQL(table string, match, set []string) string {
	col := func(i int) string { return "v.column" + strconv.Itoa(i+1) }
	sets := make([]string, len(set))
	for i, c := range set {
		sets[i] = c + " = " + col(len(match)+i)
	}
	conds := make([]string, len(match))
	for i, c := range match {
		conds[i] = table + "." + c + " = " + col(i)
	}
	row := "(" + sqlstore.In(len(match)+len(set)) + "),"
	return "UPDATE " + table + " SET " + strings.Join(sets, ", ") + " FROM (VALUES " +
		strings.TrimSuffix(strings.Repeat(row, updateChunk), ",") + ") AS v WHERE " + strings.Join(conds, " AND ")
}

// Delete implements sqlstore.Bulk.
func (engine) Delete(ctx context.Context, tx sqlstore.Querier, table string, conds []string, rows [][]any) error {
	where := sqlstore.Map(conds, func(c string) string { return c + " ?" })
	q := "DELETE FROM " + table + " WHERE " + strings.Join(where, " AND ")
	return execRows(ctx, tx, q, rows)
}

// LockKeys does nothing: a write transaction is SQLite's only writer.
func (engine) LockKeys(context.Context, sqlstore.Querier, []string) error { return nil }

// TakeIDs takes ids from the counter meta.next_id, inside the transaction.
func (engine) TakeIDs(ctx context.Context, tx sqlstore.Querier, n int) ([]int64, error) {
	var next int64
	if err := tx.QueryRow(ctx, `SELECT value FROM meta WHERE name = 'next_id'`).Scan(&next); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `UPDATE meta SET value = ? WHERE name = 'next_id'`, next+int64(n)); err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = next + int64(i)
	}
	return ids, nil
}

// Increment keeps one counter row per source (shard 0): there is one
// writer.
func (engine) Increment(ctx context.Context, tx sqlstore.Querier, table string, counters []string, rows [][]any) error {
	set := sqlstore.Map(counters, func(c string) string { return c + " = " + c + " + excluded." + c })
	q := "INSERT INTO " + table + " (source, shard, " + strings.Join(counters, ", ") + ") VALUES (?, 0, " + sqlstore.In(len(counters)) +
		") ON CONFLICT (source, shard) DO UPDATE SET " + strings.Join(set, ", ")
	return execRows(ctx, tx, q, rows)
}
