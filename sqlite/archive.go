package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// SelectDue implements crawlkeeper.ArchiveStore. The WHERE clause is a
// range on the rule's index and the order is that index's order; the index
// carries every column read, so SQLite reads only the due entries of the
// index and never the table.
func (s *Store) SelectDue(ctx context.Context, q crawlkeeper.DueQuery) ([]crawlkeeper.DueRecord, error) {
	col, err := sqlstore.DueColumn(q.Rule)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = crawlkeeper.DefaultBatchSize
	}
	where := []string{col + " <= ?"}
	args := []any{q.Cutoff.UnixMicro()}
	if q.After != nil {
		at := q.After.At.UnixMicro()
		// A row value keeps the plan a single range on the index; the
		// equivalent OR would make SQLite merge two ranges and sort.
		where = append(where, "("+col+", id) > (?, ?)")
		args = append(args, at, q.After.ID)
	}
	if len(q.Sources) > 0 {
		where = append(where, "source IN (?"+strings.Repeat(",?", len(q.Sources)-1)+")")
		for _, src := range q.Sources {
			args = append(args, src)
		}
	}
	if len(q.Exclude) > 0 {
		where = append(where, "source NOT IN (?"+strings.Repeat(",?", len(q.Exclude)-1)+")")
		for _, src := range q.Exclude {
			args = append(args, src)
		}
	}
	if len(q.Except) > 0 {
		clause, err := sqlstore.ExceptClause(q.Except, func(v any) string { args = append(args, v); return "?" })
		if err != nil {
			return nil, err
		}
		where = append(where, clause)
	}
	args = append(args, limit)
	// The page comes back as one text value: with the pure-Go driver each
	// row and column returned costs more than SQLite's own work per index
	// entry, so packing the page in SQL makes selection several times
	// faster. SQL does not promise that an aggregate sees a subquery's
	// rows in its order, so each row carries its rule column and the page
	// is put in (column, id) order here; an ORDER BY inside group_concat
	// would say the same but make SQLite sort the page again (a third of
	// the query's time on a page of 10,000).
	query := `SELECT coalesce(group_concat(id || ',' || version || ',' || last_updated_at || ',' || ` + col + `, ';'), '') FROM (` +
		`SELECT id, version, last_updated_at, ` + col + ` FROM active INDEXED BY active_` + col +
		` WHERE ` + strings.Join(where, " AND ") + ` ORDER BY ` + col + `, id LIMIT ?)`
	st, err := s.readStmt(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("select due (%s): %w", q.Rule, err)
	}
	var packed string
	if err := st.QueryRowContext(ctx, args...).Scan(&packed); err != nil {
		return nil, fmt.Errorf("select due (%s): %w", q.Rule, err)
	}
	return parseDue(packed)
}

// parseDue reads the rows packed by SelectDue, "id,version,updated,at;...",
// and returns them in (at, id) order, each with its At.
func parseDue(packed string) ([]crawlkeeper.DueRecord, error) {
	out := make([]crawlkeeper.DueRecord, 0, strings.Count(packed, ";")+1)
	for packed != "" {
		row := packed
		if i := strings.IndexByte(packed, ';'); i >= 0 {
			row, packed = packed[:i], packed[i+1:]
		} else {
			packed = ""
		}
		var f [4]int64
		for k := range f {
			field := row
			if j := strings.IndexByte(row, ','); j >= 0 {
				field, row = row[:j], row[j+1:]
			} else {
				row = ""
			}
			n, err := strconv.ParseInt(field, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("select due: bad row value %q", field)
			}
			f[k] = n
		}
		out = append(out, crawlkeeper.DueRecord{ID: f[0], Version: f[1], LastUpdatedAt: crawlkeeper.MicrosTime(f[2]), At: crawlkeeper.MicrosTime(f[3])})
	}
	byCursor := func(a, b crawlkeeper.DueRecord) int {
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	}
	// Usually already in order: checking is one pass.
	if !slices.IsSortedFunc(out, byCursor) {
		slices.SortFunc(out, byCursor)
	}
	return out, nil
}

// Archive implements crawlkeeper.ArchiveStore: in one transaction, each
// record still in the selected state is copied to the archive (payload
// compressed) and deleted from active. A crash before the commit leaves
// nothing half-moved.
func (s *Store) Archive(ctx context.Context, moves []crawlkeeper.Move, now time.Time) ([]int64, error) {
	moved := []int64{}
	if len(moves) == 0 {
		return moved, nil
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("archive: begin: %w", err)
	}
	defer tx.Rollback()
	ids := make([]int64, len(moves))
	for i, m := range moves {
		ids[i] = m.ID
	}
	cur, err := loadByIDs(ctx, tx, "active", ids)
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	w := s.newWriter(ctx, tx)
	defer w.close()
	at := crawlkeeper.Truncate(now)
	for _, m := range crawlkeeper.PlanMoves(moves, crawlkeeper.RecordLookup(cur), crawlkeeper.RecordEvents(cur)) {
		if err := w.insertArchive(cur[m.ID], at, m.Reason); err != nil {
			return nil, fmt.Errorf("archive %d: %w", m.ID, err)
		}
		if _, err := w.exec(`DELETE FROM active WHERE id = ?`, m.ID); err != nil {
			return nil, fmt.Errorf("archive %d: %w", m.ID, err)
		}
		moved = append(moved, m.ID)
	}
	w.close()
	if err := s.commitWrite(ctx, tx); err != nil {
		return nil, fmt.Errorf("archive: commit: %w", err)
	}
	return moved, nil
}

// loadByIDs reads full records of ids from table ("active" or "archive").
func loadByIDs(ctx context.Context, q queryer, table string, ids []int64) (map[int64]*crawlkeeper.Record, error) {
	out := make(map[int64]*crawlkeeper.Record, len(ids))
	cols := recordCols
	archived := table == "archive"
	if archived {
		cols = archiveCols
	}
	for len(ids) > 0 {
		n := min(len(ids), keyChunk)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		ids = ids[n:]
		rows, err := q.QueryContext(ctx, `SELECT `+cols+` FROM `+table+` WHERE id IN (?`+strings.Repeat(",?", n-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			r, err := scanRecord(rows, archived)
			if err != nil {
				rows.Close()
				return nil, err
			}
			out[r.ID] = r
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Restore implements crawlkeeper.ArchiveStore.
func (s *Store) Restore(ctx context.Context, ids []int64) ([]int64, error) {
	restored := []int64{}
	if len(ids) == 0 {
		return restored, nil
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("restore: begin: %w", err)
	}
	defer tx.Rollback()
	cur, err := loadByIDs(ctx, tx, "archive", ids)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	w := s.newWriter(ctx, tx)
	defer w.close()
	for _, id := range crawlkeeper.PlanRestore(ids, crawlkeeper.RecordLookup(cur)) {
		r := cur[id]
		r.Reactivate()
		if _, err := w.exec(`DELETE FROM archive WHERE id = ?`, id); err != nil {
			return nil, fmt.Errorf("restore %d: %w", id, err)
		}
		if err := w.insertActive(r); err != nil {
			return nil, fmt.Errorf("restore %d: %w", id, err)
		}
		restored = append(restored, id)
	}
	w.close()
	if err := s.commitWrite(ctx, tx); err != nil {
		return nil, fmt.Errorf("restore: commit: %w", err)
	}
	return restored, nil
}

// UpdateEvents implements crawlkeeper.ArchiveStore.
func (s *Store) UpdateEvents(ctx context.Context, updates []crawlkeeper.EventUpdate) (int, error) {
	if len(updates) == 0 {
		return 0, nil
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return 0, fmt.Errorf("update events: %w", err)
	}
	defer tx.Rollback()
	w := s.newWriter(ctx, tx)
	defer w.close()
	n := 0
	for _, u := range updates {
		res, err := w.exec(`UPDATE active SET event_at = ?, date_errors = ? WHERE id = ? AND version = ?`, timeArg(u.EventAt), jsonStrings(u.DateErrors), u.ID, u.Version)
		if err != nil {
			return 0, fmt.Errorf("update events %d: %w", u.ID, err)
		}
		k, _ := res.RowsAffected()
		n += int(k)
	}
	w.close()
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("update events: commit: %w", err)
	}
	return n, nil
}

// ArchivedBefore implements crawlkeeper.ArchiveStore.
func (s *Store) ArchivedBefore(ctx context.Context, source *string, before time.Time, afterID int64, limit int) ([]*crawlkeeper.Record, error) {
	if limit <= 0 {
		limit = crawlkeeper.DefaultBatchSize
	}
	q := `SELECT ` + archiveCols + ` FROM archive WHERE archived_at < ? AND id > ?`
	args := []any{before.UnixMicro(), afterID}
	if source != nil {
		q += ` AND source = ?`
		args = append(args, *source)
	}
	q += ` ORDER BY id LIMIT ?`
	args = append(args, limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("archived before: %w", err)
	}
	defer rows.Close()
	out := []*crawlkeeper.Record{}
	for rows.Next() {
		r, err := scanRecord(rows, true)
		if err != nil {
			return nil, fmt.Errorf("archived before: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Purge implements crawlkeeper.ArchiveStore: in one transaction, the
// states of the targets are read and each record still archived in its
// exported state is deleted with its history.
func (s *Store) Purge(ctx context.Context, targets []crawlkeeper.RecordState) (*crawlkeeper.PurgeResult, error) {
	res := &crawlkeeper.PurgeResult{Purged: []int64{}}
	if len(targets) == 0 {
		return res, nil
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("purge: %w", err)
	}
	defer tx.Rollback()
	ids := make([]int64, len(targets))
	for i, t := range targets {
		ids[i] = t.ID
	}
	cur, err := loadStates(ctx, tx, "archive", ids)
	if err != nil {
		return nil, fmt.Errorf("purge: %w", err)
	}
	purge, changed := crawlkeeper.PlanPurge(targets, cur)
	w := s.newWriter(ctx, tx)
	defer w.close()
	for _, id := range purge {
		if _, err := w.exec(`DELETE FROM archive WHERE id = ?`, id); err != nil {
			return nil, fmt.Errorf("purge %d: %w", id, err)
		}
		if _, err := w.exec(`DELETE FROM history WHERE record_id = ?`, id); err != nil {
			return nil, fmt.Errorf("purge %d: %w", id, err)
		}
	}
	w.close()
	if err := s.commitWrite(ctx, tx); err != nil {
		return nil, fmt.Errorf("purge: commit: %w", err)
	}
	res.Purged, res.Changed = purge, changed
	return res, nil
}

// loadStates reads the version and last_updated_at of the records with ids
// in table, without their payloads.
func loadStates(ctx context.Context, q queryer, table string, ids []int64) (crawlkeeper.Lookup, error) {
	type state struct{ version, updated int64 }
	out := make(map[int64]state, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), keyChunk)
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		ids = ids[n:]
		rows, err := q.QueryContext(ctx, `SELECT id, version, last_updated_at FROM `+table+` WHERE id IN (?`+strings.Repeat(",?", n-1)+`)`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int64
			var st state
			if err := rows.Scan(&id, &st.version, &st.updated); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = st
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return func(id int64) (int64, time.Time, bool) {
		st, ok := out[id]
		return st.version, crawlkeeper.MicrosTime(st.updated), ok
	}, nil
}

// medianWindow bounds the archived records the median lifetime is taken
// over: the most recently archived ones.
const medianWindow = 100000

// ArchiveStats implements crawlkeeper.ArchiveStore.
func (s *Store) ArchiveStats(ctx context.Context, now time.Time) (map[string]*crawlkeeper.SourceStats, error) {
	out := map[string]*crawlkeeper.SourceStats{}
	get := func(src string) *crawlkeeper.SourceStats {
		if out[src] == nil {
			out[src] = &crawlkeeper.SourceStats{}
		}
		return out[src]
	}
	// Median lifetime over the most recently archived records (through the
	// archived_at index): the figure describes how long records live now,
	// and reading a bounded number of rows keeps stats fast with millions
	// of archived records. SQLite has no median aggregate; it is picked
	// here.
	rows, err := s.r.QueryContext(ctx, `SELECT source, last_updated_at - crawled_at FROM archive INDEXED BY archive_archived_at ORDER BY archived_at DESC LIMIT ?`, medianWindow)
	if err != nil {
		return nil, fmt.Errorf("archive stats: %w", err)
	}
	lifetimes := map[string][]int64{}
	for rows.Next() {
		var src string
		var life int64
		if err := rows.Scan(&src, &life); err != nil {
			rows.Close()
			return nil, err
		}
		lifetimes[src] = append(lifetimes[src], life)
	}
	rows.Close()
	for src, ls := range lifetimes {
		sort.Slice(ls, func(i, j int) bool { return ls[i] < ls[j] })
		m := medianSeconds(ls)
		get(src).MedianLifetimeS = &m
	}
	// Changes per week over the last four weeks.
	const weeks = 4
	since := now.Add(-weeks * 7 * 24 * time.Hour).UnixMicro()
	rows, err = s.r.QueryContext(ctx, `SELECT coalesce(a.source, r.source), count(*) FROM history h INDEXED BY history_valid_to
		LEFT JOIN active a ON a.id = h.record_id LEFT JOIN archive r ON r.id = h.record_id
		WHERE h.valid_to >= ? GROUP BY 1`, since)
	if err != nil {
		return nil, fmt.Errorf("archive stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var src string
		var n int64
		if err := rows.Scan(&src, &n); err != nil {
			return nil, err
		}
		v := float64(n) / weeks
		get(src).ChangesPerWeek = &v
	}
	return out, rows.Err()
}

func medianSeconds(us []int64) float64 {
	if !sort.SliceIsSorted(us, func(i, j int) bool { return us[i] < us[j] }) {
		sort.Slice(us, func(i, j int) bool { return us[i] < us[j] })
	}
	n := len(us)
	if n%2 == 1 {
		return float64(us[n/2]) / 1e6
	}
	return float64(us[n/2-1]+us[n/2]) / 2 / 1e6
}

var _ crawlkeeper.LifetimeReader = (*Store)(nil)

// RecentLifetimes implements crawlkeeper.LifetimeReader. The LIMIT applies
// to a walk of archive_archived_at from its newest end, so the query reads
// limit index entries and their rows whatever the archive's size.
func (s *Store) RecentLifetimes(ctx context.Context, limit int) ([]crawlkeeper.Lifetime, error) {
	if limit <= 0 {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "recent lifetimes: limit %d must be positive", limit)
	}
	rows, err := s.r.QueryContext(ctx, recentLifetimesQuery, limit)
	if err != nil {
		return nil, fmt.Errorf("recent lifetimes: %w", err)
	}
	defer rows.Close()
	out := make([]crawlkeeper.Lifetime, 0, min(limit, 1024))
	for rows.Next() {
		var l crawlkeeper.Lifetime
		var us int64
		if err := rows.Scan(&l.Source, &us); err != nil {
			return nil, fmt.Errorf("recent lifetimes: %w", err)
		}
		l.Lifetime = time.Duration(us) * time.Microsecond
		out = append(out, l)
	}
	return out, rows.Err()
}

const recentLifetimesQuery = `SELECT source, last_updated_at - crawled_at FROM archive ORDER BY archived_at DESC LIMIT ?`
