package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

// Due is how an engine reads an archive rule's selection: a range on the
// rule column's index, in that index's order.
type Due interface {
	// DueFrom returns the table the selection of col reads, with an index
	// hint where the engine's planner needs one.
	DueFrom(col string) string
	// DueAfter returns the condition that continues a selection after
	// (at, id), and its arguments, in the form the engine turns into one
	// index range.
	DueAfter(col string, at, id int64) (string, []any)
}

// DueReader is implemented by engines that read a due selection their own
// way; query returns rows of id, version, last_updated_at and due_at (the
// rule column).
type DueReader interface {
	ReadDue(ctx context.Context, query string, args []any) ([]crawlkeeper.DueRecord, error)
}

// Mover is implemented by engines that move records to the archive inside
// the engine, without reading them out first. Move archives the records
// of moves still in their selected state, at at, and returns their ids in
// the order of moves, with the moved records counted in errs.
type Mover interface {
	Move(ctx context.Context, tx Querier, moves []crawlkeeper.Move, at time.Time, errs crawlkeeper.DateErrorCounts) ([]int64, error)
}

var _ crawlkeeper.ArchiveStore = (*Store)(nil)

// SelectDue implements crawlkeeper.ArchiveStore. The WHERE clause is a
// range on the rule's index and the order is that index's (column, id); the
// index carries every column read, so only due index entries are read.
func (s *Store) SelectDue(ctx context.Context, q crawlkeeper.DueQuery) ([]crawlkeeper.DueRecord, error) {
	col, err := storeenc.DueColumn(q.Rule)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = crawlkeeper.DefaultBatchSize
	}
	var f conds
	f.add(col+" <= ?", q.Cutoff.UnixMicro())
	if q.After != nil {
		cond, a := s.e.DueAfter(col, q.After.At.UnixMicro(), q.After.ID)
		f.add(cond, a...)
	}
	if len(q.Sources) > 0 {
		f.add("source IN ("+In(len(q.Sources))+")", Args(q.Sources)...)
	}
	if len(q.Exclude) > 0 {
		f.add("source NOT IN ("+In(len(q.Exclude))+")", Args(q.Exclude)...)
	}
	if len(q.Except) > 0 {
		var a []any
		clause, err := ExceptClause(q.Except, func(v any) string { a = append(a, v); return "?" })
		if err != nil {
			return nil, err
		}
		f.add(clause, a...)
	}
	args := append(f.args, limit)
	query := `SELECT id, version, last_updated_at, ` + col + ` AS due_at FROM ` + s.e.DueFrom(col) + ` WHERE ` +
		strings.Join(f.where, " AND ") + ` ORDER BY ` + col + `, id LIMIT ?`
	what := fmt.Sprintf("select due (%s)", q.Rule)
	if r, ok := s.e.(DueReader); ok {
		out, err := r.ReadDue(ctx, query, args)
		return out, s.e.Wrap(what, err)
	}
	out := []crawlkeeper.DueRecord{}
	err = EachRow(ctx, s.e.Reader(), func(rows Rows) error {
		var d crawlkeeper.DueRecord
		var updated, at int64
		err := rows.Scan(&d.ID, &d.Version, &updated, &at)
		d.LastUpdatedAt, d.At = crawlkeeper.MicrosTime(updated), crawlkeeper.MicrosTime(at)
		out = append(out, d)
		return err
	}, query, args...)
	if err != nil {
		return nil, s.e.Wrap(what, err)
	}
	return out, nil
}

// lockAndLoad locks the keys of the records with ids in the table and
// returns those records, read after the lock (and, with lockRows,
// row-locked too, so that version-checked writes of other columns wait for
// a move and then find the record gone). The keys are read before the
// lock; a record that entered the table after that has an unlocked key and
// is left out, so callers only ever act on records whose keys they hold.
func (s *Store) lockAndLoad(ctx context.Context, tx Querier, archived bool, ids []int64, lockRows bool) (map[int64]*crawlkeeper.Record, error) {
	out := make(map[int64]*crawlkeeper.Record, len(ids))
	err := Chunks(ids, func(c []int64) error {
		keys, err := Collect[string](tx.Query(ctx, "SELECT `key` FROM "+table(archived)+` WHERE id IN (`+In(len(c))+`)`, Args(c)...))
		if err != nil || len(keys) == 0 {
			return err
		}
		slices.Sort(keys)
		if err := s.e.LockKeys(ctx, tx, keys); err != nil {
			return err
		}
		q := `SELECT ` + s.cols(archived) + ` FROM ` + table(archived) + ` WHERE id IN (` + In(len(c)) + `)`
		if lockRows {
			q += s.e.ForUpdate()
		}
		recs, err := s.queryRecords(ctx, tx, archived, q, Args(c)...)
		for _, r := range recs {
			if _, held := slices.BinarySearch(keys, r.Key); held {
				out[r.ID] = r
			}
		}
		return err
	})
	return out, err
}

// Archive implements crawlkeeper.ArchiveStore: in one transaction, with
// the records' keys locked, each record still in the selected state is
// copied to the archive and deleted from active. A crash before the commit
// leaves nothing half-moved.
func (s *Store) Archive(ctx context.Context, moves []crawlkeeper.Move, now time.Time) ([]int64, error) {
	if len(moves) == 0 {
		return []int64{}, nil
	}
	at := crawlkeeper.Truncate(now)
	var moved []int64
	err := s.e.Write(ctx, "archive", func(tx Querier) error {
		errs := crawlkeeper.DateErrorCounts{}
		if m, ok := s.e.(Mover); ok {
			var err error
			if moved, err = m.Move(ctx, tx, moves, at, errs); err != nil {
				return err
			}
			return s.countDateErrors(ctx, tx, errs.List())
		}
		moved = []int64{}
		cur, err := s.lockAndLoad(ctx, tx, false, Map(moves, func(m crawlkeeper.Move) int64 { return m.ID }), true)
		if err != nil {
			return err
		}
		var recs []*crawlkeeper.Record
		var reasons []crawlkeeper.ArchiveReason
		for _, m := range crawlkeeper.PlanMoves(moves, crawlkeeper.RecordLookup(cur), crawlkeeper.RecordEvents(cur)) {
			recs = append(recs, cur[m.ID])
			reasons = append(reasons, m.Reason)
			moved = append(moved, m.ID)
			errs.Add(cur[m.ID], -1)
		}
		if err := s.insertRecords(ctx, tx, recs, reasons, at); err != nil {
			return err
		}
		if err := s.deleteIDs(ctx, tx, "active", moved); err != nil {
			return err
		}
		return s.countDateErrors(ctx, tx, errs.List())
	})
	if err != nil {
		return nil, err
	}
	return moved, nil
}

// Restore implements crawlkeeper.ArchiveStore.
func (s *Store) Restore(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return []int64{}, nil
	}
	var restored []int64
	err := s.e.Write(ctx, "restore", func(tx Querier) error {
		restored = []int64{}
		cur, err := s.lockAndLoad(ctx, tx, true, ids, false)
		if err != nil {
			return err
		}
		var recs []*crawlkeeper.Record
		errs := crawlkeeper.DateErrorCounts{}
		for _, id := range crawlkeeper.PlanRestore(ids, crawlkeeper.RecordLookup(cur)) {
			r := cur[id]
			r.Reactivate()
			recs = append(recs, r)
			restored = append(restored, id)
			errs.Add(r, 1)
		}
		if err := s.deleteIDs(ctx, tx, "archive", restored); err != nil {
			return err
		}
		if err := s.insertRecords(ctx, tx, recs, nil, time.Time{}); err != nil {
			return err
		}
		return s.countDateErrors(ctx, tx, errs.List())
	})
	if err != nil {
		return nil, err
	}
	return restored, nil
}

// activeState is what a version-checked write needs of an active record.
type activeState struct {
	version    int64
	source     string
	dateErrors bool
}

// versions row-locks the active records among ids and returns their
// versions (with what the date-error counts need), so that
// version-checked writes are decided here and applied as one Bulk update.
func (s *Store) versions(ctx context.Context, tx Querier, ids []int64) (map[int64]activeState, error) {
	out := make(map[int64]activeState, len(ids))
	err := Chunks(ids, func(c []int64) error {
		return EachRow(ctx, tx, func(rows Rows) error {
			var id int64
			var st activeState
			err := rows.Scan(&id, &st.version, &st.source, &st.dateErrors)
			out[id] = st
			return err
		}, `SELECT id, version, source, date_errors IS NOT NULL FROM active WHERE id IN (`+In(len(c))+`)`+s.e.ForUpdate(), Args(c)...)
	})
	return out, err
}

// eventErrors counts, for the event writes that apply (the last of each
// record), the change of the active date-error counts.
func eventErrors(cur map[int64]activeState, id int64, dateErrors []string, errs crawlkeeper.DateErrorCounts) {
	st := cur[id]
	if now := len(dateErrors) > 0; now != st.dateErrors {
		if now {
			errs.AddSource(st.source, 1)
		} else {
			errs.AddSource(st.source, -1)
		}
	}
}

// UpdateEvents implements crawlkeeper.ArchiveStore. It counts every update
// whose version still matched, as when they are applied one by one; of
// several updates of one record the last one stays.
func (s *Store) UpdateEvents(ctx context.Context, updates []crawlkeeper.EventUpdate) (int, error) {
	if len(updates) == 0 {
		return 0, nil
	}
	written := 0
	err := s.e.Write(ctx, "update events", func(tx Querier) error {
		versions, err := s.versions(ctx, tx, Map(updates, func(u crawlkeeper.EventUpdate) int64 { return u.ID }))
		if err != nil {
			return err
		}
		var apply []crawlkeeper.EventUpdate
		for _, u := range updates {
			if st, ok := versions[u.ID]; ok && st.version == u.Version {
				apply = append(apply, u)
			}
		}
		written = len(apply)
		apply = storeenc.Dedupe(apply, func(u crawlkeeper.EventUpdate) int64 { return u.ID })
		if len(apply) == 0 {
			return nil
		}
		rows := make([][]any, len(apply))
		errs := crawlkeeper.DateErrorCounts{}
		for i, u := range apply {
			rows[i] = []any{u.ID, storeenc.Micros(u.EventAt), DateErrors(u.DateErrors)}
			eventErrors(versions, u.ID, u.DateErrors, errs)
		}
		if _, err = s.e.Update(ctx, tx, "active", []string{"id"}, []string{"event_at", "date_errors"}, rows); err != nil {
			return err
		}
		return s.countDateErrors(ctx, tx, errs.List())
	})
	if err != nil {
		return 0, err
	}
	return written, nil
}

// ArchivedBefore implements crawlkeeper.ArchiveStore.
func (s *Store) ArchivedBefore(ctx context.Context, source *string, before time.Time, afterID int64, limit int) ([]*crawlkeeper.Record, error) {
	if limit <= 0 {
		limit = crawlkeeper.DefaultBatchSize
	}
	q := `SELECT ` + s.archiveCols + ` FROM archive WHERE archived_at < ? AND id > ?`
	args := []any{before.UnixMicro(), afterID}
	if source != nil {
		q += ` AND source = ?`
		args = append(args, *source)
	}
	recs, err := s.queryRecords(ctx, s.e.Reader(), true, q+` ORDER BY id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, s.e.Wrap("archived before", err)
	}
	return recs, nil
}

// Purge implements crawlkeeper.ArchiveStore: in one transaction, with the
// keys locked, each record still archived in its exported state is deleted
// with its history, and its key released. A concurrent ingest of a purged
// key waits for the lock and then stores a new record; a concurrent
// refresh of an archived record either commits before the lock (and the
// record is kept as changed) or waits and finds it gone.
func (s *Store) Purge(ctx context.Context, targets []crawlkeeper.RecordState) (*crawlkeeper.PurgeResult, error) {
	res := &crawlkeeper.PurgeResult{Purged: []int64{}}
	if len(targets) == 0 {
		return res, nil
	}
	ids := Map(targets, func(t crawlkeeper.RecordState) int64 { return t.ID })
	err := s.e.Write(ctx, "purge", func(tx Querier) error {
		cur, err := s.lockAndLoad(ctx, tx, true, ids, false)
		if err != nil {
			return err
		}
		purge, changed := crawlkeeper.PlanPurge(targets, crawlkeeper.RecordLookup(cur))
		res.Purged, res.Changed = purge, changed
		keys := Map(purge, func(id int64) string { return cur[id].Key })
		if err := s.deleteIDs(ctx, tx, "archive", purge); err != nil {
			return err
		}
		err = Chunks(purge, func(c []int64) error {
			_, err := tx.Exec(ctx, `DELETE FROM history WHERE record_id IN (`+In(len(c))+`)`, Args(c)...)
			return err
		})
		if err != nil {
			return err
		}
		return s.e.ReleaseKeys(ctx, tx, keys)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// medianWindow bounds the archived records the median lifetime is taken
// over: the most recently archived ones.
const medianWindow = 100000

// ArchiveStats implements crawlkeeper.ArchiveStore: the median lifetime
// over the most recently archived records (through the archived_at index:
// the figure describes how long records live now, and a bounded read keeps
// stats fast with millions of archived records), and content changes per
// week over the last four weeks.
func (s *Store) ArchiveStats(ctx context.Context, now time.Time) (map[string]*crawlkeeper.SourceStats, error) {
	out := map[string]*crawlkeeper.SourceStats{}
	recent, err := s.RecentLifetimes(ctx, medianWindow)
	if err != nil {
		return nil, err
	}
	lifetimes := map[string][]int64{}
	for _, l := range recent {
		lifetimes[l.Source] = append(lifetimes[l.Source], l.Lifetime.Microseconds())
	}
	for src, ls := range lifetimes {
		m := medianSeconds(ls)
		sourceStats(out, src).MedianLifetimeS = &m
	}
	const weeks = 4
	since := now.Add(-weeks * 7 * 24 * time.Hour).UnixMicro()
	err = EachRow(ctx, s.e.Reader(), func(rows Rows) error {
		var src string
		var n int64
		err := rows.Scan(&src, &n)
		v := float64(n) / weeks
		sourceStats(out, src).ChangesPerWeek = &v
		return err
	}, `SELECT coalesce(a.source, r.source), count(*) FROM history h
		LEFT JOIN active a ON a.id = h.record_id LEFT JOIN archive r ON r.id = h.record_id
		WHERE h.valid_to >= ? AND (a.id IS NOT NULL OR r.id IS NOT NULL) GROUP BY coalesce(a.source, r.source)`, since)
	if err != nil {
		return nil, s.e.Wrap("archive stats", err)
	}
	return out, nil
}

// medianSeconds returns the median of microseconds in seconds, the mean
// of the two middle values of an even count.
func medianSeconds(us []int64) float64 {
	slices.Sort(us)
	n := len(us)
	if n%2 == 1 {
		return float64(us[n/2]) / 1e6
	}
	return float64(us[n/2-1]+us[n/2]) / 2 / 1e6
}

var _ crawlkeeper.LifetimeReader = (*Store)(nil)

// RecentLifetimesQuery is RecentLifetimes' query, which must walk the
// archived_at index from its newest end (the engines' tests check plans).
const RecentLifetimesQuery = `SELECT source, last_updated_at - crawled_at FROM archive ORDER BY archived_at DESC LIMIT ?`

// RecentLifetimes implements crawlkeeper.LifetimeReader. The LIMIT applies
// to a walk of archive_archived_at from its newest end, so the query reads
// limit index entries and their rows whatever the archive's size.
func (s *Store) RecentLifetimes(ctx context.Context, limit int) ([]crawlkeeper.Lifetime, error) {
	if limit <= 0 {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "recent lifetimes: limit %d must be positive", limit)
	}
	out := make([]crawlkeeper.Lifetime, 0, min(limit, 1024))
	err := EachRow(ctx, s.e.Reader(), func(rows Rows) error {
		var l crawlkeeper.Lifetime
		var us int64
		err := rows.Scan(&l.Source, &us)
		l.Lifetime = time.Duration(us) * time.Microsecond
		out = append(out, l)
		return err
	}, RecentLifetimesQuery, limit)
	if err != nil {
		return nil, s.e.Wrap("recent lifetimes", err)
	}
	return out, nil
}
