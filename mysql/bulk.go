package mysql

import (
	"context"
	"slices"
	"strings"

	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// MySQL's Bulk writes are multi-row statements, split only to stay under
// max_allowed_packet: INSERT ... VALUES (...), (...), and UPDATE or
// DELETE ... JOIN over a derived table of the rows (derived).

// tuples returns n parenthesised groups of width placeholders, for a
// multi-row INSERT.
func tuples(n, width int) string {
	t := "(" + sqlstore.In(width) + ")"
	return strings.Repeat(t+",", n-1) + t
}

// derived returns a derived table of n rows with the named columns, as
// SELECT ... UNION ALL SELECT ...: the one multi-row table literal that
// MySQL and MariaDB both accept (their VALUES constructors differ).
func derived(cols []string, n int) string {
	first := sqlstore.Map(cols, func(c string) string { return "? AS " + c })
	return "(SELECT " + strings.Join(first, ", ") + strings.Repeat(" UNION ALL SELECT "+sqlstore.In(len(cols)), n-1) + ")"
}

// maxRows bounds the rows of one multi-row statement, so the server's
// parser and the derived tables stay small.
const maxRows = 1000

// chunks splits rows to fit the server's statement size.
func (e engine) chunks(rows [][]any) [][][]any {
	return sqlstore.ChunkRows(rows, maxRows, e.s.maxStatement)
}

// Insert implements sqlstore.Bulk; REPLACE replaces a row whose key exists.
func (e engine) Insert(ctx context.Context, tx sqlstore.Querier, table string, cols []string, rows [][]any, key int) error {
	verb := "INSERT"
	if key > 0 {
		verb = "REPLACE"
	}
	for _, c := range e.chunks(rows) {
		if _, err := tx.Exec(ctx, verb+" INTO "+table+" ("+strings.Join(cols, ", ")+") VALUES "+tuples(len(c), len(cols)), slices.Concat(c...)...); err != nil {
			return err
		}
	}
	return nil
}

// Update implements sqlstore.Bulk. Rows matched count even when their
// values are as written (the connection's ClientFoundRows).
func (e engine) Update(ctx context.Context, tx sqlstore.Querier, table string, match, set []string, rows [][]any) (int64, error) {
	cols := slices.Concat(match, set)
	eq := sqlstore.Map(cols, func(c string) string { return "t." + c + " = u." + c })
	var n int64
	for _, c := range e.chunks(rows) {
		k, err := tx.Exec(ctx, "UPDATE "+table+" t JOIN "+derived(cols, len(c))+" u ON "+
			strings.Join(eq[:len(match)], " AND ")+" SET "+strings.Join(eq[len(match):], ", "), slices.Concat(c...)...)
		if err != nil {
			return n, err
		}
		n += k
	}
	return n, nil
}

// Delete implements sqlstore.Bulk.
func (e engine) Delete(ctx context.Context, tx sqlstore.Querier, table string, conds []string, rows [][]any) error {
	cols, on := sqlstore.DeleteOn(conds)
	for _, c := range e.chunks(rows) {
		if _, err := tx.Exec(ctx, "DELETE t FROM "+table+" t JOIN "+derived(cols, len(c))+" u ON "+strings.Join(on, " AND "), slices.Concat(c...)...); err != nil {
			return err
		}
	}
	return nil
}

// LockKeys inserts the missing keys into record_keys and locks the rows of
// all of them, in key order (see the package documentation).
func (e engine) LockKeys(ctx context.Context, tx sqlstore.Querier, keys []string) error {
	for _, c := range sqlstore.ChunkBy(keys, maxRows, e.s.maxStatement, func(k string) int { return 2*len(k) + 4 }) {
		if _, err := tx.Exec(ctx, "INSERT INTO record_keys (`key`) VALUES "+tuples(len(c), 1)+" ON DUPLICATE KEY UPDATE `key` = `key`", sqlstore.Args(c)...); err != nil {
			return err
		}
	}
	return nil
}

// TakeIDs reserves ids from the counter row meta.next_id outside the
// caller's transaction, on a connection of its own, so the row is locked
// only for this statement and concurrent ingests do not queue on it for
// the length of their transactions; LAST_INSERT_ID(expr) returns the new
// value without a second query.
func (e engine) TakeIDs(ctx context.Context, _ sqlstore.Querier, n int) ([]int64, error) {
	res, err := e.s.db.ExecContext(ctx, `UPDATE meta SET value = LAST_INSERT_ID(value + ?) WHERE name = 'next_id'`, n)
	if err != nil {
		return nil, err
	}
	next, err := res.LastInsertId()
	if err != nil {
		return nil, err
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = next - int64(n) + int64(i)
	}
	return ids, nil
}

// Increment adds to the counters of one shard picked at random, a row at
// a time in source order.
func (engine) Increment(ctx context.Context, tx sqlstore.Querier, table string, counters []string, rows [][]any) error {
	shard := sqlstore.CounterShard()
	set := sqlstore.Map(counters, func(c string) string { return c + " = " + c + " + ?" })
	q := "INSERT INTO " + table + " (source, shard, " + strings.Join(counters, ", ") + ") VALUES (?, ?, " + sqlstore.In(len(counters)) +
		") ON DUPLICATE KEY UPDATE " + strings.Join(set, ", ")
	for _, r := range rows {
		args := append(append([]any{r[0], shard}, r[1:]...), r[1:]...)
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}
