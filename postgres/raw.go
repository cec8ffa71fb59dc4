package postgres

import (
	"context"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/jackc/pgx/v5"
)

// The Raw* methods are the benchmark's baselines: the same writes and reads
// done directly with pgx on this store's schema, without crawlkeeper's key
// locking, merge or compression. `crawlkeeper bench --store postgres://...`
// compares the real paths against them; nothing else uses them.

const unnestRecord = `SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[], $8::text[], $9::bigint[],
	$10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::bigint[], $16::bigint[], $17::text[], $18::bytea[],
	$19::text[], $20::text[])`

func (s *Store) rawBatch(ctx context.Context, queue func(b *pgx.Batch)) error {
	b := &pgx.Batch{}
	queue(b)
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
}

// RawUpsert writes recs with one multi-row INSERT ... ON CONFLICT per chunk.
func (s *Store) RawUpsert(ctx context.Context, recs []*crawlkeeper.Record) error {
	return s.rawBatch(ctx, func(b *pgx.Batch) {
		for _, c := range chunks(recs, recordBytes) {
			b.Queue(`INSERT INTO active (`+recordCols+`) `+unnestRecord+` ON CONFLICT (key) DO UPDATE SET item = excluded.item,
				content_hash = excluded.content_hash, last_updated_at = excluded.last_updated_at, last_changed_at = excluded.last_changed_at,
				version = excluded.version, event_at = excluded.event_at`, newRecordArrays(c, false).args()...)
		}
	})
}

// RawTouch is the upsert of a re-crawl that bumps last_updated_at only.
func (s *Store) RawTouch(ctx context.Context, recs []*crawlkeeper.Record, now time.Time) error {
	return s.rawBatch(ctx, func(b *pgx.Batch) {
		for _, c := range chunks(recs, recordBytes) {
			a := newRecordArrays(c, false)
			for i := range a.lastUpdated {
				a.lastUpdated[i] = now.UnixMicro()
			}
			b.Queue(`INSERT INTO active (`+recordCols+`) `+unnestRecord+` ON CONFLICT (key) DO UPDATE SET last_updated_at = excluded.last_updated_at`, a.args()...)
		}
	})
}

// RawChange upserts changed content and inserts the previous versions
// into history.
func (s *Store) RawChange(ctx context.Context, recs []*crawlkeeper.Record, hist []*crawlkeeper.HistoryEntry) error {
	return s.rawBatch(ctx, func(b *pgx.Batch) {
		for _, c := range chunks(recs, recordBytes) {
			b.Queue(`INSERT INTO active (`+recordCols+`) `+unnestRecord+` ON CONFLICT (key) DO UPDATE SET item = excluded.item,
				content_hash = excluded.content_hash, last_updated_at = excluded.last_updated_at, last_changed_at = excluded.last_changed_at,
				version = excluded.version, event_at = excluded.event_at`, newRecordArrays(c, false).args()...)
		}
		for _, c := range chunks(hist, func(h *crawlkeeper.HistoryEntry) int { return len(h.Item) + 128 }) {
			n := len(c)
			id, ver, from, to := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
			item, hash := make([][]byte, n), make([]string, n)
			for i, h := range c {
				id[i], ver[i], item[i], hash[i], from[i], to[i] = h.RecordID, h.Version, h.Item, h.ContentHash, h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro()
			}
			b.Queue(`INSERT INTO history (record_id, version, item, content_hash, valid_from, valid_to)
				SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bytea[], $4::text[], $5::bigint[], $6::bigint[])
				ON CONFLICT DO NOTHING`, id, ver, item, hash, from, to)
		}
	})
}

// RawSelectAge reads what an age rule selects; with indexed false the
// planner is told not to use indexes, as if they had been dropped.
func (s *Store) RawSelectAge(ctx context.Context, cutoff time.Time, indexed bool) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if !indexed {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_indexonlyscan = off`); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, `SELECT id, version, last_updated_at FROM active WHERE crawled_at <= $1`, cutoff.UnixMicro())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, v, u int64
			if err := rows.Scan(&id, &v, &u); err != nil {
				return err
			}
			n++
		}
		return rows.Err()
	})
	return n, err
}

// RawMove copies rows to the archive with INSERT ... SELECT and deletes
// them from active, in one transaction.
func (s *Store) RawMove(ctx context.Context, ids []int64, now time.Time) error {
	return s.rawBatch(ctx, func(b *pgx.Batch) {
		b.Queue(`INSERT INTO archive (`+recordCols+`, item_bytes, archived_at, archive_reason)
			SELECT `+recordCols+`, length(item), $2, 'age' FROM active WHERE id = ANY($1)`, ids, now.UnixMicro())
		b.Queue(`DELETE FROM active WHERE id = ANY($1)`, ids)
	})
}

// RawKeyset reads one keyset page of active records in id order, every
// column, and returns the count and last id.
func (s *Store) RawKeyset(ctx context.Context, afterID int64, limit int) (int, int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+recordCols+` FROM active WHERE id > $1 ORDER BY id LIMIT $2`, afterID, limit)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	n, last := 0, afterID
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return n, last, err
		}
		last = vals[0].(int64)
		n++
	}
	return n, last, rows.Err()
}

// RawArchiveInsert writes recs straight into the archive, for building a
// large archive quickly.
func (s *Store) RawArchiveInsert(ctx context.Context, recs []*crawlkeeper.Record, at time.Time) error {
	reasons := make([]crawlkeeper.ArchiveReason, len(recs))
	for i := range reasons {
		reasons[i] = crawlkeeper.ReasonAge
	}
	return s.rawBatch(ctx, func(b *pgx.Batch) { queueInsertArchive(b, recs, at, reasons) })
}

// RawAnalyze vacuums and analyzes the record tables, as autovacuum would
// after a bulk load: it sets the visibility map that index-only scans need
// and refreshes the planner's statistics.
func (s *Store) RawAnalyze(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `VACUUM ANALYZE active, archive, history`)
	return err
}

// RawSyncIDs moves the id sequence past every stored id.
func (s *Store) RawSyncIDs(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `SELECT setval('record_ids', greatest((SELECT coalesce(max(id), 0) FROM active), (SELECT coalesce(max(id), 0) FROM archive), 1))`)
	return err
}
