package sqlstore

import (
	"context"
	"slices"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

var _ crawlkeeper.RekeyStore = (*Store)(nil)

// lockRekeyKeys locks the old and new keys of a rekey step (as ingest
// locks keys) and returns the new keys held by a record outside ids,
// active or archived: a key is unique across both tables, which no single
// index enforces. Such a key was taken by a delivery after the step was
// decided; the step leaves it alone and the next run decides again.
func (s *Store) lockRekeyKeys(ctx context.Context, tx Querier, oldKeys, newKeys []string, ids []int64) (map[string]bool, error) {
	keys := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(oldKeys), newKeys...))))
	if err := s.e.LockKeys(ctx, tx, keys); err != nil {
		return nil, err
	}
	held := map[string]bool{}
	err := Chunks(newKeys, func(c []string) error {
		args := append(Args(c), Args(ids)...)
		found, err := Collect[string](tx.Query(ctx, "SELECT `key` FROM active WHERE `key` IN ("+In(len(c))+") AND id NOT IN ("+In(len(ids))+
			") UNION ALL SELECT `key` FROM archive WHERE `key` IN ("+In(len(c))+") AND id NOT IN ("+In(len(ids))+")", append(args, args...)...))
		for _, k := range found {
			held[k] = true
		}
		return err
	})
	return held, err
}

// storedState is a record's state as a rekey step checks it.
type storedState struct {
	crawlkeeper.MergeSource
	// dateErrors is set when the record has date errors.
	dateErrors bool
}

// states reads the table, version, last_updated_at, key, source and date
// errors of the records with ids, row-locked.
func (s *Store) states(ctx context.Context, tx Querier, ids []int64) (map[int64]storedState, error) {
	out := make(map[int64]storedState, len(ids))
	for _, archived := range []bool{false, true} {
		err := Chunks(ids, func(c []int64) error {
			return EachRow(ctx, tx, func(rows Rows) error {
				var st storedState
				var updated int64
				err := rows.Scan(&st.State.ID, &st.State.Version, &updated, &st.Key, &st.Source, &st.dateErrors)
				st.State.LastUpdatedAt, st.Archived = crawlkeeper.MicrosTime(updated), archived
				out[st.State.ID] = st
				return err
			}, "SELECT id, version, last_updated_at, `key`, source, date_errors IS NOT NULL FROM "+table(archived)+` WHERE id IN (`+In(len(c))+`)`+s.e.ForUpdate(), Args(c)...)
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RewriteKeys implements crawlkeeper.RekeyStore: one transaction that
// locks the keys involved and rewrites each record only in the state it
// was read in and while no other record holds its new key.
func (s *Store) RewriteKeys(ctx context.Context, changes []crawlkeeper.KeyChange) ([]int64, error) {
	done := []int64{}
	if len(changes) == 0 {
		return done, nil
	}
	err := s.e.Write(ctx, "rewrite keys", func(tx Querier) error {
		done = done[:0]
		ids := Map(changes, func(c crawlkeeper.KeyChange) int64 { return c.State.ID })
		newKeys := Map(changes, func(c crawlkeeper.KeyChange) string { return c.Key })
		cur, err := s.states(ctx, tx, ids)
		if err != nil {
			return err
		}
		var oldKeys []string
		for _, st := range cur {
			oldKeys = append(oldKeys, st.Key)
		}
		held, err := s.lockRekeyKeys(ctx, tx, oldKeys, newKeys, ids)
		if err != nil {
			return err
		}
		rows := map[bool][][]any{}
		for _, c := range changes {
			st, ok := cur[c.State.ID]
			if !ok || held[c.Key] || st.Archived != c.Archived || !c.State.Holds(st.State.Version, st.State.LastUpdatedAt) {
				continue
			}
			rows[c.Archived] = append(rows[c.Archived], []any{c.State.ID, c.Key, KeyParts(c.KeyParts)})
			done = append(done, c.State.ID)
		}
		for archived, rs := range rows {
			if _, err := s.e.Update(ctx, tx, table(archived), []string{"id"}, []string{"`key`", "key_parts"}, rs); err != nil {
				return err
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
// group still in the state its merge was decided on, whose key no record
// outside the group holds, is replaced by the survivor and its merged
// history, and the merge journaled.
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
	err := s.e.Write(ctx, "merge", func(tx Querier) error {
		var oldKeys, newKeys []string
		var ids []int64
		for i, m := range ms {
			applied[i] = false
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
		cur, err := s.states(ctx, tx, ids)
		if err != nil {
			return err
		}
		errs := crawlkeeper.DateErrorCounts{}
		for i, m := range ms {
			if held[m.Survivor.Key] || !m.Holds(func(id int64) (bool, int64, time.Time, bool) {
				st, ok := cur[id]
				return st.Archived, st.State.Version, st.State.LastUpdatedAt, ok
			}) {
				continue
			}
			if err := s.mergeOne(ctx, tx, m); err != nil {
				return err
			}
			applied[i] = true
			for _, id := range m.IDs() {
				if st := cur[id]; !st.Archived && st.dateErrors {
					errs.AddSource(st.Source, -1)
				}
			}
			errs.Add(m.Survivor, 1)
		}
		return s.countDateErrors(ctx, tx, errs.List())
	})
	if err != nil {
		return nil, err
	}
	return applied, nil
}

// mergeOne replaces a group by its survivor and merged history, and
// journals the merge.
func (s *Store) mergeOne(ctx context.Context, tx Querier, m *crawlkeeper.RekeyMerge) error {
	ids := m.IDs()
	if _, err := tx.Exec(ctx, `DELETE FROM history WHERE record_id IN (`+In(len(ids))+`)`, Args(ids)...); err != nil {
		return err
	}
	for _, t := range []string{"active", "archive"} {
		if err := s.deleteIDs(ctx, tx, t, ids); err != nil {
			return err
		}
	}
	r := m.Survivor
	var reasons []crawlkeeper.ArchiveReason
	var at time.Time
	if r.Archived() {
		reasons, at = []crawlkeeper.ArchiveReason{r.ArchiveReason}, *r.ArchivedAt
	}
	if err := s.insertRecords(ctx, tx, []*crawlkeeper.Record{r}, reasons, at); err != nil {
		return err
	}
	hist := make([]*crawlkeeper.HistoryEntry, len(m.History))
	for i := range m.History {
		hist[i] = &m.History[i]
	}
	if err := s.writeHistory(ctx, tx, hist); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO journal (kind, at, body) VALUES (?, ?, ?)`, crawlkeeper.RekeyJournal, m.At.UnixMicro(), []byte(m.JournalBody()))
	return err
}
