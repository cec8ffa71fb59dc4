package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
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
	rows, err := s.r.QueryContext(ctx, q, args...)
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
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("write processed: %w", err)
	}
	defer tx.Rollback()
	stmts := map[int]*sql.Stmt{}
	defer func() {
		for _, st := range stmts {
			st.Close()
		}
	}()
	written := make(map[int64]bool, len(ws))
	for rest := ws; len(rest) > 0; {
		n := min(len(rest), writeChunk)
		chunk := rest[:n]
		rest = rest[n:]
		st, ok := stmts[n]
		if !ok {
			st, err = tx.PrepareContext(ctx, writeProcessedSQL(n))
			if err != nil {
				return nil, fmt.Errorf("write processed: prepare: %w", err)
			}
			stmts[n] = st
		}
		args := make([]any, 0, 8*n)
		for _, p := range chunk {
			setEvent := 0
			if p.SetEvent {
				setEvent = 1
			}
			args = append(args, p.ID, p.Version, p.ProcessedAt.UnixMicro(), p.Chain, blobArg(p.Derived),
				setEvent, timeArg(p.EventAt), jsonStrings(p.DateErrors))
		}
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return nil, fmt.Errorf("write processed: %w", err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("write processed: %w", err)
			}
			written[id] = true
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("write processed: %w", err)
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

// writeProcessedSQL is the UPDATE of n results. VALUES columns are
// id, version, processed_at, chain, derived, set_event, event_at and
// date_errors; event fields change only where set_event is 1.
func writeProcessedSQL(n int) string {
	return `UPDATE active SET processed_at = v.column3, processed_version = v.column2, processed_chain = v.column4, derived = v.column5,
		event_at = CASE WHEN v.column6 = 1 THEN v.column7 ELSE active.event_at END,
		date_errors = CASE WHEN v.column6 = 1 THEN v.column8 ELSE active.date_errors END
	FROM (VALUES ` + strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?,?),", n), ",") + `) AS v
	WHERE active.id = v.column1 AND active.version = v.column2
	RETURNING active.id`
}

// Freshness implements crawlkeeper.ScanStore.
func (s *Store) Freshness(ctx context.Context, chain string, dueBefore time.Time) (*crawlkeeper.Freshness, error) {
	f := &crawlkeeper.Freshness{}
	var oldest sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT count(*),
			count(*) FILTER (WHERE processed_at IS NULL),
			count(*) FILTER (WHERE processed_at IS NULL OR processed_version != version OR processed_chain != ? OR processed_at < ?),
			(SELECT min(processed_at) FROM active WHERE processed_at IS NOT NULL)
		FROM active`, chain, dueBefore.UnixMicro()).Scan(&f.Active, &f.NeverProcessed, &f.Due, &oldest)
	if err != nil {
		return nil, fmt.Errorf("freshness: %w", err)
	}
	f.OldestProcessedAt = nullTime(oldest)
	return f, nil
}
