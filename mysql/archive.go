package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

// SelectDue implements crawlkeeper.ArchiveStore. The WHERE clause is a
// range on the rule's indexed column and the order is (column, id), the
// order of that InnoDB index (whose entries end in the primary key), so
// only due rows are read. FORCE INDEX keeps the optimizer from scanning
// the primary key instead when a source filter looks selective.
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
		where = append(where, "("+col+" > ? OR ("+col+" = ? AND id > ?))")
		args = append(args, at, at, q.After.ID)
		// The OR is what both servers turn into one index range; row
		// value comparisons are not used for ranges by older MySQL.
	}
	if len(q.Sources) > 0 {
		where = append(where, "source IN ("+list(len(q.Sources))+")")
		args = append(args, strs(q.Sources)...)
	}
	if len(q.Exclude) > 0 {
		where = append(where, "source NOT IN ("+list(len(q.Exclude))+")")
		args = append(args, strs(q.Exclude)...)
	}
	if len(q.Except) > 0 {
		clause, err := sqlstore.ExceptClause(q.Except, func(v any) string { args = append(args, v); return "?" })
		if err != nil {
			return nil, err
		}
		where = append(where, clause)
	}
	args = append(args, limit)
	query := "SELECT id, version, last_updated_at, " + col + " FROM active FORCE INDEX (active_" + col + `)
		WHERE ` + strings.Join(where, " AND ") + ` ORDER BY ` + col + `, id LIMIT ?`
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.wrap(fmt.Sprintf("select due (%s)", q.Rule), err)
	}
	defer rows.Close()
	out := []crawlkeeper.DueRecord{}
	for rows.Next() {
		var d crawlkeeper.DueRecord
		var updated, at int64
		if err := rows.Scan(&d.ID, &d.Version, &updated, &at); err != nil {
			return nil, s.wrap("select due", err)
		}
		d.LastUpdatedAt = crawlkeeper.MicrosTime(updated)
		d.At = crawlkeeper.MicrosTime(at)
		out = append(out, d)
	}
	return out, s.wrap("select due", rows.Err())
}

// lockAndLoad locks the keys of the records with ids in table and returns
// those records, read after the lock (and, with lockRows, row-locked too,
// so that version-checked writes of other columns wait for the move and
// then find the record gone). The keys are read before the lock; a record
// that entered the table after that has an unlocked key and is left out,
// so callers only ever act on records whose keys they hold.
func (s *Store) lockAndLoad(ctx context.Context, tx *sql.Tx, table string, ids []int64, lockRows bool) (map[int64]*crawlkeeper.Record, error) {
	out := make(map[int64]*crawlkeeper.Record, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), maxRows)
		chunk := int64s(ids[:n])
		ids = ids[n:]
		rows, err := tx.QueryContext(ctx, "SELECT `key` FROM "+table+` WHERE id IN (`+list(n)+`)`, chunk...)
		if err != nil {
			return nil, err
		}
		var keys []string
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return nil, err
			}
			keys = append(keys, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if len(keys) == 0 {
			continue
		}
		if err := (engine{s}).LockKeys(ctx, sqlstore.SQL(tx), keys); err != nil {
			return nil, err
		}
		held := make(map[string]bool, len(keys))
		for _, k := range keys {
			held[k] = true
		}
		cols := recordCols
		if table == "archive" {
			cols = archiveCols
		}
		q := `SELECT ` + cols + ` FROM ` + table + ` WHERE id IN (` + list(n) + `)`
		if lockRows {
			q += ` FOR UPDATE`
		}
		recs, err := queryRecords(ctx, tx, table == "archive", q, chunk...)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if held[r.Key] {
				out[r.ID] = r
			}
		}
	}
	return out, nil
}

// Archive implements crawlkeeper.ArchiveStore: in one transaction, each
// record still in the selected state is copied to the archive (payload
// compressed) and deleted from active. A crash before the commit leaves
// nothing half-moved.
func (s *Store) Archive(ctx context.Context, moves []crawlkeeper.Move, now time.Time) ([]int64, error) {
	if len(moves) == 0 {
		return []int64{}, nil
	}
	ids := make([]int64, len(moves))
	for i, m := range moves {
		ids[i] = m.ID
	}
	at := crawlkeeper.Truncate(now)
	var moved []int64
	err := s.inTx(ctx, "archive", func(tx *sql.Tx) error {
		moved = []int64{}
		cur, err := s.lockAndLoad(ctx, tx, "active", ids, true)
		if err != nil {
			return err
		}
		var recs []*crawlkeeper.Record
		var reasons []crawlkeeper.ArchiveReason
		for _, m := range crawlkeeper.PlanMoves(moves, crawlkeeper.RecordLookup(cur), crawlkeeper.RecordEvents(cur)) {
			recs = append(recs, cur[m.ID])
			reasons = append(reasons, m.Reason)
			moved = append(moved, m.ID)
		}
		if len(recs) == 0 {
			return nil
		}
		if err := s.insertArchive(ctx, tx, recs, at, reasons); err != nil {
			return err
		}
		return deleteIDs(ctx, tx, "active", moved)
	})
	if err != nil {
		return nil, err
	}
	return moved, nil
}

// deleteIDs deletes the rows of ids from table.
func deleteIDs(ctx context.Context, tx *sql.Tx, table string, ids []int64) error {
	for len(ids) > 0 {
		n := min(len(ids), maxRows)
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE id IN (`+list(n)+`)`, int64s(ids[:n])...); err != nil {
			return fmt.Errorf("delete from %s: %w", table, err)
		}
		ids = ids[n:]
	}
	return nil
}

// Restore implements crawlkeeper.ArchiveStore.
func (s *Store) Restore(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return []int64{}, nil
	}
	var restored []int64
	err := s.inTx(ctx, "restore", func(tx *sql.Tx) error {
		restored = []int64{}
		cur, err := s.lockAndLoad(ctx, tx, "archive", ids, false)
		if err != nil {
			return err
		}
		var recs []*crawlkeeper.Record
		for _, id := range crawlkeeper.PlanRestore(ids, crawlkeeper.RecordLookup(cur)) {
			r := cur[id]
			r.Reactivate()
			recs = append(recs, r)
			restored = append(restored, id)
		}
		if len(recs) == 0 {
			return nil
		}
		if err := deleteIDs(ctx, tx, "archive", restored); err != nil {
			return err
		}
		return s.insertActive(ctx, tx, recs)
	})
	if err != nil {
		return nil, err
	}
	return restored, nil
}

// lockVersions row-locks the active records among ids and returns their
// versions, so that version-checked writes can be decided in Go and
// applied in one statement (MySQL has no UPDATE ... RETURNING).
func lockVersions(ctx context.Context, tx *sql.Tx, ids []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), maxRows)
		rows, err := tx.QueryContext(ctx, `SELECT id, version FROM active WHERE id IN (`+list(n)+`) FOR UPDATE`, int64s(ids[:n])...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id, v int64
			if err := rows.Scan(&id, &v); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = v
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		ids = ids[n:]
	}
	return out, nil
}

// UpdateEvents implements crawlkeeper.ArchiveStore.
func (s *Store) UpdateEvents(ctx context.Context, updates []crawlkeeper.EventUpdate) (int, error) {
	if len(updates) == 0 {
		return 0, nil
	}
	written := 0
	err := s.inTx(ctx, "update events", func(tx *sql.Tx) error {
		ids := make([]int64, len(updates))
		for i, u := range updates {
			ids[i] = u.ID
		}
		versions, err := lockVersions(ctx, tx, ids)
		if err != nil {
			return err
		}
		var apply []crawlkeeper.EventUpdate
		written = 0
		for _, u := range updates {
			if v, ok := versions[u.ID]; ok && v == u.Version {
				apply = append(apply, u)
				written++
			}
		}
		// Of several updates of one record the last one stays, as when
		// they are applied one by one.
		apply = sqlstore.Dedupe(apply, func(u crawlkeeper.EventUpdate) int64 { return u.ID })
		cols := []string{"id", "event_at", "date_errors"}
		for _, c := range chunks(apply, s.maxStatement, func(u crawlkeeper.EventUpdate) int { return 64 + 4*32*len(u.DateErrors) }) {
			args := make([]any, 0, 3*len(c))
			for _, u := range c {
				args = append(args, u.ID, sqlstore.Micros(u.EventAt), sqlstore.DateErrorsText(u.DateErrors))
			}
			if _, err := tx.ExecContext(ctx, `UPDATE active t JOIN `+derived(cols, len(c))+` u ON t.id = u.id
				SET t.event_at = u.event_at, t.date_errors = u.date_errors`, args...); err != nil {
				return err
			}
		}
		return nil
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
	q := `SELECT ` + archiveCols + ` FROM archive WHERE archived_at < ? AND id > ?`
	args := []any{before.UnixMicro(), afterID}
	if source != nil {
		q += ` AND source = ?`
		args = append(args, *source)
	}
	q += ` ORDER BY id LIMIT ?`
	args = append(args, limit)
	recs, err := queryRecords(ctx, s.db, true, q, args...)
	if err != nil {
		return nil, s.wrap("archived before", err)
	}
	return recs, nil
}

// Purge implements crawlkeeper.ArchiveStore. The keys are locked first, so
// a concurrent ingest of a purged key waits and then stores a new record.
func (s *Store) Purge(ctx context.Context, targets []crawlkeeper.RecordState) (*crawlkeeper.PurgeResult, error) {
	res := &crawlkeeper.PurgeResult{Purged: []int64{}}
	if len(targets) == 0 {
		return res, nil
	}
	ids := make([]int64, len(targets))
	for i, t := range targets {
		ids[i] = t.ID
	}
	err := s.inTx(ctx, "purge", func(tx *sql.Tx) error {
		cur, err := s.lockAndLoad(ctx, tx, "archive", ids, false)
		if err != nil {
			return err
		}
		purge, changed := crawlkeeper.PlanPurge(targets, crawlkeeper.RecordLookup(cur))
		res.Purged, res.Changed = purge, changed
		if len(purge) == 0 {
			return nil
		}
		keys := make([]string, len(purge))
		for i, id := range purge {
			keys[i] = cur[id].Key
		}
		if err := deleteIDs(ctx, tx, "archive", purge); err != nil {
			return err
		}
		for gone := purge; len(gone) > 0; {
			k := min(len(gone), maxRows)
			if _, err := tx.ExecContext(ctx, `DELETE FROM history WHERE record_id IN (`+list(k)+`)`, int64s(gone[:k])...); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM record_keys WHERE `key` IN ("+list(k)+`)`, strs(keys[:k])...); err != nil {
				return err
			}
			gone, keys = gone[k:], keys[k:]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ArchiveStats implements crawlkeeper.ArchiveStore. The median lifetime is
// the mean of the middle row (odd count) or the two middle rows (even
// count) numbered by a window function; AVG over integers is exact, so it
// equals the embedded store's median.
func (s *Store) ArchiveStats(ctx context.Context, now time.Time) (map[string]*crawlkeeper.SourceStats, error) {
	out := map[string]*crawlkeeper.SourceStats{}
	get := func(src string) *crawlkeeper.SourceStats {
		if out[src] == nil {
			out[src] = &crawlkeeper.SourceStats{}
		}
		return out[src]
	}
	rows, err := s.db.QueryContext(ctx, `SELECT source, AVG(life) FROM (
			SELECT source, last_updated_at - crawled_at AS life,
				ROW_NUMBER() OVER (PARTITION BY source ORDER BY last_updated_at - crawled_at) AS rn,
				COUNT(*) OVER (PARTITION BY source) AS cnt
			FROM archive) t
		WHERE rn IN (FLOOR((cnt + 1) / 2), FLOOR((cnt + 2) / 2))
		GROUP BY source`)
	if err != nil {
		return nil, s.wrap("archive stats", err)
	}
	for rows.Next() {
		var src, avg string
		if err := rows.Scan(&src, &avg); err != nil {
			rows.Close()
			return nil, s.wrap("archive stats", err)
		}
		us, err := strconv.ParseFloat(avg, 64)
		if err != nil {
			rows.Close()
			return nil, s.wrap("archive stats", err)
		}
		m := us / 1e6
		get(src).MedianLifetimeS = &m
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.wrap("archive stats", err)
	}
	// Changes per week over the last four weeks.
	const weeks = 4
	since := now.Add(-weeks * 7 * 24 * time.Hour).UnixMicro()
	rows, err = s.db.QueryContext(ctx, `SELECT r.source, count(*) FROM history h
		JOIN (SELECT id, source FROM active UNION ALL SELECT id, source FROM archive) r ON r.id = h.record_id
		WHERE h.valid_to >= ? GROUP BY r.source`, since)
	if err != nil {
		return nil, s.wrap("archive stats", err)
	}
	defer rows.Close()
	for rows.Next() {
		var src string
		var n int64
		if err := rows.Scan(&src, &n); err != nil {
			return nil, s.wrap("archive stats", err)
		}
		v := float64(n) / weeks
		get(src).ChangesPerWeek = &v
	}
	return out, s.wrap("archive stats", rows.Err())
}
