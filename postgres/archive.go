package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/jackc/pgx/v5"
)

// SelectDue implements crawlkeeper.ArchiveStore. The WHERE clause is a
// range on the rule's index and the order is that index's (column, id), so
// the planner walks the index and reads only due entries; the index
// includes every column read, allowing index-only scans.
func (s *Store) SelectDue(ctx context.Context, q crawlkeeper.DueQuery) ([]crawlkeeper.DueRecord, error) {
	col, err := sqlstore.DueColumn(q.Rule)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = crawlkeeper.DefaultBatchSize
	}
	args := []any{q.Cutoff.UnixMicro()}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := []string{col + " <= $1"}
	if q.After != nil {
		where = append(where, "("+col+", id) > ("+arg(q.After.At.UnixMicro())+", "+arg(q.After.ID)+")")
	}
	if len(q.Sources) > 0 {
		where = append(where, "source = ANY("+arg(encAll(q.Sources))+")")
	}
	if len(q.Exclude) > 0 {
		where = append(where, "NOT (source = ANY("+arg(encAll(q.Exclude))+"))")
	}
	if len(q.Except) > 0 {
		clause, err := sqlstore.ExceptClause(q.Except, arg)
		if err != nil {
			return nil, err
		}
		where = append(where, clause)
	}
	query := `SELECT id, version, last_updated_at, ` + col + ` FROM active WHERE ` +
		strings.Join(where, " AND ") + ` ORDER BY ` + col + `, id LIMIT ` + arg(limit)
	rows, err := s.pool.Query(ctx, query, args...)
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
// those records, read after the lock, in one pipelined round trip. The
// keys come from the table as of the lock statement; a record that entered
// the table after that has an unlocked key and is left out, so callers
// only ever act on records whose keys they hold. lockRows also locks the
// rows themselves, so that conditional updates of other columns (results
// of processing) wait for the move and then find the record gone.
func lockAndLoad(ctx context.Context, tx pgx.Tx, table string, ids []int64, lockRows bool) (map[int64]*crawlkeeper.Record, error) {
	cols := recordCols
	if table == "archive" {
		cols = archiveCols
	}
	read := `SELECT ` + cols + ` FROM ` + table + ` WHERE id = ANY($1)`
	if lockRows {
		read += ` FOR UPDATE`
	}
	batch := &pgx.Batch{}
	// RETURNING would leave out the keys that were only locked, so the
	// keys come from a CTE that shares the INSERT's snapshot.
	batch.Queue(`WITH k AS (SELECT key FROM `+table+` WHERE id = ANY($1)),
		l AS (INSERT INTO record_keys (key) SELECT key FROM k ORDER BY key ON CONFLICT (key) DO UPDATE SET key = excluded.key WHERE false)
		SELECT key FROM k`, ids)
	batch.Queue(read, ids)
	br := tx.SendBatch(ctx, batch)
	defer br.Close()
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	locked, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	held := make(map[string]bool, len(locked))
	for _, k := range locked {
		held[dec(k)] = true
	}
	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[int64]*crawlkeeper.Record, len(ids))
	for rows.Next() {
		r, err := scanRecord(rows, table == "archive")
		if err != nil {
			return nil, err
		}
		if held[r.Key] {
			out[r.ID] = r
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, br.Close()
}

// Archive implements crawlkeeper.ArchiveStore: in one transaction, with
// the records' keys locked, each record still in the selected state is
// moved to the archive by one statement inside PostgreSQL (see move.go). A
// crash before the commit leaves nothing half-moved.
func (s *Store) Archive(ctx context.Context, moves []crawlkeeper.Move, now time.Time) ([]int64, error) {
	if len(moves) == 0 {
		return []int64{}, nil
	}
	at := crawlkeeper.Truncate(now).UnixMicro()
	var moved []int64
	err := s.inTx(ctx, "archive", func(tx pgx.Tx) error {
		var err error
		moved, err = move(ctx, tx, moves, at)
		return err
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
	err := s.inTx(ctx, "restore", func(tx pgx.Tx) error {
		restored = []int64{}
		cur, err := lockAndLoad(ctx, tx, "archive", ids, false)
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
		batch := &pgx.Batch{}
		batch.Queue(`DELETE FROM archive WHERE id = ANY($1)`, restored)
		queueInsertActive(batch, recs)
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return nil, err
	}
	return restored, nil
}

// UpdateEvents implements crawlkeeper.ArchiveStore with one conditional
// multi-row UPDATE.
func (s *Store) UpdateEvents(ctx context.Context, updates []crawlkeeper.EventUpdate) (int, error) {
	if len(updates) == 0 {
		return 0, nil
	}
	last := sqlstore.Dedupe(updates, func(u crawlkeeper.EventUpdate) sqlstore.IDVersion {
		return sqlstore.IDVersion{ID: u.ID, Version: u.Version}
	})
	n := len(last)
	id, version, event, dateErrors := make([]int64, n), make([]int64, n), make([]*int64, n), make([]*string, n)
	for i, u := range last {
		id[i], version[i] = u.ID, u.Version
		event[i], dateErrors[i] = sqlstore.Micros(u.EventAt), sqlstore.DateErrorsText(u.DateErrors)
	}
	rows, err := s.pool.Query(ctx, `UPDATE active a SET event_at = u.event_at, date_errors = u.date_errors
		FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[]) AS u(id, version, event_at, date_errors)
		WHERE a.id = u.id AND a.version = u.version
		RETURNING a.id, a.version`, id, version, event, dateErrors)
	if err != nil {
		return 0, s.wrap("update events", err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowToStructByPos[sqlstore.IDVersion])
	if err != nil {
		return 0, s.wrap("update events", err)
	}
	// Count every update that applied, as the embedded store does when it
	// runs them one by one.
	ok := make(map[sqlstore.IDVersion]bool, len(applied))
	for _, iv := range applied {
		ok[iv] = true
	}
	written := 0
	for _, u := range updates {
		if ok[sqlstore.IDVersion{ID: u.ID, Version: u.Version}] {
			written++
		}
	}
	return written, nil
}

// ArchivedBefore implements crawlkeeper.ArchiveStore.
func (s *Store) ArchivedBefore(ctx context.Context, source *string, before time.Time, afterID int64, limit int) ([]*crawlkeeper.Record, error) {
	if limit <= 0 {
		limit = crawlkeeper.DefaultBatchSize
	}
	q := `SELECT ` + archiveCols + ` FROM archive WHERE archived_at < $1 AND id > $2`
	args := []any{before.UnixMicro(), afterID}
	if source != nil {
		q += ` AND source = $4`
		args = append(args, limit, enc(*source))
	} else {
		args = append(args, limit)
	}
	q += ` ORDER BY id LIMIT $3`
	recs, err := queryRecords(ctx, s.pool, true, q, args...)
	if err != nil {
		return nil, s.wrap("archived before", err)
	}
	return recs, nil
}

// Purge implements crawlkeeper.ArchiveStore. The keys are locked first, so
// a concurrent ingest of a purged key waits and then stores a new record;
// a concurrent refresh of an archived record either commits before the
// lock (and the record is kept as changed) or waits and finds it gone.
func (s *Store) Purge(ctx context.Context, targets []crawlkeeper.RecordState) (*crawlkeeper.PurgeResult, error) {
	res := &crawlkeeper.PurgeResult{Purged: []int64{}}
	if len(targets) == 0 {
		return res, nil
	}
	ids := make([]int64, len(targets))
	for i, t := range targets {
		ids[i] = t.ID
	}
	err := s.inTx(ctx, "purge", func(tx pgx.Tx) error {
		cur, err := lockAndLoad(ctx, tx, "archive", ids, false)
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
			keys[i] = enc(cur[id].Key)
		}
		batch := &pgx.Batch{}
		batch.Queue(`DELETE FROM archive WHERE id = ANY($1)`, purge)
		batch.Queue(`DELETE FROM history WHERE record_id = ANY($1)`, purge)
		batch.Queue(`DELETE FROM record_keys WHERE key = ANY($1)`, keys)
		return tx.SendBatch(ctx, batch).Close()
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// ArchiveStats implements crawlkeeper.ArchiveStore. The median lifetime
// comes from percentile_cont, which interpolates between the two middle
// values of an even count exactly as the embedded store does.
func (s *Store) ArchiveStats(ctx context.Context, now time.Time) (map[string]*crawlkeeper.SourceStats, error) {
	out := map[string]*crawlkeeper.SourceStats{}
	get := func(src string) *crawlkeeper.SourceStats {
		src = dec(src)
		if out[src] == nil {
			out[src] = &crawlkeeper.SourceStats{}
		}
		return out[src]
	}
	rows, err := s.pool.Query(ctx, `SELECT source, percentile_cont(0.5) WITHIN GROUP (ORDER BY last_updated_at - crawled_at) FROM archive GROUP BY source`)
	if err != nil {
		return nil, s.wrap("archive stats", err)
	}
	for rows.Next() {
		var src string
		var us float64
		if err := rows.Scan(&src, &us); err != nil {
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
	rows, err = s.pool.Query(ctx, `SELECT r.source, count(*) FROM history h
		JOIN (SELECT id, source FROM active UNION ALL SELECT id, source FROM archive) r ON r.id = h.record_id
		WHERE h.valid_to >= $1 GROUP BY r.source`, since)
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
