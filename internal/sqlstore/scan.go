package sqlstore

import (
	"cmp"
	"context"
	"slices"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

var _ crawlkeeper.ScanStore = (*Store)(nil)

// ScanActive implements crawlkeeper.ScanStore with a keyset read on the
// primary key.
func (s *Store) ScanActive(ctx context.Context, afterID, maxID int64, limit int) ([]*crawlkeeper.Record, error) {
	if limit <= 0 {
		limit = 500
	}
	q, args := `SELECT `+s.activeCols+` FROM active WHERE id > ? ORDER BY id LIMIT ?`, []any{afterID, limit}
	if maxID > 0 {
		q, args = `SELECT `+s.activeCols+` FROM active WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`, []any{afterID, maxID, limit}
	}
	recs, err := s.queryRecords(ctx, s.e.Reader(), false, q, args...)
	if err != nil {
		return nil, s.e.Wrap("scan", err)
	}
	return recs, nil
}

// GetMany implements crawlkeeper.ScanStore.
func (s *Store) GetMany(ctx context.Context, ids []int64) ([]*crawlkeeper.Record, error) {
	out := []*crawlkeeper.Record{}
	err := Chunks(ids, func(c []int64) error {
		recs, err := s.queryRecords(ctx, s.e.Reader(), false, `SELECT `+s.activeCols+` FROM active WHERE id IN (`+In(len(c))+`)`, Args(c)...)
		out = append(out, recs...)
		return err
	})
	if err != nil {
		return nil, s.e.Wrap("get many", err)
	}
	slices.SortFunc(out, func(a, b *crawlkeeper.Record) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// MaxID implements crawlkeeper.ScanStore: the id the next record gets,
// minus one, which covers ids of records that have since been archived.
func (s *Store) MaxID(ctx context.Context) (int64, error) {
	var next int64
	if err := s.e.Reader().QueryRow(ctx, s.e.NextIDQuery()).Scan(&next); err != nil {
		return 0, s.e.Wrap("max id", err)
	}
	return next - 1, nil
}

// WriteProcessed implements crawlkeeper.ScanStore: the records' versions
// are read (and the rows locked) in one transaction, and the results whose
// version still matches are written as Bulk updates. Results that set
// event fields go in their own update: an engine may rewrite every index
// holding a column named in SET, even when the value stays the same, and
// event_at heads an index; most results (every processor but dates) leave
// it alone. Of several results for one record the last one stays.
func (s *Store) WriteProcessed(ctx context.Context, ws []crawlkeeper.ProcessedWrite) ([]int64, error) {
	if len(ws) == 0 {
		return []int64{}, nil
	}
	ws = storeenc.Dedupe(ws, func(p crawlkeeper.ProcessedWrite) int64 { return p.ID })
	var skipped []int64
	err := s.e.Write(ctx, "write processed", func(tx Querier) error {
		skipped = []int64{}
		versions, err := s.versions(ctx, tx, Map(ws, func(p crawlkeeper.ProcessedWrite) int64 { return p.ID }))
		if err != nil {
			return err
		}
		var plain, event [][]any
		errs := crawlkeeper.DateErrorCounts{}
		for _, p := range ws {
			if st, ok := versions[p.ID]; !ok || st.version != p.Version {
				skipped = append(skipped, p.ID)
				continue
			}
			row := []any{p.ID, p.ProcessedAt.UnixMicro(), p.Version, p.Chain, storeenc.Blob(p.Derived)}
			if p.SetEvent {
				event = append(event, append(row, storeenc.Micros(p.EventAt), DateErrors(p.DateErrors)))
				eventErrors(versions, p.ID, p.DateErrors, errs)
			} else {
				plain = append(plain, row)
			}
		}
		set := []string{"processed_at", "processed_version", "processed_chain", "derived"}
		for _, u := range []struct {
			rows [][]any
			set  []string
		}{{plain, set}, {event, append(set, "event_at", "date_errors")}} {
			if len(u.rows) == 0 {
				continue
			}
			if _, err := s.e.Update(ctx, tx, "active", []string{"id"}, u.set, u.rows); err != nil {
				return err
			}
		}
		return s.countDateErrors(ctx, tx, errs.List())
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
	var oldest *int64
	query, args := FreshnessSQL(q, q.Chain, s.e.Greatest(), func(int) string { return "?" })
	if err := s.e.Reader().QueryRow(ctx, query, args...).Scan(&f.Active, &f.NeverProcessed, &f.Due, &oldest); err != nil {
		return nil, s.e.Wrap("freshness", err)
	}
	f.OldestProcessedAt = storeenc.Time(oldest)
	return f, nil
}
