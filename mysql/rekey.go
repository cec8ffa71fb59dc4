package mysql

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
)

var _ crawlkeeper.RekeyStore = (*Store)(nil)

func tableOf(archived bool) string {
	if archived {
		return "archive"
	}
	return "active"
}

// lockRekeyKeys locks the old and new keys of a rekey step in record_keys
// (in key order, as ingest does) and returns the new keys held by a
// record outside ids, active or archived: a key is unique across both
// tables, which no single index enforces. Such a key was taken by a
// delivery after the step was decided; the step leaves it alone and the
// next run decides again.
func (s *Store) lockRekeyKeys(ctx context.Context, tx *sql.Tx, oldKeys, newKeys []string, ids []int64) (map[string]bool, error) {
	keys := append(slices.Clone(oldKeys), newKeys...)
	slices.Sort(keys)
	if err := (engine{s}).LockKeys(ctx, sqlstore.SQL(tx), slices.Compact(keys)); err != nil {
		return nil, err
	}
	args := append(strs(newKeys), int64s(ids)...)
	args = append(args, strs(newKeys)...)
	args = append(args, int64s(ids)...)
	rows, err := tx.QueryContext(ctx, "SELECT `key` FROM active WHERE `key` IN ("+list(len(newKeys))+") AND id NOT IN ("+list(len(ids))+
		") UNION ALL SELECT `key` FROM archive WHERE `key` IN ("+list(len(newKeys))+") AND id NOT IN ("+list(len(ids))+")", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	held := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		held[k] = true
	}
	return held, rows.Err()
}

// storedKeys returns the keys of the records with ids, active or archived.
func storedKeys(ctx context.Context, tx *sql.Tx, ids []int64) ([]string, error) {
	args := append(int64s(ids), int64s(ids)...)
	rows, err := tx.QueryContext(ctx, "SELECT `key` FROM active WHERE id IN ("+list(len(ids))+") UNION ALL SELECT `key` FROM archive WHERE id IN ("+list(len(ids))+")", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RewriteKeys implements crawlkeeper.RekeyStore: one transaction that
// locks the keys involved and updates each record only in the state it
// was read in.
func (s *Store) RewriteKeys(ctx context.Context, changes []crawlkeeper.KeyChange) ([]int64, error) {
	done := []int64{}
	if len(changes) == 0 {
		return done, nil
	}
	err := s.inTx(ctx, "rewrite keys", func(tx *sql.Tx) error {
		done = done[:0]
		ids := make([]int64, len(changes))
		newKeys := make([]string, len(changes))
		for i, c := range changes {
			ids[i], newKeys[i] = c.State.ID, c.Key
		}
		oldKeys, err := storedKeys(ctx, tx, ids)
		if err != nil {
			return err
		}
		held, err := s.lockRekeyKeys(ctx, tx, oldKeys, newKeys, ids)
		if err != nil {
			return err
		}
		for _, c := range changes {
			if held[c.Key] {
				continue
			}
			res, err := tx.ExecContext(ctx, "UPDATE "+tableOf(c.Archived)+" SET `key` = ?, key_parts = ? WHERE id = ? AND version = ? AND last_updated_at = ?",
				c.Key, sqlstore.KeyPartsText(c.KeyParts), c.State.ID, c.State.Version, c.State.LastUpdatedAt.UnixMicro())
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 1 {
				done = append(done, c.State.ID)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return done, nil
}

// MergeRecords implements crawlkeeper.RekeyStore in one transaction: the
// keys of every group are locked, the records read and locked, and each
// group still in the state its merge was decided on is replaced by the
// survivor and its merged history, and the merge journaled.
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
	err := s.inTx(ctx, "merge", func(tx *sql.Tx) error {
		var oldKeys, newKeys []string
		var ids []int64
		for _, m := range ms {
			for _, f := range m.From {
				oldKeys = append(oldKeys, f.Key)
			}
			newKeys = append(newKeys, m.Survivor.Key)
			ids = append(ids, m.IDs()...)
		}
		held, err := s.lockRekeyKeys(ctx, tx, oldKeys, newKeys, ids)
		if err != nil {
			return err
		}
		for i, m := range ms {
			if held[m.Survivor.Key] {
				continue
			}
			ok, err := s.mergeOne(ctx, tx, m)
			if err != nil {
				return err
			}
			applied[i] = ok
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// mergeOne applies one merge in tx, whose keys are locked, when its group
// is still in the state it was decided on.
func (s *Store) mergeOne(ctx context.Context, tx *sql.Tx, m *crawlkeeper.RekeyMerge) (bool, error) {
	applied := false
	err := func() error {
		ids := m.IDs()
		type state struct {
			archived         bool
			version, updated int64
		}
		cur := map[int64]state{}
		for _, archived := range []bool{false, true} {
			rows, err := tx.QueryContext(ctx, `SELECT id, version, last_updated_at FROM `+tableOf(archived)+` WHERE id IN (`+list(len(ids))+`) FOR UPDATE`, int64s(ids)...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id int64
				st := state{archived: archived}
				if err := rows.Scan(&id, &st.version, &st.updated); err != nil {
					rows.Close()
					return err
				}
				cur[id] = st
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		if !m.Holds(func(id int64) (bool, int64, time.Time, bool) {
			st, ok := cur[id]
			return st.archived, st.version, crawlkeeper.MicrosTime(st.updated), ok
		}) {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM history WHERE record_id IN (`+list(len(ids))+`)`, int64s(ids)...); err != nil {
			return err
		}
		for _, table := range []string{"active", "archive"} {
			if err := deleteIDs(ctx, tx, table, ids); err != nil {
				return err
			}
		}
		r := m.Survivor
		var err error
		if r.Archived() {
			err = s.insertArchive(ctx, tx, []*crawlkeeper.Record{r}, *r.ArchivedAt, []crawlkeeper.ArchiveReason{r.ArchiveReason})
		} else {
			err = s.insertActive(ctx, tx, []*crawlkeeper.Record{r})
		}
		if err != nil {
			return err
		}
		hist := make([]*crawlkeeper.HistoryEntry, len(m.History))
		for i := range m.History {
			hist[i] = &m.History[i]
		}
		if err := s.writeHistory(ctx, tx, hist, nil); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO journal (kind, at, body) VALUES (?, ?, ?)`, crawlkeeper.RekeyJournal, m.At.UnixMicro(), []byte(m.JournalBody())); err != nil {
			return err
		}
		applied = true
		return nil
	}()
	return applied, err
}
