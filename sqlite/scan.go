package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// ScanActive implements crawlkeeper.ScanStore with a keyset read on the
// primary key.
func (s *Store) ScanActive(ctx context.Context, afterID, maxID int64, limit int) ([]*crawlkeeper.Record, error) {
	if limit <= 0 {
		limit = 500
	}
	q := `SELECT ` + recordCols + ` FROM active WHERE id > ? ORDER BY id LIMIT ?`
	args := []any{afterID, limit}
	if maxID > 0 {
		q = `SELECT ` + recordCols + ` FROM active WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`
		args = []any{afterID, maxID, limit}
	}
	return s.queryRecords(ctx, q, args...)
}

func (s *Store) queryRecords(ctx context.Context, q string, args ...any) ([]*crawlkeeper.Record, error) {
	// The rescan runs these few queries thousands of times per pass:
	// preparing each time cost a seventh of the read.
	st, err := s.readStmt(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	defer rows.Close()
	out := make([]*crawlkeeper.Record, 0, 64)
	for rows.Next() {
		r, err := scanRecord(rows, false)
		if err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// GetMany implements crawlkeeper.ScanStore.
func (s *Store) GetMany(ctx context.Context, ids []int64) ([]*crawlkeeper.Record, error) {
	out := []*crawlkeeper.Record{}
	for len(ids) > 0 {
		n := min(len(ids), keyChunk)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		ids = ids[n:]
		recs, err := s.queryRecords(ctx, `SELECT `+recordCols+` FROM active WHERE id IN (?`+strings.Repeat(",?", n-1)+`) ORDER BY id`, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// MaxID implements crawlkeeper.ScanStore: the counter minus one, which
// covers ids of records that have since been archived.
func (s *Store) MaxID(ctx context.Context) (int64, error) {
	var next int64
	if err := s.r.QueryRowContext(ctx, `SELECT value FROM meta WHERE name = 'next_id'`).Scan(&next); err != nil {
		return 0, fmt.Errorf("max id: %w", err)
	}
	return next - 1, nil
}

// writeChunk is the number of results one UPDATE statement applies.
const writeChunk = 200

// WriteProcessed implements crawlkeeper.ScanStore: one transaction, one
// UPDATE ... FROM (VALUES ...) per chunk of results, conditioned on each
// record's version. One statement per chunk rather than per record
// matters: the statement overhead cost more than the row writes.
func (s *Store) WriteProcessed(ctx context.Context, ws []crawlkeeper.ProcessedWrite) ([]int64, error) {
	skipped := []int64{}
	if len(ws) == 0 {
		return skipped, nil
	}
	// A record named twice keeps its last result, as if applied in order.
	last := make(map[int64]int, len(ws))
	for i, p := range ws {
		last[p.ID] = i
	}
	if len(last) < len(ws) {
		uniq := make([]crawlkeeper.ProcessedWrite, 0, len(last))
		for i, p := range ws {
			if last[p.ID] == i {
				uniq = append(uniq, p)
			}
		}
		ws = uniq
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("write processed: %w", err)
	}
	defer tx.Rollback()
	// Results that set event fields go through their own statement: SQLite
	// rewrites every index holding a column named in SET, even when the
	// value stays the same, and event_at heads a covering index. Most
	// results (every processor but dates) leave it alone.
	var plain, withEvent []crawlkeeper.ProcessedWrite
	for _, p := range ws {
		if p.SetEvent {
			withEvent = append(withEvent, p)
		} else {
			plain = append(plain, p)
		}
	}
	type stmtKey struct {
		n     int
		event bool
	}
	stmts := map[stmtKey]*sql.Stmt{}
	defer func() {
		for _, st := range stmts {
			st.Close()
		}
	}()
	written := make(map[int64]bool, len(ws))
	for _, group := range [][]crawlkeeper.ProcessedWrite{plain, withEvent} {
		for rest := group; len(rest) > 0; {
			n := min(len(rest), writeChunk)
			chunk := rest[:n]
			rest = rest[n:]
			event := chunk[0].SetEvent
			k := stmtKey{n, event}
			st, ok := stmts[k]
			if !ok {
				st, err = s.writeStmt(ctx, tx, writeProcessedSQL(n, event))
				if err != nil {
					return nil, fmt.Errorf("write processed: prepare: %w", err)
				}
				stmts[k] = st
			}
			args := make([]any, 0, 7*n)
			for _, p := range chunk {
				args = append(args, p.ID, p.Version, p.ProcessedAt.UnixMicro(), p.Chain, blobArg(p.Derived))
				if event {
					args = append(args, timeArg(p.EventAt), jsonStrings(p.DateErrors))
				}
			}
			if err := collectIDs(ctx, st, args, written); err != nil {
				return nil, err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("write processed: commit: %w", err)
	}
	for _, p := range ws {
		if !written[p.ID] {
			skipped = append(skipped, p.ID)
		}
	}
	return skipped, nil
}

// collectIDs runs a write-back statement and notes the ids it returned.
func collectIDs(ctx context.Context, st *sql.Stmt, args []any, written map[int64]bool) error {
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("write processed: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("write processed: %w", err)
		}
		written[id] = true
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("write processed: %w", err)
	}
	return nil
}

// writeProcessedSQL is the UPDATE of n results, conditioned on each
// record's version. VALUES columns are id, version, processed_at, chain
// and derived, then event_at and date_errors when event is set.
func writeProcessedSQL(n int, event bool) string {
	set, row := ``, `(?,?,?,?,?),`
	if event {
		set, row = `, event_at = v.column6, date_errors = v.column7`, `(?,?,?,?,?,?,?),`
	}
	return `UPDATE active SET processed_at = v.column3, processed_version = v.column2, processed_chain = v.column4, derived = v.column5` + set + `
	FROM (VALUES ` + strings.TrimSuffix(strings.Repeat(row, n), ",") + `) AS v
	WHERE active.id = v.column1 AND active.version = v.column2
	RETURNING active.id`
}

// Freshness implements crawlkeeper.ScanStore with one aggregate over the
// active table.
func (s *Store) Freshness(ctx context.Context, q crawlkeeper.FreshnessQuery) (*crawlkeeper.Freshness, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	f := &crawlkeeper.Freshness{}
	var oldest sql.NullInt64
	query, args := sqlstore.FreshnessSQL(q, q.Chain, "max", func(int) string { return "?" })
	err := s.r.QueryRowContext(ctx, query, args...).Scan(&f.Active, &f.NeverProcessed, &f.Due, &oldest)
	if err != nil {
		return nil, fmt.Errorf("freshness: %w", err)
	}
	f.OldestProcessedAt = nullTime(oldest)
	return f, nil
}
