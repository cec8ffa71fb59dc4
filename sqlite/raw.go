package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// The Raw* methods are the benchmark's baselines: the same writes and reads
// done directly with the driver on this store's schema, without
// crawlkeeper's logic (no key lookup, no merge, no compression). They are
// what `crawlkeeper bench` compares the real paths against and are not
// used otherwise.

// RawUpsert writes recs into active in one transaction with a prepared
// INSERT ... ON CONFLICT (key) DO UPDATE.
func (s *Store) RawUpsert(ctx context.Context, recs []*crawlkeeper.Record) error {
	return s.rawTx(ctx, func(w *writer) error {
		for _, r := range recs {
			args := recordArgs(r, r.Item)
			if _, err := w.exec(insertActiveSQL+` ON CONFLICT (key) DO UPDATE SET item = excluded.item, content_hash = excluded.content_hash, last_updated_at = excluded.last_updated_at, last_changed_at = excluded.last_changed_at, version = excluded.version, event_at = excluded.event_at`, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// RawTouch is the upsert of a re-crawl that changes nothing but
// last_updated_at.
func (s *Store) RawTouch(ctx context.Context, recs []*crawlkeeper.Record, now time.Time) error {
	return s.rawTx(ctx, func(w *writer) error {
		for _, r := range recs {
			args := recordArgs(r, r.Item)
			args[9] = now.UnixMicro()
			if _, err := w.exec(insertActiveSQL+` ON CONFLICT (key) DO UPDATE SET last_updated_at = excluded.last_updated_at`, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// RawChange is the upsert of changed content plus the insert of the
// previous version into history.
func (s *Store) RawChange(ctx context.Context, recs []*crawlkeeper.Record, hist []*crawlkeeper.HistoryEntry) error {
	return s.rawTx(ctx, func(w *writer) error {
		for i, r := range recs {
			args := recordArgs(r, r.Item)
			if _, err := w.exec(insertActiveSQL+` ON CONFLICT (key) DO UPDATE SET item = excluded.item, content_hash = excluded.content_hash, last_updated_at = excluded.last_updated_at, last_changed_at = excluded.last_changed_at, version = excluded.version, event_at = excluded.event_at`, args...); err != nil {
				return err
			}
			h := hist[i]
			if _, err := w.exec(`INSERT OR REPLACE INTO history (record_id, version, item, content_hash, valid_from, valid_to) VALUES (?,?,?,?,?,?)`,
				h.RecordID, h.Version, []byte(h.Item), h.ContentHash, h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro()); err != nil {
				return err
			}
		}
		return nil
	})
}

// RawSelectAge reads the rows an age rule selects (crawled_at <= cutoff);
// with indexed false SQLite is told not to use any index, as if the
// indexes had been dropped.
func (s *Store) RawSelectAge(ctx context.Context, cutoff time.Time, indexed bool) (int, error) {
	hint := " NOT INDEXED"
	if indexed {
		hint = ""
	}
	// Packed into one value, as SelectDue does, so the comparison is of
	// the engine's work and not of the driver's per-row cost.
	var packed string
	err := s.r.QueryRowContext(ctx, `SELECT coalesce(group_concat(id || ',' || version || ',' || last_updated_at, ';'), '') FROM (SELECT id, version, last_updated_at FROM active`+hint+` WHERE crawled_at <= ?)`, cutoff.UnixMicro()).Scan(&packed)
	if err != nil {
		return 0, err
	}
	rows, err := parseDue(packed)
	return len(rows), err
}

// RawMove copies rows to the archive with INSERT ... SELECT and deletes
// them from active, in one transaction.
func (s *Store) RawMove(ctx context.Context, ids []int64, now time.Time) error {
	return s.rawTx(ctx, func(w *writer) error {
		for len(ids) > 0 {
			n := min(len(ids), keyChunk)
			args := []any{now.UnixMicro()}
			for _, id := range ids[:n] {
				args = append(args, id)
			}
			in := `(?` + strings.Repeat(",?", n-1) + `)`
			if _, err := w.tx.ExecContext(ctx, `INSERT INTO archive (`+recordCols+`, item_bytes, archived_at, archive_reason) SELECT `+recordCols+`, length(item), ?, 'age' FROM active WHERE id IN `+in, args...); err != nil {
				return err
			}
			if _, err := w.tx.ExecContext(ctx, `DELETE FROM active WHERE id IN `+in, args[1:]...); err != nil {
				return err
			}
			ids = ids[n:]
		}
		return nil
	})
}

// RawKeyset reads one keyset page of active records in id order, scanning
// every column as the scanner does, and returns the count and last id.
func (s *Store) RawKeyset(ctx context.Context, afterID int64, limit int) (int, int64, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+recordCols+` FROM active WHERE id > ? ORDER BY id LIMIT ?`, afterID, limit)
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	n, last := 0, afterID
	for rows.Next() {
		var (
			id, c, u, ch, v, pv          int64
			key, kp, src, title, url, hs string
			item, derived                []byte
			ev, pa                       *int64
			de                           *string
			chain                        string
			st                           *string
		)
		if err := rows.Scan(&id, &key, &kp, &src, &title, &url, &item, &hs, &c, &u, &ch, &v, &ev, &de, &pa, &pv, &chain, &derived, &st); err != nil {
			return n, last, err
		}
		n++
		last = id
	}
	return n, last, rows.Err()
}

// RawArchiveInsert writes recs straight into the archive, uncompressed;
// the benchmark uses it to build a large archive quickly.
func (s *Store) RawArchiveInsert(ctx context.Context, recs []*crawlkeeper.Record, at time.Time) error {
	return s.rawTx(ctx, func(w *writer) error {
		for _, r := range recs {
			args := recordArgs(r, r.Item)
			args = append(args, len(r.Item), at.UnixMicro(), "age")
			if _, err := w.exec(`INSERT INTO archive (`+recordCols+`, item_bytes, archived_at, archive_reason) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args...); err != nil {
				return err
			}
		}
		if _, err := w.exec(`UPDATE meta SET value = max(value, (SELECT coalesce(max(id), 0) + 1 FROM archive)) WHERE name = 'next_id'`); err != nil {
			return err
		}
		return nil
	})
}

func (s *Store) rawTx(ctx context.Context, f func(w *writer) error) error {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	w := s.newWriter(ctx, tx)
	defer w.close()
	if err := f(w); err != nil {
		return fmt.Errorf("raw: %w", err)
	}
	w.close()
	return s.commitWrite(ctx, tx)
}

// RawAnalyze refreshes the query planner's statistics.
func (s *Store) RawAnalyze(ctx context.Context) error {
	_, err := s.w.ExecContext(ctx, `ANALYZE`)
	return err
}

// RawSyncIDs moves the id counter past every stored id.
func (s *Store) RawSyncIDs(ctx context.Context) error {
	_, err := s.w.ExecContext(ctx, `UPDATE meta SET value = max(value, (SELECT coalesce(max(id), 0) + 1 FROM active), (SELECT coalesce(max(id), 0) + 1 FROM archive)) WHERE name = 'next_id'`)
	return err
}
