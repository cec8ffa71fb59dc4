package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

var _ crawlkeeper.RekeyStore = (*Store)(nil)

func tableOf(archived bool) string {
	if archived {
		return "archive"
	}
	return "active"
}

// RewriteKeys implements crawlkeeper.RekeyStore: one transaction, each
// update conditioned on the version and last_updated_at it was read with.
func (s *Store) RewriteKeys(ctx context.Context, changes []crawlkeeper.KeyChange) ([]int64, error) {
	done := []int64{}
	if len(changes) == 0 {
		return done, nil
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("rewrite keys: begin: %w", err)
	}
	defer tx.Rollback()
	w := s.newWriter(ctx, tx)
	defer w.close()
	for _, c := range changes {
		if held, err := keyHeld(ctx, tx, c.Key, []int64{c.State.ID}); err != nil {
			return nil, fmt.Errorf("rewrite keys: %w", err)
		} else if held {
			continue
		}
		res, err := w.exec(`UPDATE `+tableOf(c.Archived)+` SET key = ?, key_parts = ? WHERE id = ? AND version = ? AND last_updated_at = ?`,
			c.Key, keyPartsText(c.KeyParts), c.State.ID, c.State.Version, c.State.LastUpdatedAt.UnixMicro())
		if err != nil {
			return nil, keyConflict("rewrite key of record "+fmt.Sprint(c.State.ID), err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			done = append(done, c.State.ID)
		}
	}
	w.close()
	if err := s.commitWrite(ctx, tx); err != nil {
		return nil, fmt.Errorf("rewrite keys: commit: %w", err)
	}
	return done, nil
}

// keyHeld reports whether a record other than ids holds key, active or
// archived: a key is unique across both tables, which no single index
// enforces. Such a key was taken by a delivery after the rekey step was
// decided; the step leaves it alone and the next run decides again. The
// write transaction is SQLite's only writer, so the answer holds until it
// commits.
func keyHeld(ctx context.Context, tx *sql.Tx, key string, ids []int64) (bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM active WHERE key = ? UNION ALL SELECT id FROM archive WHERE key = ?`, key, key)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return false, err
		}
		if !slices.Contains(ids, id) {
			return true, nil
		}
	}
	return false, rows.Err()
}

// keyConflict maps a unique-key violation to ECONFLICT.
func keyConflict(what string, err error) error {
	if strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return &crawlkeeper.Error{Code: crawlkeeper.ECONFLICT, Message: what + ": another record took the key meanwhile; run again", Err: err}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// MergeRecords implements crawlkeeper.RekeyStore: the states are read and
// every write of every merge made in one transaction, so a crash leaves
// each group as it was or merged, never half merged.
func (s *Store) MergeRecords(ctx context.Context, ms []*crawlkeeper.RekeyMerge) ([]bool, error) {
	applied := make([]bool, len(ms))
	if len(ms) == 0 {
		return applied, nil
	}
	for _, m := range ms {
		if err := m.Validate(); err != nil {
			return nil, err
		}
	}
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, fmt.Errorf("merge: begin: %w", err)
	}
	defer tx.Rollback()
	w := s.newWriter(ctx, tx)
	defer w.close()
	for i, m := range ms {
		if applied[i], err = s.mergeOne(ctx, tx, w, m); err != nil {
			return nil, err
		}
	}
	w.close()
	if err := s.commitWrite(ctx, tx); err != nil {
		return nil, fmt.Errorf("merge: commit: %w", err)
	}
	return applied, nil
}

// mergeOne applies one merge in tx when its group is still in the state
// it was decided on.
func (s *Store) mergeOne(ctx context.Context, tx *sql.Tx, w *writer, m *crawlkeeper.RekeyMerge) (bool, error) {
	var err error
	ids := m.IDs()
	type state struct {
		archived         bool
		version, updated int64
	}
	cur := map[int64]state{}
	for _, archived := range []bool{false, true} {
		for _, id := range ids {
			var st state
			err := tx.QueryRowContext(ctx, `SELECT version, last_updated_at FROM `+tableOf(archived)+` WHERE id = ?`, id).Scan(&st.version, &st.updated)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return false, fmt.Errorf("merge: %w", err)
			}
			st.archived = archived
			cur[id] = st
		}
	}
	if !m.Holds(func(id int64) (bool, int64, time.Time, bool) {
		st, ok := cur[id]
		return st.archived, st.version, crawlkeeper.MicrosTime(st.updated), ok
	}) {
		return false, nil
	}
	if held, err := keyHeld(ctx, tx, m.Survivor.Key, ids); err != nil || held {
		return false, err
	}
	for _, id := range ids {
		for _, q := range []string{`DELETE FROM history WHERE record_id = ?`, `DELETE FROM active WHERE id = ?`, `DELETE FROM archive WHERE id = ?`} {
			if _, err := w.exec(q, id); err != nil {
				return false, fmt.Errorf("merge %d: %w", m.Survivor.ID, err)
			}
		}
	}
	r := m.Survivor
	if r.Archived() {
		err = w.insertArchive(r, *r.ArchivedAt, r.ArchiveReason)
	} else {
		err = w.insertActive(r)
	}
	if err != nil {
		return false, keyConflict(fmt.Sprintf("merge into record %d", r.ID), err)
	}
	for _, h := range m.History {
		if _, err := w.exec(`INSERT INTO history (record_id, version, item, content_hash, valid_from, valid_to) VALUES (?,?,?,?,?,?)`,
			h.RecordID, h.Version, []byte(h.Item), h.ContentHash, h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro()); err != nil {
			return false, fmt.Errorf("merge %d: history: %w", r.ID, err)
		}
	}
	if _, err := w.exec(`INSERT INTO journal (kind, at, body) VALUES (?, ?, ?)`, crawlkeeper.RekeyJournal, m.At.UnixMicro(), []byte(m.JournalBody())); err != nil {
		return false, fmt.Errorf("merge %d: journal: %w", r.ID, err)
	}
	return true, nil
}
