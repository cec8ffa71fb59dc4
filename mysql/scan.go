package mysql

import (
	"context"
	"database/sql"
	"sort"

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
	recs, err := queryRecords(ctx, s.db, false, q, args...)
	if err != nil {
		return nil, s.wrap("scan", err)
	}
	return recs, nil
}

// GetMany implements crawlkeeper.ScanStore.
func (s *Store) GetMany(ctx context.Context, ids []int64) ([]*crawlkeeper.Record, error) {
	out := []*crawlkeeper.Record{}
	for len(ids) > 0 {
		n := min(len(ids), maxRows)
		recs, err := queryRecords(ctx, s.db, false, `SELECT `+recordCols+` FROM active WHERE id IN (`+list(n)+`) ORDER BY id`, int64s(ids[:n])...)
		if err != nil {
			return nil, s.wrap("get many", err)
		}
		out = append(out, recs...)
		ids = ids[n:]
	}
	// Chunks are each in id order; the whole answer must be too.
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// MaxID implements crawlkeeper.ScanStore: the counter minus one, which
// covers ids of records that have since been archived.
func (s *Store) MaxID(ctx context.Context) (int64, error) {
	var next int64
	if err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE name = 'next_id'`).Scan(&next); err != nil {
		return 0, s.wrap("max id", err)
	}
	return next - 1, nil
}

// WriteProcessed implements crawlkeeper.ScanStore: the records' rows are
// locked and their versions read, then the writes whose version still
// matches go out as one multi-row UPDATE.
func (s *Store) WriteProcessed(ctx context.Context, ws []crawlkeeper.ProcessedWrite) ([]int64, error) {
	if len(ws) == 0 {
		return []int64{}, nil
	}
	var skipped []int64
	err := s.inTx(ctx, "write processed", func(tx *sql.Tx) error {
		skipped = []int64{}
		ids := make([]int64, len(ws))
		for i, p := range ws {
			ids[i] = p.ID
		}
		versions, err := lockVersions(ctx, tx, ids)
		if err != nil {
			return err
		}
		var apply []crawlkeeper.ProcessedWrite
		for _, p := range ws {
			if v, ok := versions[p.ID]; ok && v == p.Version {
				apply = append(apply, p)
			} else {
				skipped = append(skipped, p.ID)
			}
		}
		apply = sqlstore.Dedupe(apply, func(p crawlkeeper.ProcessedWrite) int64 { return p.ID })
		cols := []string{"id", "processed_at", "processed_version", "processed_chain", "derived", "set_event", "event_at", "date_errors"}
		size := func(p crawlkeeper.ProcessedWrite) int {
			return 2*len(p.Derived) + len(p.Chain) + 4*32*len(p.DateErrors) + 128
		}
		for _, c := range chunks(apply, s.maxStatement, size) {
			args := make([]any, 0, len(cols)*len(c))
			for _, p := range c {
				args = append(args, p.ID, p.ProcessedAt.UnixMicro(), p.Version, p.Chain, sqlstore.Blob(p.Derived),
					p.SetEvent, sqlstore.Micros(p.EventAt), sqlstore.DateErrorsText(p.DateErrors))
			}
			if _, err := tx.ExecContext(ctx, `UPDATE active t JOIN `+derived(cols, len(c))+` u ON t.id = u.id
				SET t.processed_at = u.processed_at, t.processed_version = u.processed_version, t.processed_chain = u.processed_chain,
					t.derived = u.derived,
					t.event_at = CASE WHEN u.set_event THEN u.event_at ELSE t.event_at END,
					t.date_errors = CASE WHEN u.set_event THEN u.date_errors ELSE t.date_errors END`, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return skipped, nil
}

// Freshness implements crawlkeeper.ScanStore with one aggregate over the
// active table.
func (s *Store) Freshness(ctx context.Context, q crawlkeeper.FreshnessQuery) (*crawlkeeper.Freshness, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	f := &crawlkeeper.Freshness{}
	var oldest sql.NullInt64
	query, args := sqlstore.FreshnessSQL(q, q.Chain, "GREATEST", func(int) string { return "?" })
	err := s.db.QueryRowContext(ctx, query, args...).Scan(&f.Active, &f.NeverProcessed, &f.Due, &oldest)
	if err != nil {
		return nil, s.wrap("freshness", err)
	}
	f.OldestProcessedAt = nullTime(oldest)
	return f, nil
}
