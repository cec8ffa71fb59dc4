package postgres

import (
	"context"
	"strconv"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// ScanActive implements crawlkeeper.ScanStore with a keyset read on the
// primary key.
func (s *Store) ScanActive(ctx context.Context, afterID, maxID int64, limit int) ([]*crawlkeeper.Record, error) {
	if limit <= 0 {
		limit = 500
	}
	q := `SELECT ` + recordCols + ` FROM active WHERE id > $1 ORDER BY id LIMIT $2`
	args := []any{afterID, limit}
	if maxID > 0 {
		q = `SELECT ` + recordCols + ` FROM active WHERE id > $1 AND id <= $3 ORDER BY id LIMIT $2`
		args = append(args, maxID)
	}
	recs, err := queryRecords(ctx, s.pool, false, q, args...)
	if err != nil {
		return nil, s.wrap("scan", err)
	}
	return recs, nil
}

// GetMany implements crawlkeeper.ScanStore.
func (s *Store) GetMany(ctx context.Context, ids []int64) ([]*crawlkeeper.Record, error) {
	if len(ids) == 0 {
		return []*crawlkeeper.Record{}, nil
	}
	recs, err := queryRecords(ctx, s.pool, false, `SELECT `+recordCols+` FROM active WHERE id = ANY($1) ORDER BY id`, ids)
	if err != nil {
		return nil, s.wrap("get many", err)
	}
	return recs, nil
}

// nextIDSQL reads the id the sequence hands out next without taking it.
const nextIDSQL = `SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM record_ids`

// MaxID implements crawlkeeper.ScanStore: the sequence's last value, which
// covers ids of records that have since been archived.
func (s *Store) MaxID(ctx context.Context) (int64, error) {
	var next int64
	if err := s.pool.QueryRow(ctx, nextIDSQL).Scan(&next); err != nil {
		return 0, s.wrap("max id", err)
	}
	return next - 1, nil
}

// WriteProcessed implements crawlkeeper.ScanStore with one conditional
// multi-row UPDATE; the rows it returns are the writes that applied.
func (s *Store) WriteProcessed(ctx context.Context, ws []crawlkeeper.ProcessedWrite) ([]int64, error) {
	skipped := []int64{}
	if len(ws) == 0 {
		return skipped, nil
	}
	// Writes to one record with different versions cannot both apply, so
	// keeping the last of each (id, version) gives the same rows as
	// applying them one by one, without a source row matching twice.
	last := sqlstore.Dedupe(ws, func(p crawlkeeper.ProcessedWrite) sqlstore.IDVersion {
		return sqlstore.IDVersion{ID: p.ID, Version: p.Version}
	})
	n := len(last)
	var (
		id, version, at = make([]int64, n), make([]int64, n), make([]int64, n)
		chain           = make([]string, n)
		derived         = make([][]byte, n)
		setEvent        = make([]bool, n)
		event           = make([]*int64, n)
		dateErrors      = make([]*string, n)
	)
	for i, p := range last {
		id[i], version[i], at[i], chain[i], derived[i] = p.ID, p.Version, p.ProcessedAt.UnixMicro(), enc(p.Chain), sqlstore.Blob(p.Derived)
		setEvent[i], event[i], dateErrors[i] = p.SetEvent, sqlstore.Micros(p.EventAt), sqlstore.DateErrorsText(p.DateErrors)
	}
	rows, err := s.pool.Query(ctx, `UPDATE active a SET processed_at = u.at, processed_version = u.version, processed_chain = u.chain, derived = u.derived,
			event_at = CASE WHEN u.set_event THEN u.event_at ELSE a.event_at END,
			date_errors = CASE WHEN u.set_event THEN u.date_errors ELSE a.date_errors END
		FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bytea[], $6::boolean[], $7::bigint[], $8::text[])
			AS u(id, version, at, chain, derived, set_event, event_at, date_errors)
		WHERE a.id = u.id AND a.version = u.version
		RETURNING a.id, a.version`, id, version, at, chain, derived, setEvent, event, dateErrors)
	if err != nil {
		return nil, s.wrap("write processed", err)
	}
	applied := map[sqlstore.IDVersion]bool{}
	for rows.Next() {
		var iv sqlstore.IDVersion
		if err := rows.Scan(&iv.ID, &iv.Version); err != nil {
			rows.Close()
			return nil, s.wrap("write processed", err)
		}
		applied[iv] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.wrap("write processed", err)
	}
	for _, p := range ws {
		if !applied[sqlstore.IDVersion{ID: p.ID, Version: p.Version}] {
			skipped = append(skipped, p.ID)
		}
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
	var oldest *int64
	query, args := sqlstore.FreshnessSQL(q, enc(q.Chain), "GREATEST", func(n int) string { return "$" + strconv.Itoa(n) })
	err := s.pool.QueryRow(ctx, query, args...).Scan(&f.Active, &f.NeverProcessed, &f.Due, &oldest)
	if err != nil {
		return nil, s.wrap("freshness", err)
	}
	f.OldestProcessedAt = sqlstore.Time(oldest)
	return f, nil
}
