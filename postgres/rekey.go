package postgres

import (
	"context"
	"slices"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/jackc/pgx/v5"
)

var _ crawlkeeper.RekeyStore = (*Store)(nil)

func tableOf(archived bool) string {
	if archived {
		return "archive"
	}
	return "active"
}

// lockRekeyKeys locks the old and new keys of a rekey step in record_keys,
// in key order as ingest does, and returns the new keys held by a record
// outside ids (active or archived: a key is unique across both, which no
// single index enforces). Such a key was taken by a delivery after the
// step was decided; the step leaves it alone and the next run decides
// again.
func lockRekeyKeys(ctx context.Context, tx pgx.Tx, oldKeys, newKeys []string, ids []int64) (map[string]bool, error) {
	keys := encAll(append(slices.Clone(oldKeys), newKeys...))
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if _, err := tx.Exec(ctx, lockKeysSQL, keys); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT key FROM (SELECT id, key FROM active WHERE key = ANY($1) UNION ALL SELECT id, key FROM archive WHERE key = ANY($1)) k
		WHERE NOT (id = ANY($2))`, encAll(newKeys), ids)
	if err != nil {
		return nil, err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	held := map[string]bool{}
	for _, k := range found {
		held[dec(k)] = true
	}
	return held, nil
}

// RewriteKeys implements crawlkeeper.RekeyStore: one transaction that
// locks the keys involved and updates each record only in the state it
// was read in.
func (s *Store) RewriteKeys(ctx context.Context, changes []crawlkeeper.KeyChange) ([]int64, error) {
	done := []int64{}
	if len(changes) == 0 {
		return done, nil
	}
	err := s.inTx(ctx, "rewrite keys", func(tx pgx.Tx) error {
		done = done[:0]
		ids := make([]int64, len(changes))
		var oldKeys, newKeys []string
		for i, c := range changes {
			ids[i] = c.State.ID
			newKeys = append(newKeys, c.Key)
		}
		rows, err := tx.Query(ctx, `SELECT key FROM active WHERE id = ANY($1) UNION ALL SELECT key FROM archive WHERE id = ANY($1)`, ids)
		if err != nil {
			return err
		}
		stored, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, k := range stored {
			oldKeys = append(oldKeys, dec(k))
		}
		held, err := lockRekeyKeys(ctx, tx, oldKeys, newKeys, ids)
		if err != nil {
			return err
		}
		for _, c := range changes {
			if held[c.Key] {
				continue
			}
			tag, err := tx.Exec(ctx, `UPDATE `+tableOf(c.Archived)+` SET key = $1, key_parts = $2 WHERE id = $3 AND version = $4 AND last_updated_at = $5`,
				enc(c.Key), sqlstore.KeyPartsText(c.KeyParts), c.State.ID, c.State.Version, c.State.LastUpdatedAt.UnixMicro())
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
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
	err := s.inTx(ctx, "merge", func(tx pgx.Tx) error {
		var oldKeys, newKeys []string
		var ids []int64
		for _, m := range ms {
			for _, f := range m.From {
				oldKeys = append(oldKeys, f.Key)
			}
			newKeys = append(newKeys, m.Survivor.Key)
			ids = append(ids, m.IDs()...)
		}
		held, err := lockRekeyKeys(ctx, tx, oldKeys, newKeys, ids)
		if err != nil {
			return err
		}
		for i, m := range ms {
			if held[m.Survivor.Key] {
				continue
			}
			ok, err := mergeOne(ctx, tx, m)
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
func mergeOne(ctx context.Context, tx pgx.Tx, m *crawlkeeper.RekeyMerge) (bool, error) {
	applied := false
	err := func() error {
		ids := m.IDs()
		type state struct {
			archived         bool
			version, updated int64
		}
		cur := map[int64]state{}
		rows, err := tx.Query(ctx, `SELECT id, false, version, last_updated_at FROM active WHERE id = ANY($1) FOR UPDATE`, ids)
		if err != nil {
			return err
		}
		collect := func(rows pgx.Rows) error {
			defer rows.Close()
			for rows.Next() {
				var id int64
				var st state
				if err := rows.Scan(&id, &st.archived, &st.version, &st.updated); err != nil {
					return err
				}
				cur[id] = st
			}
			return rows.Err()
		}
		if err := collect(rows); err != nil {
			return err
		}
		if rows, err = tx.Query(ctx, `SELECT id, true, version, last_updated_at FROM archive WHERE id = ANY($1) FOR UPDATE`, ids); err != nil {
			return err
		}
		if err := collect(rows); err != nil {
			return err
		}
		if !m.Holds(func(id int64) (bool, int64, time.Time, bool) {
			st, ok := cur[id]
			return st.archived, st.version, crawlkeeper.MicrosTime(st.updated), ok
		}) {
			return nil
		}
		batch := &pgx.Batch{}
		batch.Queue(`DELETE FROM history WHERE record_id = ANY($1)`, ids)
		batch.Queue(`DELETE FROM active WHERE id = ANY($1)`, ids)
		batch.Queue(`DELETE FROM archive WHERE id = ANY($1)`, ids)
		r := m.Survivor
		if r.Archived() {
			queueInsertArchive(batch, []*crawlkeeper.Record{r}, *r.ArchivedAt, []crawlkeeper.ArchiveReason{r.ArchiveReason})
		} else {
			queueInsertActive(batch, []*crawlkeeper.Record{r})
		}
		for _, h := range m.History {
			batch.Queue(`INSERT INTO history (record_id, version, item, content_hash, valid_from, valid_to) VALUES ($1, $2, $3, $4, $5, $6)`,
				h.RecordID, h.Version, []byte(h.Item), h.ContentHash, h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro())
		}
		batch.Queue(`INSERT INTO journal (kind, at, body) VALUES ($1, $2, $3)`, crawlkeeper.RekeyJournal, m.At.UnixMicro(), []byte(m.JournalBody()))
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return err
		}
		applied = true
		return nil
	}()
	return applied, err
}
