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

// WriteProcessed implements crawlkeeper.ScanStore: one transaction, one
// conditional UPDATE per record.
func (s *Store) WriteProcessed(ctx context.Context, ws []crawlkeeper.ProcessedWrite) ([]int64, error) {
	skipped := []int64{}
	if len(ws) == 0 {
		return skipped, nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("write processed: %w", err)
	}
	defer tx.Rollback()
	w := newWriter(ctx, tx)
	defer w.close()
	for _, p := range ws {
		var res sql.Result
		if p.SetEvent {
			res, err = w.exec(`UPDATE active SET processed_at = ?, processed_version = ?, processed_chain = ?, derived = ?, event_at = ?, date_errors = ? WHERE id = ? AND version = ?`,
				p.ProcessedAt.UnixMicro(), p.Version, p.Chain, blobArg(p.Derived), timeArg(p.EventAt), jsonStrings(p.DateErrors), p.ID, p.Version)
		} else {
			res, err = w.exec(`UPDATE active SET processed_at = ?, processed_version = ?, processed_chain = ?, derived = ? WHERE id = ? AND version = ?`,
				p.ProcessedAt.UnixMicro(), p.Version, p.Chain, blobArg(p.Derived), p.ID, p.Version)
		}
		if err != nil {
			return nil, fmt.Errorf("write processed %d: %w", p.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			skipped = append(skipped, p.ID)
		}
	}
	w.close()
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("write processed: commit: %w", err)
	}
	return skipped, nil
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
