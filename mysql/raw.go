package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// The Raw* methods are the benchmark's baselines: the same writes and reads
// done directly with the driver on this store's schema, without
// crawlkeeper's key locking, merge or compression. `crawlkeeper bench
// --store mysql://...` compares the real paths against them.

// rawUpsertSet uses VALUES(), deprecated in MySQL 8 but the only form
// MariaDB has; the baseline must run on both.
const rawUpsertSet = ` ON DUPLICATE KEY UPDATE item = VALUES(item), content_hash = VALUES(content_hash), last_updated_at = VALUES(last_updated_at),
	last_changed_at = VALUES(last_changed_at), version = VALUES(version), event_at = VALUES(event_at)`

func (s *Store) rawUpsert(ctx context.Context, tx *sql.Tx, recs []*crawlkeeper.Record, set string) error {
	for _, c := range chunks(recs, s.maxStatement, rowBytes) {
		args := make([]any, 0, len(c)*recordWidth)
		for _, r := range c {
			args = append(args, recordArgs(r, r.Item)...)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO active (`+recordCols+`) VALUES `+tuples(len(c), recordWidth)+set, args...); err != nil {
			return fmt.Errorf("raw upsert: %w", err)
		}
	}
	return nil
}

// RawUpsert writes recs with multi-row INSERT ... ON DUPLICATE KEY UPDATE.
func (s *Store) RawUpsert(ctx context.Context, recs []*crawlkeeper.Record) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return s.rawUpsert(ctx, tx, recs, rawUpsertSet) })
}

// RawTouch is the upsert of a re-crawl that bumps last_updated_at only.
func (s *Store) RawTouch(ctx context.Context, recs []*crawlkeeper.Record, now time.Time) error {
	touched := make([]*crawlkeeper.Record, len(recs))
	for i, r := range recs {
		c := *r
		c.LastUpdatedAt = now
		touched[i] = &c
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		return s.rawUpsert(ctx, tx, touched, ` ON DUPLICATE KEY UPDATE last_updated_at = VALUES(last_updated_at)`)
	})
}

// RawChange upserts changed content and inserts the previous versions
// into history.
func (s *Store) RawChange(ctx context.Context, recs []*crawlkeeper.Record, hist []*crawlkeeper.HistoryEntry) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if err := s.rawUpsert(ctx, tx, recs, rawUpsertSet); err != nil {
			return err
		}
		for _, c := range chunks(hist, s.maxStatement, func(h *crawlkeeper.HistoryEntry) int { return 2*len(h.Item) + 128 }) {
			args := make([]any, 0, len(c)*6)
			for _, h := range c {
				args = append(args, h.RecordID, h.Version, []byte(h.Item), h.ContentHash, h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro())
			}
			if _, err := tx.ExecContext(ctx, `INSERT IGNORE INTO history (record_id, version, item, content_hash, valid_from, valid_to) VALUES `+tuples(len(c), 6), args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// RawSelectAge reads what an age rule selects; with indexed false the
// optimizer is told to ignore the index, as if it had been dropped.
func (s *Store) RawSelectAge(ctx context.Context, cutoff time.Time, indexed bool) (int, error) {
	hint := " IGNORE INDEX (active_crawled_at)"
	if indexed {
		hint = ""
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, version, last_updated_at FROM active`+hint+` WHERE crawled_at <= ?`, cutoff.UnixMicro())
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, v, u int64
		if err := rows.Scan(&id, &v, &u); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// RawMove copies rows to the archive with INSERT ... SELECT and deletes
// them from active, in one transaction.
func (s *Store) RawMove(ctx context.Context, ids []int64, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for len(ids) > 0 {
			n := min(len(ids), maxRows)
			args := append([]any{now.UnixMicro()}, int64s(ids[:n])...)
			if _, err := tx.ExecContext(ctx, `INSERT INTO archive (`+recordCols+`, item_bytes, archived_at, archive_reason)
				SELECT `+recordCols+`, length(item), ?, 'age' FROM active WHERE id IN (`+list(n)+`)`, args...); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM active WHERE id IN (`+list(n)+`)`, args[1:]...); err != nil {
				return err
			}
			ids = ids[n:]
		}
		return nil
	})
}

// RawKeyset reads one keyset page of active records in id order, every
// column, and returns the count and last id.
func (s *Store) RawKeyset(ctx context.Context, afterID int64, limit int) (int, int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+recordCols+` FROM active WHERE id > ? ORDER BY id LIMIT ?`, afterID, limit)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	n, last := 0, afterID
	vals := make([]any, recordWidth)
	ptrs := make([]any, recordWidth)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, last, err
		}
		if id, ok := vals[0].(int64); ok {
			last = id
		}
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
	return s.tx(ctx, func(tx *sql.Tx) error { return s.insertArchive(ctx, tx, recs, at, reasons) })
}

// RawAnalyze refreshes the optimizer's statistics of the record tables.
func (s *Store) RawAnalyze(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, `ANALYZE TABLE active, archive, history`)
	if err != nil {
		return err
	}
	return rows.Close()
}

// RawSyncIDs moves the id counter past every stored id.
func (s *Store) RawSyncIDs(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `UPDATE meta SET value = GREATEST(value, (SELECT coalesce(max(id), 0) + 1 FROM active), (SELECT coalesce(max(id), 0) + 1 FROM archive)) WHERE name = 'next_id'`)
	return err
}
