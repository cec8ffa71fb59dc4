package sqlstore

import (
	"cmp"
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

// Keys is what an engine does so that a dedup key is in at most one of the
// active and archive tables, also while several processes ingest, archive
// and restore at once. On the server engines a table, record_keys, holds
// one row per stored key and serves as the lock of that key: every
// transaction that inserts a
// record or moves one between the tables first inserts its missing keys
// and row-locks the existing ones, in key order (so two batches wait for
// each other instead of deadlocking). A process ingesting a key that
// another is inserting waits on the primary key until the other commits,
// then takes the lock of the committed row. Only after the lock does the
// transaction read the records of its keys, so its decision (insert,
// update, revive, move) is made on the current state and holds until it
// commits. The unique indexes on active.key and archive.key stay as a
// second line of defence. Writes that do not move records (processing
// results, event re-reads) lock the rows they change and check the
// record's version instead.
type Keys interface {
	// LockKeys locks keys (sorted, see above) until the transaction ends,
	// also keys no record holds yet. An engine with one writer at a time
	// does nothing.
	LockKeys(ctx context.Context, tx Querier, keys []string) error
	// TakeIDs reserves n new record ids, in increasing order; an id is
	// never handed out twice.
	TakeIDs(ctx context.Context, tx Querier, n int) ([]int64, error)
	// NextIDQuery reads the id the next new record gets, without taking
	// it.
	NextIDQuery() string
	// ReleaseKeys releases the locks of keys no record holds any more
	// (purged), where the engine keeps one per key.
	ReleaseKeys(ctx context.Context, tx Querier, keys []string) error
	// Increment adds to the per-source counters of table, whose key is
	// (source, shard) and whose other columns are counters: each row is a
	// source and the amounts to add to counters. Rows come in source
	// order, the order every writer locks them in; an engine with several
	// writers spreads them over shards.
	Increment(ctx context.Context, tx Querier, table string, counters []string, rows [][]any) error
}

// CounterShard picks the row of a source's counters that an Increment on a
// server engine adds to, one of 8 (see migrations/014_deliveries.sql):
// concurrent ingests of one source rarely wait for each other's row lock,
// and readers add the rows up.
func CounterShard() int { return rand.IntN(8) }

// Ingest implements crawlkeeper.Store: the whole batch is one
// transaction. The keys are locked, the records of the batch's keys read
// with a few IN (...) queries, crawlkeeper.PlanIngest decides each item,
// and each kind of write is a Bulk write, so a batch costs a handful of
// statements whatever its size.
func (s *Store) Ingest(ctx context.Context, b *crawlkeeper.IngestBatch) (*crawlkeeper.IngestResult, error) {
	if len(b.Items) == 0 {
		return &crawlkeeper.IngestResult{Outcomes: []crawlkeeper.Outcome{}, IDs: []int64{}}, nil
	}
	var res *crawlkeeper.IngestResult
	var marked func()
	err := s.e.Write(ctx, "ingest", func(tx Querier) error {
		marked = nil // an aborted attempt's marks never committed
		keys := crawlkeeper.DistinctKeys(b.Items)
		if err := s.e.LockKeys(ctx, tx, slices.Sorted(slices.Values(keys))); err != nil {
			return err
		}
		state, err := s.loadByKeys(ctx, tx, keys, b.Items)
		if err != nil {
			return err
		}
		var ids []int64
		if n := crawlkeeper.NewKeyCount(b.Items, state); n > 0 {
			if ids, err = s.e.TakeIDs(ctx, tx, n); err != nil {
				return err
			}
		}
		w, r := crawlkeeper.PlanIngest(b, state, ids)
		if err := s.applyIngest(ctx, tx, w, state); err != nil {
			return err
		}
		res = r
		marked, err = s.writeMarks(ctx, tx, b.Marks)
		return err
	})
	if err != nil {
		return nil, err
	}
	if marked != nil {
		marked()
		res.MarksWritten = true
	}
	return res, nil
}

// loadByKeys returns the stored state of every key: active records
// without their payloads (narrowCols) and the payloads of those an item of
// the batch changes, then the archived records of the keys not active,
// whole (a revived record is rewritten whole).
func (s *Store) loadByKeys(ctx context.Context, tx Querier, keys []string, items []*crawlkeeper.Prepared) (map[string]*crawlkeeper.Record, error) {
	state := make(map[string]*crawlkeeper.Record, len(keys))
	load := func(keys []string, archived bool) error {
		cols := s.narrow
		if archived {
			cols = s.archiveCols
		}
		return Chunks(keys, func(c []string) error {
			recs, err := s.queryRecords(ctx, tx, archived, `SELECT `+cols+` FROM `+table(archived)+" WHERE `key` IN ("+In(len(c))+`)`, Args(c)...)
			for _, r := range recs {
				state[r.Key] = r
			}
			return err
		})
	}
	if err := load(keys, false); err != nil {
		return nil, err
	}
	if err := load(slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return state[k] != nil }), true); err != nil {
		return nil, err
	}
	changed := map[int64]*crawlkeeper.Record{}
	for _, it := range items {
		if r := state[it.Key]; r != nil && !r.Archived() && r.ContentHash != it.ContentHash {
			changed[r.ID] = r
		}
	}
	err := Chunks(slices.Collect(maps.Keys(changed)), func(c []int64) error {
		return EachRow(ctx, tx, func(rows Rows) error {
			var id int64
			var item []byte
			err := rows.Scan(&id, &item)
			changed[id].Item = item
			return err
		}, `SELECT id, item FROM active WHERE id IN (`+In(len(c))+`)`, Args(c)...)
	})
	return state, err
}

// applyIngest executes an ingest plan.
func (s *Store) applyIngest(ctx context.Context, tx Querier, w *crawlkeeper.IngestWrites, state map[string]*crawlkeeper.Record) error {
	if err := s.deleteIDs(ctx, tx, "archive", w.DeleteArchive); err != nil {
		return err
	}
	if err := s.insertRecords(ctx, tx, w.InsertActive, nil, time.Time{}); err != nil {
		return err
	}
	for _, archived := range []bool{false, true} {
		changed, touched := w.UpdateActive, w.TouchActive
		if archived {
			changed, touched = w.UpdateArchive, w.TouchArchive
		}
		if err := s.updateRecords(ctx, tx, archived, changed); err != nil {
			return err
		}
		if err := s.touchRecords(ctx, tx, archived, touched, state); err != nil {
			return err
		}
	}
	if err := s.writeHistory(ctx, tx, w.History); err != nil {
		return err
	}
	if len(w.TrimHistory) > 0 {
		rows := Map(w.TrimHistory, func(t crawlkeeper.HistoryTrim) []any { return []any{t.RecordID, t.UpTo} })
		if err := s.e.Delete(ctx, tx, "history", []string{"record_id =", "version <="}, rows); err != nil {
			return err
		}
	}
	if len(w.Deliveries) > 0 {
		ds := slices.SortedFunc(slices.Values(w.Deliveries), func(a, b crawlkeeper.DeliveryCount) int { return cmp.Compare(a.Source, b.Source) })
		rows := Map(ds, func(d crawlkeeper.DeliveryCount) []any { return []any{d.Source, d.Deliveries, d.Duplicates} })
		if err := s.e.Increment(ctx, tx, "deliveries", []string{"deliveries", "duplicates"}, rows); err != nil {
			return err
		}
	}
	return s.countDateErrors(ctx, tx, w.ActiveDateErrors)
}

// countDateErrors adds changes to the per-source counts of active records
// with date errors (date_error_counts).
func (s *Store) countDateErrors(ctx context.Context, tx Querier, counts []crawlkeeper.SourceCount) error {
	if len(counts) == 0 {
		return nil
	}
	rows := Map(counts, func(c crawlkeeper.SourceCount) []any { return []any{c.Source, c.N} })
	return s.e.Increment(ctx, tx, "date_error_counts", []string{"n"}, rows)
}

// RecountDateErrors implements crawlkeeper.DateErrorCounter.
func (s *Store) RecountDateErrors(ctx context.Context) error {
	return s.e.Write(ctx, "recount date errors", func(tx Querier) error {
		if _, err := tx.Exec(ctx, `DELETE FROM date_error_counts`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO date_error_counts (source, shard, n)
			SELECT source, 0, count(*) FROM active WHERE date_errors IS NOT NULL GROUP BY source`)
		return err
	})
}

var _ crawlkeeper.DateErrorCounter = (*Store)(nil)

// ActiveDateErrors implements crawlkeeper.DateErrorCounter from the
// counters every write keeps (date_error_counts), without counting the
// active table.
func (s *Store) ActiveDateErrors(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	err := EachRow(ctx, s.e.Reader(), func(rows Rows) error {
		var src string
		var n int64
		err := rows.Scan(&src, &n)
		if n != 0 {
			out[src] = n
		}
		return err
	}, `SELECT source, `+s.e.SumInt("n")+` FROM date_error_counts GROUP BY source`)
	if err != nil {
		return nil, s.e.Wrap("date error counts", err)
	}
	return out, nil
}

// deleteIDs deletes the rows of ids from table.
func (s *Store) deleteIDs(ctx context.Context, tx Querier, table string, ids []int64) error {
	return Chunks(ids, func(c []int64) error {
		_, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE id IN (`+In(len(c))+`)`, Args(c)...)
		return err
	})
}

// insertRecords writes recs whole to active, or, with reasons (one per
// record), to the archive, archived at at.
func (s *Store) insertRecords(ctx context.Context, tx Querier, recs []*crawlkeeper.Record, reasons []crawlkeeper.ArchiveReason, at time.Time) error {
	if len(recs) == 0 {
		return nil
	}
	if reasons == nil {
		rows := Map(recs, func(r *crawlkeeper.Record) []any { return s.recordArgs(r, []byte(r.Item)) })
		return s.e.Insert(ctx, tx, "active", s.activeList, rows, 0)
	}
	rows := make([][]any, len(recs))
	for i, r := range recs {
		rows[i] = append(s.recordArgs(r, s.archivePayload(r.Item)), at.UnixMicro(), string(reasons[i]), int64(len(r.Item)))
	}
	return s.e.Insert(ctx, tx, "archive", s.archiveList, rows, 0)
}

// updateRecords writes the columns an ingest changes when the content
// changed.
func (s *Store) updateRecords(ctx context.Context, tx Querier, archived bool, recs []*crawlkeeper.Record) error {
	if len(recs) == 0 {
		return nil
	}
	set := slices.Concat([]string{"key_parts", "title", "url", "item", "content_hash", "last_updated_at", "last_changed_at", "version", "event_at", "date_errors"},
		Split(s.e.SearchCols()), []string{"last_round", "last_target"}, Split(fetchCols))
	if archived {
		set = append(set, "item_bytes")
	}
	rows := Map(recs, func(r *crawlkeeper.Record) []any {
		item := []byte(r.Item)
		if archived {
			item = s.archivePayload(r.Item)
		}
		row := []any{r.ID, KeyParts(r.KeyParts), r.Title, r.URL, item, r.ContentHash, r.LastUpdatedAt.UnixMicro(),
			r.LastChangedAt.UnixMicro(), r.Version, storeenc.Micros(r.EventAt), DateErrors(r.DateErrors)}
		row = append(append(row, s.e.SearchArgs(r)...), r.LastRound, r.LastTarget)
		row = append(row, fetchArgs(r)...)
		if archived {
			row = append(row, int64(len(r.Item)))
		}
		return row
	})
	_, err := s.e.Update(ctx, tx, table(archived), []string{"id"}, set, rows)
	return err
}

// touchRecords writes an unchanged delivery: last_updated_at, the event
// fields, last_round, last_target and the fetch counts. A record whose
// event fields and target are as stored needs only the first, the round
// and the counts: those are one narrow UPDATE by id per (time, round,
// deliveries), in a batch usually one, which leaves the indexes on the
// event fields alone; the rest are a Bulk update.
//
// The narrow UPDATE counts the deliveries in SQL as crawlkeeper.Merge
// does in Go, from the stored last_updated_at, which the transaction's
// key locks keep as the plan read it: n re-deliveries at now add n
// refetches and now − last_updated_at (at least 0) of unchanged time.
// The counts are assigned before last_updated_at, so an engine that
// evaluates assignments in order (MySQL) reads the stored value too.
func (s *Store) touchRecords(ctx context.Context, tx Querier, archived bool, recs []*crawlkeeper.Record, state map[string]*crawlkeeper.Record) error {
	type group struct {
		at         int64
		round      string
		deliveries int64
	}
	plain := map[group][]int64{}
	var order []group
	var full [][]any
	for _, r := range recs {
		if old := state[r.Key]; old != nil && sameEvent(old, r) && old.LastTarget == r.LastTarget && r.Fetches != nil {
			g := group{r.LastUpdatedAt.UnixMicro(), r.LastRound, r.Fetches.Refetches}
			if old.Fetches != nil {
				g.deliveries -= old.Fetches.Refetches
			}
			if plain[g] == nil {
				order = append(order, g)
			}
			plain[g] = append(plain[g], r.ID)
			continue
		}
		full = append(full, append([]any{r.ID, r.LastUpdatedAt.UnixMicro(), storeenc.Micros(r.EventAt), DateErrors(r.DateErrors), r.LastRound, r.LastTarget}, fetchArgs(r)...))
	}
	for _, g := range order {
		err := Chunks(plain[g], func(c []int64) error {
			_, err := tx.Exec(ctx, `UPDATE `+table(archived)+` SET fetch_refetches = coalesce(fetch_refetches, 0) + ?,
				fetch_changes = coalesce(fetch_changes, 0), fetch_changed_us = coalesce(fetch_changed_us, 0),
				fetch_changed_log = coalesce(fetch_changed_log, 0),
				fetch_unchanged_us = coalesce(fetch_unchanged_us, 0) + `+s.e.Greatest()+`(? - last_updated_at, 0),
				last_updated_at = ?, last_round = ? WHERE id IN (`+In(len(c))+`)`,
				append([]any{g.deliveries, g.at, g.at, g.round}, Args(c)...)...)
			return err
		})
		if err != nil {
			return err
		}
	}
	if len(full) == 0 {
		return nil
	}
	_, err := s.e.Update(ctx, tx, table(archived), []string{"id"}, append([]string{"last_updated_at", "event_at", "date_errors", "last_round", "last_target"}, Split(fetchCols)...), full)
	return err
}

// sameEvent reports whether next's event fields are stored as old's.
func sameEvent(old, next *crawlkeeper.Record) bool {
	a, b := storeenc.Micros(old.EventAt), storeenc.Micros(next.EventAt)
	return (a == nil) == (b == nil) && (a == nil || *a == *b) && slices.Equal(old.DateErrors, next.DateErrors)
}

// writeHistory keeps previous versions, replacing rows with the same
// (record_id, version).
func (s *Store) writeHistory(ctx context.Context, tx Querier, hist []*crawlkeeper.HistoryEntry) error {
	if len(hist) == 0 {
		return nil
	}
	rows := Map(hist, func(h *crawlkeeper.HistoryEntry) []any {
		item := []byte(h.Item)
		if item == nil {
			item = []byte{}
		}
		return []any{h.RecordID, h.Version, item, h.ContentHash, h.ValidFrom.UnixMicro(), h.ValidTo.UnixMicro()}
	})
	return s.e.Insert(ctx, tx, "history", Split(HistoryCols), rows, 2)
}
