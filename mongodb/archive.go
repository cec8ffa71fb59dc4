package mongodb

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

// SelectDue implements crawlkeeper.ArchiveStore: a range on the rule's
// (column, _id) index, walked in that order.
func (s *Store) SelectDue(ctx context.Context, q crawlkeeper.DueQuery) ([]crawlkeeper.DueRecord, error) {
	col, err := storeenc.DueColumn(q.Rule)
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = crawlkeeper.DefaultBatchSize
	}
	// $type keeps records without an event date out: null sorts before
	// numbers and must not count as due.
	filter := bson.D{{Key: col, Value: bson.D{{Key: "$lte", Value: q.Cutoff.UnixMicro()}, {Key: "$type", Value: "long"}}}}
	if q.After != nil {
		at := q.After.At.UnixMicro()
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: col, Value: bson.D{{Key: "$gt", Value: at}}}},
			bson.D{{Key: col, Value: at}, {Key: "_id", Value: bson.D{{Key: "$gt", Value: q.After.ID}}}},
		}})
	}
	if len(q.Sources) > 0 {
		filter = append(filter, bson.E{Key: "source", Value: bson.D{{Key: "$in", Value: q.Sources}}})
	}
	if len(q.Exclude) > 0 {
		filter = append(filter, bson.E{Key: "source", Value: bson.D{{Key: "$nin", Value: q.Exclude}}})
	}
	if len(q.Except) > 0 {
		// $nor: due by none of them (a missing or null event_at is not due).
		var due bson.A
		for _, c := range q.Except {
			ecol, err := storeenc.DueColumn(c.Rule)
			if err != nil {
				return nil, err
			}
			due = append(due, bson.D{{Key: ecol, Value: bson.D{{Key: "$lte", Value: c.Cutoff.UnixMicro()}, {Key: "$type", Value: "long"}}}})
		}
		filter = append(filter, bson.E{Key: "$nor", Value: due})
	}
	cur, err := s.active.Find(ctx, filter, options.Find().
		SetSort(bson.D{{Key: col, Value: 1}, {Key: "_id", Value: 1}}).SetLimit(int64(limit)).
		SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "version", Value: 1}, {Key: "last_updated_at", Value: 1}, {Key: col, Value: 1}}))
	if err != nil {
		return nil, s.wrap("select due ("+string(q.Rule)+")", err)
	}
	var docs []bson.M
	if err := cur.All(ctx, &docs); err != nil {
		return nil, s.wrap("select due", err)
	}
	out := make([]crawlkeeper.DueRecord, 0, len(docs))
	for _, d := range docs {
		out = append(out, crawlkeeper.DueRecord{ID: asInt(d["_id"]), Version: asInt(d["version"]),
			LastUpdatedAt: crawlkeeper.MicrosTime(asInt(d["last_updated_at"])), At: crawlkeeper.MicrosTime(asInt(d[col]))})
	}
	return out, nil
}

// asInt reads an integer field of a generic document, whatever width the
// server returned it in.
func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case float64:
		return int64(x)
	}
	return 0
}

// Move directions of an intent.
const (
	toArchive = "archive"
	toActive  = "active"
	// toPurge marks a purge in progress: the record leaves the archive
	// for good.
	toPurge = "purge"
	// purged marks a tombstone: the intent of a record whose purge
	// finished, kept until the repair deletes history written late for
	// it (see Purge). Its key claim is already released.
	purged = "purged"
	// toRekey locks a record of a rekey merge against moves (rekey.go);
	// the merge releases it, and the repair only one whose merge is gone.
	toRekey = "rekey"
)

// intentDoc marks a move in progress (see the package notes).
type intentDoc struct {
	ID int64  `bson:"_id"`
	To string `bson:"to"`
	// At is the wall-clock time the move started, in Unix microseconds.
	At int64 `bson:"at"`
	// Rekey is the merge intent of a toRekey lock.
	Rekey string `bson:"rekey,omitempty"`
}

// lockMoves inserts move intents for ids and returns those it inserted
// (the others are being moved by someone else) and the intents' time,
// which unlockMoves needs: an intent repaired as stale and taken by
// another process since is that process's, not ours to delete.
func (s *Store) lockMoves(ctx context.Context, ids []int64, to string) ([]int64, int64, error) {
	at := time.Now().UnixMicro()
	if len(ids) == 0 {
		return nil, at, nil
	}
	docs := make([]any, len(ids))
	for i, id := range ids {
		docs[i] = intentDoc{ID: id, To: to, At: at}
	}
	_, err := s.moves.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if err == nil {
		return ids, at, nil
	}
	dup, ok := duplicateIndexes(err)
	if !ok {
		return nil, at, err
	}
	var out []int64
	for i, id := range ids {
		if !dup[i] {
			out = append(out, id)
		}
	}
	return out, at, nil
}

// stillAsRead returns those of locked whose document in c still has the
// rev read (rev) and no merge's mark, and unlocks the others. Before the
// lock a merge may have changed or deleted a record (and released its
// own lock); once a record is locked no merge can, as a merge locks its
// records first.
func (s *Store) stillAsRead(ctx context.Context, c *mongo.Collection, locked []int64, rev func(int64) int64, at int64) ([]int64, error) {
	docs, err := findDocs(ctx, c, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: locked}}}},
		options.Find().SetProjection(bson.D{{Key: "rev", Value: 1}, {Key: "merging", Value: 1}}))
	if err != nil {
		return nil, err
	}
	same := make(map[int64]bool, len(docs))
	for _, d := range docs {
		same[d.ID] = d.Rev == rev(d.ID) && d.Merging == ""
	}
	var keep, drop []int64
	for _, id := range locked {
		if same[id] {
			keep = append(keep, id)
		} else {
			drop = append(drop, id)
		}
	}
	return keep, s.unlockMoves(ctx, drop, at)
}

// unlockMoves deletes the intents lockMoves inserted at at for ids.
func (s *Store) unlockMoves(ctx context.Context, ids []int64, at int64) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.moves.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "at", Value: at}})
	return err
}

// Archive implements crawlkeeper.ArchiveStore without transactions: the
// records still in the selected state are locked with move intents,
// copied into archive (payloads compressed, rev kept), and deleted from
// active only where rev is still the one copied. A record that changed
// between copy and delete stays active and its copy is removed. A crash
// at any point is repaired as the package notes describe.
func (s *Store) Archive(ctx context.Context, moves []crawlkeeper.Move, now time.Time) ([]int64, error) {
	if len(moves) == 0 {
		return []int64{}, nil
	}
	if err := s.repair(ctx, time.Now().Add(-staleIntent)); err != nil {
		return nil, err
	}
	moved, err := s.archiveMoves(ctx, moves, crawlkeeper.Truncate(now))
	if err != nil {
		return nil, s.wrap("archive", err)
	}
	return moved, nil
}

func (s *Store) archiveMoves(ctx context.Context, moves []crawlkeeper.Move, at time.Time) ([]int64, error) {
	ids := make([]int64, len(moves))
	for i, m := range moves {
		ids[i] = m.ID
	}
	docs, err := findDocs(ctx, s.active, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return nil, err
	}
	cur := make(map[int64]*recordDoc, len(docs))
	for _, d := range docs {
		cur[d.ID] = d
	}
	reason := map[int64]crawlkeeper.ArchiveReason{}
	var cand []int64
	for _, m := range crawlkeeper.PlanMoves(moves, docLookup(cur), func(id int64) *time.Time {
		if d := cur[id]; d != nil {
			return storeenc.Time(d.EventAt)
		}
		return nil
	}) {
		reason[m.ID] = m.Reason
		cand = append(cand, m.ID)
	}
	moved := []int64{}
	if len(cand) == 0 {
		return moved, nil
	}
	if err := s.step("archive:planned"); err != nil {
		return nil, err
	}
	locked, lockedAt, err := s.lockMoves(ctx, cand, toArchive)
	if err != nil {
		return nil, err
	}
	if locked, err = s.stillAsRead(ctx, s.active, locked, func(id int64) int64 { return cur[id].Rev }, lockedAt); err != nil {
		return nil, err
	}
	if len(locked) == 0 {
		return moved, nil
	}
	if err := s.step("archive:locked"); err != nil {
		return nil, err
	}
	copies := make([]any, len(locked))
	for i, id := range locked {
		r, err := cur[id].record()
		if err != nil {
			return nil, err
		}
		r.ArchivedAt, r.ArchiveReason = &at, reason[id]
		copies[i] = toDoc(r, cur[id].Rev)
	}
	copied := locked
	if _, err := s.archive.InsertMany(ctx, copies, options.InsertMany().SetOrdered(false)); err != nil {
		// An archive document with the id already exists only when an
		// earlier move left one behind that the repair has not reached:
		// leave that record to the next pass.
		dup, ok := duplicateIndexes(err)
		if !ok {
			return nil, err
		}
		copied = nil
		for i, id := range locked {
			if !dup[i] {
				copied = append(copied, id)
			}
		}
	}
	if err := s.step("archive:copied"); err != nil {
		return nil, err
	}
	gone := map[int64]bool{}
	if len(copied) > 0 {
		models := make([]mongo.WriteModel, len(copied))
		for i, id := range copied {
			models[i] = mongo.NewDeleteOneModel().SetFilter(bson.D{{Key: "_id", Value: id}, {Key: "rev", Value: cur[id].Rev}})
		}
		res, err := s.active.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		if err != nil {
			return nil, err
		}
		for _, id := range copied {
			gone[id] = true
		}
		if res.DeletedCount != int64(len(copied)) {
			// Some records changed after the copy: they stay active and
			// their copies go. A record no longer active at all was moved
			// by a concurrent repair, which finished this very move.
			still, err := findDocs(ctx, s.active, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: copied}}}},
				options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
			if err != nil {
				return nil, err
			}
			var undo []mongo.WriteModel
			for _, d := range still {
				delete(gone, d.ID)
				undo = append(undo, mongo.NewDeleteOneModel().SetFilter(bson.D{{Key: "_id", Value: d.ID}, {Key: "rev", Value: cur[d.ID].Rev}}))
			}
			if len(undo) > 0 {
				if _, err := s.archive.BulkWrite(ctx, undo, options.BulkWrite().SetOrdered(false)); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := s.step("archive:deleted"); err != nil {
		return nil, err
	}
	if err := s.unlockMoves(ctx, locked, lockedAt); err != nil {
		return nil, err
	}
	for _, id := range cand {
		if gone[id] {
			moved = append(moved, id)
		}
	}
	return moved, nil
}

// moveToActive moves archived records back to active in their new state
// recs (a restore, or a revive with the merged item): intent, insert into
// active, delete from archive where rev is still oldRev, remove intent.
// It returns the ids moved; the others were locked or changed by a
// concurrent writer and are left as they were.
func (s *Store) moveToActive(ctx context.Context, recs []*crawlkeeper.Record, oldRev map[int64]int64) ([]int64, error) {
	byID := make(map[int64]*crawlkeeper.Record, len(recs))
	ids := make([]int64, len(recs))
	for i, r := range recs {
		byID[r.ID], ids[i] = r, r.ID
	}
	locked, at, err := s.lockMoves(ctx, ids, toActive)
	if err != nil || len(locked) == 0 {
		return nil, err
	}
	if locked, err = s.stillAsRead(ctx, s.archive, locked, func(id int64) int64 { return oldRev[id] }, at); err != nil || len(locked) == 0 {
		return []int64{}, err
	}
	if err := s.step("active:locked"); err != nil {
		return nil, err
	}
	docs := make([]any, len(locked))
	for i, id := range locked {
		docs[i] = toDoc(byID[id], oldRev[id]+1)
	}
	inserted := locked
	if _, err := s.active.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false)); err != nil {
		dup, ok := duplicateIndexes(err)
		if !ok {
			return nil, err
		}
		inserted = nil
		for i, id := range locked {
			if !dup[i] {
				inserted = append(inserted, id)
			}
		}
	}
	if err := s.step("active:inserted"); err != nil {
		return nil, err
	}
	done := map[int64]bool{}
	if len(inserted) > 0 {
		models := make([]mongo.WriteModel, len(inserted))
		for i, id := range inserted {
			models[i] = mongo.NewDeleteOneModel().SetFilter(bson.D{{Key: "_id", Value: id}, {Key: "rev", Value: oldRev[id]}})
			done[id] = true
		}
		res, err := s.archive.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		if err != nil {
			return nil, err
		}
		if res.DeletedCount != int64(len(inserted)) {
			// An archived copy that is still there was refreshed after it
			// was read: the new active copy misses that change, so it is
			// taken back and the record stays archived.
			still, err := findDocs(ctx, s.archive, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: inserted}}}},
				options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "rev", Value: 1}}))
			if err != nil {
				return nil, err
			}
			for _, d := range still {
				res, err := s.active.DeleteOne(ctx, bson.D{{Key: "_id", Value: d.ID}, {Key: "rev", Value: oldRev[d.ID] + 1}})
				if err != nil {
					return nil, err
				}
				if res.DeletedCount == 1 {
					delete(done, d.ID)
					continue
				}
				// The new active copy was written to meanwhile (ingest
				// prefers it): it is the newer one and the archive copy
				// goes, as the repair would decide.
				if _, err := s.archive.DeleteOne(ctx, bson.D{{Key: "_id", Value: d.ID}}); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := s.step("active:deleted"); err != nil {
		return nil, err
	}
	if err := s.unlockMoves(ctx, locked, at); err != nil {
		return nil, err
	}
	out := []int64{}
	for _, id := range ids {
		if done[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// repair finishes or undoes the moves whose intents started before
// olderThan (all of them when it is zero), by the rules of the package
// notes. Every write is conditional, so a move still running elsewhere
// ends correctly too.
func (s *Store) repair(ctx context.Context, olderThan time.Time) error {
	filter := bson.D{}
	if !olderThan.IsZero() {
		filter = bson.D{{Key: "at", Value: bson.D{{Key: "$lt", Value: olderThan.UnixMicro()}}}}
	}
	cur, err := s.moves.Find(ctx, filter, options.Find().SetBatchSize(repairBatch))
	if err != nil {
		return s.wrap("repair moves", err)
	}
	defer cur.Close(ctx)
	// Tombstones of a large purge are many: they go by the batch, the
	// other intents (few: moves a crash interrupted) one by one.
	var tombs []int64
	for cur.Next(ctx) {
		var in intentDoc
		if err := cur.Decode(&in); err != nil {
			return s.wrap("repair moves", err)
		}
		if in.To == purged {
			if tombs = append(tombs, in.ID); len(tombs) == repairBatch {
				if err := s.buryTombstones(ctx, tombs); err != nil {
					return err
				}
				tombs = tombs[:0]
			}
			continue
		}
		if err := s.repairOne(ctx, in); err != nil {
			return s.wrap("repair the move of record "+itoa(in.ID), err)
		}
	}
	if err := cur.Err(); err != nil {
		return s.wrap("repair moves", err)
	}
	return s.buryTombstones(ctx, tombs)
}

// repairBatch is how many tombstones one repair step deletes.
const repairBatch = 1000

// buryTombstones deletes the history written late for purged records ids
// (indexed by record_id) and then their tombstones. Ids are never reused,
// so whatever history still names them is left over.
func (s *Store) buryTombstones(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	in := bson.D{{Key: "$in", Value: ids}}
	if _, err := s.history.DeleteMany(ctx, bson.D{{Key: "record_id", Value: in}}); err != nil {
		return s.wrap("repair purged records' history", err)
	}
	if _, err := s.moves.DeleteMany(ctx, bson.D{{Key: "_id", Value: in}, {Key: "to", Value: purged}}); err != nil {
		return s.wrap("repair purged records' intents", err)
	}
	return nil
}

func (s *Store) repairOne(ctx context.Context, in intentDoc) error {
	if in.To == toRekey {
		// A merge's lock: its merge releases it. One whose merge is gone
		// (a process that locked after its intent was rolled back for
		// it, then stopped) is left over.
		n, err := s.rekeys.CountDocuments(ctx, bson.D{{Key: "_id", Value: in.Rekey}, {Key: "phase", Value: bson.D{{Key: "$ne", Value: phaseDone}}}})
		if err != nil || n > 0 {
			return err
		}
		_, err = s.moves.DeleteOne(ctx, bson.D{{Key: "_id", Value: in.ID}, {Key: "rekey", Value: in.Rekey}})
		return err
	}
	revOf := func(c *mongo.Collection) (int64, bool, error) {
		var d struct {
			Rev int64 `bson:"rev"`
		}
		err := c.FindOne(ctx, bson.D{{Key: "_id", Value: in.ID}}, options.FindOne().SetProjection(bson.D{{Key: "rev", Value: 1}})).Decode(&d)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return 0, false, nil
		}
		return d.Rev, err == nil, err
	}
	a, inActive, err := revOf(s.active)
	if err != nil {
		return err
	}
	r, inArchive, err := revOf(s.archive)
	if err != nil {
		return err
	}
	if in.To == toPurge {
		if !inActive && !inArchive {
			// Deleted from the archive, maybe not its history and key.
			if err := s.finishPurge(ctx, []int64{in.ID}, nil); err != nil {
				return err
			}
		}
		_, err = s.moves.DeleteOne(ctx, bson.D{{Key: "_id", Value: in.ID}, {Key: "at", Value: in.At}})
		return err
	}
	if inActive && inArchive {
		if in.To == toArchive && a == r {
			// Copied and unchanged since: finish the move.
			_, err = s.active.DeleteOne(ctx, bson.D{{Key: "_id", Value: in.ID}, {Key: "rev", Value: a}})
		} else {
			// Changed after the copy, or a move back to active whose
			// active copy is the newer one: the active copy wins.
			_, err = s.archive.DeleteOne(ctx, bson.D{{Key: "_id", Value: in.ID}, {Key: "rev", Value: r}})
		}
		if err != nil {
			return err
		}
	}
	_, err = s.moves.DeleteOne(ctx, bson.D{{Key: "_id", Value: in.ID}, {Key: "at", Value: in.At}})
	return err
}

// Restore implements crawlkeeper.ArchiveStore.
func (s *Store) Restore(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return []int64{}, nil
	}
	if err := s.repair(ctx, time.Now().Add(-staleIntent)); err != nil {
		return nil, err
	}
	docs, err := findDocs(ctx, s.archive, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return nil, s.wrap("restore", err)
	}
	byID := map[int64]*recordDoc{}
	for _, d := range docs {
		byID[d.ID] = d
	}
	var recs []*crawlkeeper.Record
	oldRev := map[int64]int64{}
	for _, id := range crawlkeeper.PlanRestore(ids, docLookup(byID)) {
		d := byID[id]
		r, err := d.record()
		if err != nil {
			return nil, err
		}
		r.Reactivate()
		recs = append(recs, r)
		oldRev[id] = d.Rev
	}
	if len(recs) == 0 {
		return []int64{}, nil
	}
	done, err := s.moveToActive(ctx, recs, oldRev)
	if err != nil {
		return nil, s.wrap("restore", err)
	}
	return done, nil
}

// UpdateEvents implements crawlkeeper.ArchiveStore with one conditional
// update per record.
func (s *Store) UpdateEvents(ctx context.Context, updates []crawlkeeper.EventUpdate) (int, error) {
	last := storeenc.Dedupe(updates, func(u crawlkeeper.EventUpdate) storeenc.IDVersion {
		return storeenc.IDVersion{ID: u.ID, Version: u.Version}
	})
	ok := map[storeenc.IDVersion]bool{}
	for _, u := range last {
		res, err := s.active.UpdateOne(ctx, bson.D{{Key: "_id", Value: u.ID}, {Key: "version", Value: u.Version}, unmarked},
			bson.D{{Key: "$set", Value: bson.D{{Key: "event_at", Value: storeenc.Micros(u.EventAt)}, {Key: "date_errors", Value: nilIfEmpty(u.DateErrors)}}},
				{Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}})
		if err != nil {
			return 0, s.wrap("update events", err)
		}
		if res.MatchedCount == 1 {
			ok[storeenc.IDVersion{ID: u.ID, Version: u.Version}] = true
		}
	}
	// Count every update that applied, as the embedded store does when it
	// runs them one by one.
	n := 0
	for _, u := range updates {
		if ok[storeenc.IDVersion{ID: u.ID, Version: u.Version}] {
			n++
		}
	}
	return n, nil
}

func nilIfEmpty(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	return xs
}

// ArchivedBefore implements crawlkeeper.ArchiveStore.
func (s *Store) ArchivedBefore(ctx context.Context, source *string, before time.Time, afterID int64, limit int) ([]*crawlkeeper.Record, error) {
	if limit <= 0 {
		limit = crawlkeeper.DefaultBatchSize
	}
	filter := bson.D{{Key: "archived_at", Value: bson.D{{Key: "$lt", Value: before.UnixMicro()}}}, {Key: "_id", Value: bson.D{{Key: "$gt", Value: afterID}}}}
	if source != nil {
		filter = append(filter, bson.E{Key: "source", Value: *source})
	}
	recs, err := findRecords(ctx, s.archive, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, s.wrap("archived before", err)
	}
	return recs, nil
}

// docLookup is a crawlkeeper.Lookup over documents loaded by id.
func docLookup(docs map[int64]*recordDoc) crawlkeeper.Lookup {
	return func(id int64) (int64, time.Time, bool) {
		d := docs[id]
		if d == nil {
			return 0, time.Time{}, false
		}
		return d.Version, crawlkeeper.MicrosTime(d.LastUpdatedAt), true
	}
}

// Purge implements crawlkeeper.ArchiveStore without transactions. Each
// record still archived in its exported state is locked with a purge
// intent and deleted only at the rev it was read at, so a refresh by a
// concurrent ingest wins and the record is kept (reported as changed).
// Its history and key claim go after the record: a crash in between leaves
// the intent, and the repair (on open, archive, restore and check) deletes
// the history of a purged record that is in neither collection.
func (s *Store) Purge(ctx context.Context, targets []crawlkeeper.RecordState) (*crawlkeeper.PurgeResult, error) {
	res := &crawlkeeper.PurgeResult{Purged: []int64{}}
	if len(targets) == 0 {
		return res, nil
	}
	if err := s.repair(ctx, time.Now().Add(-staleIntent)); err != nil {
		return nil, err
	}
	ids := make([]int64, len(targets))
	for i, t := range targets {
		ids[i] = t.ID
	}
	docs, err := findDocs(ctx, s.archive, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "key", Value: 1}, {Key: "version", Value: 1}, {Key: "last_updated_at", Value: 1}, {Key: "rev", Value: 1}}))
	if err != nil {
		return nil, s.wrap("purge", err)
	}
	byID := make(map[int64]*recordDoc, len(docs))
	for _, d := range docs {
		byID[d.ID] = d
	}
	purge, changed := crawlkeeper.PlanPurge(targets, docLookup(byID))
	res.Changed = changed
	locked, at, err := s.lockMoves(ctx, purge, toPurge)
	if err != nil {
		return nil, s.wrap("purge", err)
	}
	isLocked := make(map[int64]bool, len(locked))
	for _, id := range locked {
		isLocked[id] = true
	}
	for _, id := range purge {
		if !isLocked[id] {
			res.Changed = append(res.Changed, id) // being moved: wait for the next purge
		}
	}
	var gone []int64
	var goneKeys []string
	for _, id := range locked {
		d := byID[id]
		del, err := s.archive.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "rev", Value: d.Rev}})
		if err != nil {
			return nil, s.wrap("purge", err)
		}
		if del.DeletedCount == 1 {
			gone = append(gone, id)
			goneKeys = append(goneKeys, d.Key)
		} else {
			res.Changed = append(res.Changed, id)
		}
	}
	if err := s.step("purge:deleted"); err != nil {
		return nil, err
	}
	if err := s.finishPurge(ctx, gone, goneKeys); err != nil {
		return nil, err
	}
	// The intents of purged records stay, as tombstones (marked purged),
	// until the repair takes them once they are stale: an ingest that
	// read the record before it was purged writes its history before its
	// conditional update fails, possibly after finishPurge ran, and the
	// repair deletes that late history (buryTombstones), a batch at a
	// time. Ids are never reused, so a tombstone blocks nothing but a
	// revival of the purged id. The other intents go now.
	if len(gone) > 0 {
		if _, err := s.moves.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: gone}}}, {Key: "at", Value: at}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "to", Value: purged}}}}); err != nil {
			return nil, s.wrap("purge", err)
		}
	}
	isGone := make(map[int64]bool, len(gone))
	for _, id := range gone {
		isGone[id] = true
	}
	var kept []int64
	for _, id := range locked {
		if !isGone[id] {
			kept = append(kept, id)
		}
	}
	if err := s.unlockMoves(ctx, kept, at); err != nil {
		return nil, s.wrap("purge", err)
	}
	res.Purged = gone
	return res, nil
}

// finishPurge deletes the history and the key claims of records deleted
// from the archive. Ids are never reused, so whatever still carries a
// purged id is left over. keys holds the purged records' keys when known;
// without them (a repair, after the record is gone) the claims are found
// by id, a scan of the keys collection that only repairs pay.
func (s *Store) finishPurge(ctx context.Context, gone []int64, keys []string) error {
	if len(gone) == 0 {
		return nil
	}
	in := bson.D{{Key: "$in", Value: gone}}
	if _, err := s.history.DeleteMany(ctx, bson.D{{Key: "record_id", Value: in}}); err != nil {
		return s.wrap("purge history", err)
	}
	var err error
	if keys == nil {
		_, err = s.keys.DeleteMany(ctx, bson.D{{Key: "id", Value: in}})
	} else {
		release := make([]mongo.WriteModel, len(gone))
		for i, id := range gone {
			release[i] = mongo.NewDeleteOneModel().SetFilter(bson.D{{Key: "_id", Value: keys[i]}, {Key: "id", Value: id}})
		}
		_, err = s.keys.BulkWrite(ctx, release, options.BulkWrite().SetOrdered(false))
	}
	if err != nil {
		return s.wrap("purge keys", err)
	}
	return nil
}

// moving returns which of ids have a move intent (all intents for nil).
func (s *Store) moving(ctx context.Context, ids []int64) (map[int64]bool, error) {
	filter := bson.D{}
	if ids != nil {
		filter = bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}
	}
	cur, err := s.moves.Find(ctx, filter)
	if err != nil {
		return nil, err
	}
	var intents []intentDoc
	if err := cur.All(ctx, &intents); err != nil {
		return nil, err
	}
	out := make(map[int64]bool, len(intents))
	for _, in := range intents {
		out[in.ID] = true
	}
	return out, nil
}

// ArchiveStats implements crawlkeeper.ArchiveStore. The median is
// interpolated between the two middle values of an even count, as the
// other stores compute it.
func (s *Store) ArchiveStats(ctx context.Context, now time.Time) (map[string]*crawlkeeper.SourceStats, error) {
	out := map[string]*crawlkeeper.SourceStats{}
	get := func(src string) *crawlkeeper.SourceStats {
		if out[src] == nil {
			out[src] = &crawlkeeper.SourceStats{}
		}
		return out[src]
	}
	type life struct {
		ID            int64  `bson:"_id"`
		Source        string `bson:"source"`
		CrawledAt     int64  `bson:"crawled_at"`
		LastUpdatedAt int64  `bson:"last_updated_at"`
	}
	proj := options.Find().SetProjection(bson.D{{Key: "source", Value: 1}, {Key: "crawled_at", Value: 1}, {Key: "last_updated_at", Value: 1}})
	cur, err := s.archive.Find(ctx, bson.D{}, proj)
	if err != nil {
		return nil, s.wrap("archive stats", err)
	}
	var lives []life
	if err := cur.All(ctx, &lives); err != nil {
		return nil, s.wrap("archive stats", err)
	}
	bySource := map[string][]int64{}
	for _, l := range lives {
		bySource[l.Source] = append(bySource[l.Source], l.LastUpdatedAt-l.CrawledAt)
	}
	for src, xs := range bySource {
		slices.Sort(xs)
		m := float64(xs[len(xs)/2])
		if len(xs)%2 == 0 {
			m = (float64(xs[len(xs)/2-1]) + float64(xs[len(xs)/2])) / 2
		}
		m /= 1e6
		get(src).MedianLifetimeS = &m
	}
	// Changes per week over the last four weeks, by the source of each
	// changed record, active or archived.
	const weeks = 4
	since := now.Add(-weeks * 7 * 24 * time.Hour).UnixMicro()
	hc, err := s.history.Find(ctx, bson.D{{Key: "valid_to", Value: bson.D{{Key: "$gte", Value: since}}}},
		options.Find().SetProjection(bson.D{{Key: "record_id", Value: 1}}))
	if err != nil {
		return nil, s.wrap("archive stats", err)
	}
	var hs []struct {
		RecordID int64 `bson:"record_id"`
	}
	if err := hc.All(ctx, &hs); err != nil {
		return nil, s.wrap("archive stats", err)
	}
	if len(hs) == 0 {
		return out, nil
	}
	perRecord := map[int64]int64{}
	var ids []int64
	for _, h := range hs {
		if perRecord[h.RecordID] == 0 {
			ids = append(ids, h.RecordID)
		}
		perRecord[h.RecordID]++
	}
	source := map[int64]string{}
	for _, c := range []*mongo.Collection{s.archive, s.active} {
		cur, err := c.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, options.Find().SetProjection(bson.D{{Key: "source", Value: 1}}))
		if err != nil {
			return nil, s.wrap("archive stats", err)
		}
		var ls []life
		if err := cur.All(ctx, &ls); err != nil {
			return nil, s.wrap("archive stats", err)
		}
		for _, l := range ls {
			source[l.ID] = l.Source
		}
	}
	counts := map[string]int64{}
	for id, n := range perRecord {
		if src, ok := source[id]; ok {
			counts[src] += n
		}
	}
	for src, n := range counts {
		v := float64(n) / weeks
		get(src).ChangesPerWeek = &v
	}
	return out, nil
}
