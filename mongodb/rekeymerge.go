package mongodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The merge protocol of RekeyStore: planned, committed, rolled forward or
// back (see the notes in rekey.go).

// MergeRecords implements crawlkeeper.RekeyStore: each merge in turn is
// planned, committed and rolled forward under its own intent (see the
// notes at the top of this file), or rolled back and reported as not
// applied when its group changed or its key is held outside the group.
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
	if err := s.repairRekeys(ctx, s.staleBefore(), false); err != nil {
		return nil, err
	}
	for i, m := range ms {
		ok, err := s.mergeOne(ctx, m)
		if err != nil {
			return nil, err
		}
		applied[i] = ok
	}
	return applied, nil
}

// mergeOne applies one merge and reports whether it applied.
func (s *Store) mergeOne(ctx context.Context, m *crawlkeeper.RekeyMerge) (bool, error) {
	ids := m.IDs()
	// The history the merge was planned from must not hold an entry an
	// earlier merge of these records left to be buried.
	if late, err := s.buriedLate(ctx, ids); err != nil || late {
		return false, err
	}
	members, ok, err := s.readGroup(ctx, m)
	if err != nil || !ok {
		return false, err
	}
	// Read-only checks first, so that a merge bound to fail writes
	// nothing: a record of the group being moved, the key held outside
	// the group. The protocol checks them again under its locks.
	moving, err := s.moving(ctx, ids)
	if err != nil {
		return false, s.wrap("merge", err)
	}
	if len(moving) > 0 {
		return false, nil
	}
	if held, err := s.heldOutside(ctx, m.Survivor.Key, ids); err != nil || held {
		return false, s.wrap("merge", err)
	}
	seq, err := s.takeIDs(ctx, s.journalSeq, 1)
	if err != nil {
		return false, s.wrap("merge", err)
	}
	in := &rekeyIntent{ID: fmt.Sprintf("merge:%d:%s", m.Survivor.ID, newToken()), Kind: rekeyMerge, At: s.now().UnixMicro(), IDs: ids,
		Phase: phasePlanned, SurvivorID: m.Survivor.ID, Key: m.Survivor.Key, ToArchive: m.Survivor.Archived(), Members: members,
		First: m.Survivor.Version - int64(len(m.History)), Staged: len(m.History),
		JournalSeq: seq, JournalAt: m.At.UnixMicro(), Journal: m.JournalBody()}
	if _, err := s.rekeys.InsertOne(ctx, in); err != nil {
		return false, s.wrap("merge", err)
	}
	if err := s.step("merge:planned"); err != nil {
		return false, err
	}
	committed, err := s.planMerge(ctx, in, m)
	if err != nil || !committed {
		return false, err
	}
	if err := s.rollForward(ctx, in); err != nil {
		return false, err
	}
	return true, nil
}

// readGroup reads the records of m's group and returns them as members
// when every one is in the state m was decided on, in one table, and not
// held by another merge (a mark met is settled, and the merge left for
// the next run).
func (s *Store) readGroup(ctx context.Context, m *crawlkeeper.RekeyMerge) ([]mergeMember, bool, error) {
	ids := m.IDs()
	type state struct {
		archived bool
		doc      *recordDoc
	}
	cur := map[int64]state{}
	var marks []markRef
	for _, archived := range []bool{false, true} {
		docs, err := findDocs(ctx, s.collection(archived), bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
			options.Find().SetProjection(bson.D{{Key: "key", Value: 1}, {Key: "version", Value: 1}, {Key: "last_updated_at", Value: 1}, {Key: "rev", Value: 1}, {Key: "merging", Value: 1}}))
		if err != nil {
			return nil, false, s.wrap("merge", err)
		}
		for _, d := range docs {
			if _, dup := cur[d.ID]; dup {
				return nil, false, nil // in both tables: a move in flight
			}
			cur[d.ID] = state{archived: archived, doc: d}
			if d.Merging != "" {
				marks = append(marks, markRef{archived: archived, id: d.ID, intent: d.Merging})
			}
		}
	}
	if len(marks) > 0 {
		if _, err := s.settleMarks(ctx, marks); err != nil {
			return nil, false, err
		}
		return nil, false, nil
	}
	if !m.Holds(func(id int64) (bool, int64, time.Time, bool) {
		st, ok := cur[id]
		if !ok {
			return false, 0, time.Time{}, false
		}
		return st.archived, st.doc.Version, crawlkeeper.MicrosTime(st.doc.LastUpdatedAt), true
	}) {
		return nil, false, nil
	}
	members := make([]mergeMember, len(ids))
	for i, id := range ids {
		st := cur[id]
		members[i] = mergeMember{ID: id, Archived: st.archived, Rev: st.doc.Rev, Key: st.doc.Key}
	}
	return members, true, nil
}

// heldOutside reports whether a record outside group has key or holds
// its claim.
func (s *Store) heldOutside(ctx context.Context, key string, group []int64) (bool, error) {
	n, err := s.keyHolders(ctx, key, group)
	if err != nil || n > 0 {
		return n > 0, err
	}
	c, err := s.readClaim(ctx, key)
	if err != nil || c == nil {
		return false, err
	}
	for _, id := range group {
		if c.ID == id {
			return false, nil
		}
	}
	return s.recordExists(ctx, c.ID)
}

// planMerge takes a planned intent through staging, locks, the claim and
// the marks to committed, and reports whether it got there; otherwise the
// merge is rolled back. A crash (a step's error) stops it where it is.
func (s *Store) planMerge(ctx context.Context, in *rekeyIntent, m *crawlkeeper.RekeyMerge) (bool, error) {
	staged := make([]any, 0, len(m.History)+1)
	staged = append(staged, &stagedDoc{ID: in.ID + ":s", Intent: in.ID, N: -1, Survivor: toDoc(m.Survivor, in.member(in.SurvivorID).Rev+2)})
	for i, h := range m.History {
		staged = append(staged, &stagedDoc{ID: fmt.Sprintf("%s:h:%d", in.ID, i), Intent: in.ID, N: i, History: &historyDoc{
			ID: historyID(h.RecordID, h.Version), RecordID: h.RecordID, Version: h.Version, Item: h.Item, ContentHash: h.ContentHash,
			ValidFrom: h.ValidFrom.UnixMicro(), ValidTo: h.ValidTo.UnixMicro(), Merge: in.ID}})
	}
	// The driver splits the insert into commands that fit the server's
	// message size.
	if _, err := s.staged.InsertMany(ctx, staged); err != nil {
		return false, s.wrap("merge: stage", err)
	}
	if err := s.step("merge:staged"); err != nil {
		return false, err
	}
	// Staging a large history takes a while, and a planned intent is
	// presumed dead staleIntent after its time: the clock starts again.
	in.At = s.now().UnixMicro()
	res, err := s.rekeys.UpdateOne(ctx, bson.D{{Key: "_id", Value: in.ID}, {Key: "phase", Value: phasePlanned}}, bson.D{{Key: "$set", Value: bson.D{{Key: "at", Value: in.At}}}})
	if err != nil {
		return false, s.wrap("merge", err)
	}
	if res.MatchedCount == 0 {
		return false, s.rollBack(ctx, in) // rolled back for a dead process
	}
	locks := make([]any, len(in.IDs))
	for i, id := range in.IDs {
		locks[i] = intentDoc{ID: id, To: toRekey, At: in.At, Rekey: in.ID}
	}
	if _, err := s.moves.InsertMany(ctx, locks, options.InsertMany().SetOrdered(false)); err != nil {
		if _, ok := duplicateIndexes(err); !ok {
			return false, s.wrap("merge: lock", err)
		}
		return false, s.rollBack(ctx, in) // a record is being moved
	}
	if err := s.step("merge:locked"); err != nil {
		return false, err
	}
	claimed, err := s.claimForMerge(ctx, in)
	if err != nil {
		return false, err
	}
	if !claimed {
		return false, s.rollBack(ctx, in)
	}
	if err := s.step("merge:claimed"); err != nil {
		return false, err
	}
	for _, archived := range []bool{false, true} {
		var models []mongo.WriteModel
		for _, mb := range in.Members {
			if mb.Archived == archived {
				models = append(models, mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: mb.ID}, {Key: "rev", Value: mb.Rev}, unmarked}).
					SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "merging", Value: in.ID}}}, {Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}}))
			}
		}
		if len(models) == 0 {
			continue
		}
		res, err := bulkChunks(ctx, s.collection(archived), models)
		if err != nil {
			return false, s.wrap("merge: mark", err)
		}
		if res.MatchedCount != int64(len(models)) {
			return false, s.rollBack(ctx, in) // a record changed since it was read
		}
	}
	if err := s.step("merge:marked"); err != nil {
		return false, err
	}
	// Under the claim no new record can take the key; one stored without
	// a claim (before claims existed) still holds it.
	if n, err := s.keyHolders(ctx, in.Key, in.IDs); err != nil || n > 0 {
		if err != nil {
			return false, s.wrap("merge", err)
		}
		return false, s.rollBack(ctx, in)
	}
	res, err = s.rekeys.UpdateOne(ctx, bson.D{{Key: "_id", Value: in.ID}, {Key: "phase", Value: phasePlanned}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "phase", Value: phaseCommitted}}}})
	if err != nil {
		return false, s.wrap("merge: commit", err)
	}
	if res.MatchedCount == 0 {
		// Another process found the intent stale and rolls it back.
		return false, s.rollBack(ctx, in)
	}
	in.Phase = phaseCommitted
	if err := s.step("merge:committed"); err != nil {
		return false, err
	}
	return true, nil
}

// claimForMerge claims the survivor's key for it and reports whether it
// holds it: a claim of the survivor's own is kept as it is, one held by a
// record of the group is taken over (noting from whom), one left over
// (releaseLeftClaim) is released first, and one held by any other record
// means the merge must not apply.
func (s *Store) claimForMerge(ctx context.Context, in *rekeyIntent) (bool, error) {
	group := make(map[int64]bool, len(in.IDs))
	for _, id := range in.IDs {
		group[id] = true
	}
	plain := bson.E{Key: "rekey", Value: bson.D{{Key: "$exists", Value: false}}}
	for try := 0; try < 4; try++ {
		_, err := s.keys.InsertOne(ctx, claimDoc{Key: in.Key, ID: in.SurvivorID, Rekey: in.ID})
		if err == nil {
			return true, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return false, s.wrap("merge: claim", err)
		}
		c, err := s.readClaim(ctx, in.Key)
		if err != nil {
			return false, s.wrap("merge: claim", err)
		}
		switch {
		case c == nil:
			continue
		case c.Rekey == in.ID:
			return true, nil
		case c.Rekey == "" && c.ID == in.SurvivorID:
			return true, nil
		case c.Rekey == "" && group[c.ID]:
			res, err := s.keys.UpdateOne(ctx, bson.D{{Key: "_id", Value: in.Key}, {Key: "id", Value: c.ID}, plain},
				bson.D{{Key: "$set", Value: bson.D{{Key: "id", Value: in.SurvivorID}, {Key: "rekey", Value: in.ID}, {Key: "from", Value: c.ID}}}})
			if err != nil {
				return false, s.wrap("merge: claim", err)
			}
			if res.MatchedCount == 1 {
				return true, nil
			}
		default:
			released, err := s.releaseLeftClaim(ctx, c)
			if err != nil {
				return false, s.wrap("merge: claim", err)
			}
			if !released {
				return false, nil
			}
		}
	}
	return false, nil
}

// releaseMergeClaim gives back the claim of key that merge intent took:
// to the record it was taken from, or deletes it.
func (s *Store) releaseMergeClaim(ctx context.Context, key, intent string) error {
	c, err := s.readClaim(ctx, key)
	if err != nil || c == nil || c.Rekey != intent {
		return err
	}
	filter := bson.D{{Key: "_id", Value: key}, {Key: "rekey", Value: intent}}
	if c.From != 0 {
		_, err = s.keys.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: "id", Value: c.From}}},
			{Key: "$unset", Value: bson.D{{Key: "rekey", Value: ""}, {Key: "from", Value: ""}}}})
	} else {
		_, err = s.keys.DeleteOne(ctx, filter)
	}
	return err
}

// rollBack undoes a planned merge: the intent turns aborting (only from
// planned, so never after a commit), the marks, claim and locks go, then
// the staged documents and the intent. Every step is conditioned on the
// intent's id, so it also cleans up after a process that went on working
// once its intent had been rolled back for it.
func (s *Store) rollBack(ctx context.Context, in *rekeyIntent) error {
	res, err := s.rekeys.UpdateOne(ctx, bson.D{{Key: "_id", Value: in.ID}, {Key: "phase", Value: bson.D{{Key: "$in", Value: bson.A{phasePlanned, phaseAborting}}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "phase", Value: phaseAborting}}}})
	if err != nil {
		return s.wrap("merge: roll back", err)
	}
	if res.MatchedCount == 0 {
		var cur rekeyIntent
		err := s.rekeys.FindOne(ctx, bson.D{{Key: "_id", Value: in.ID}}).Decode(&cur)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			// Rolled back already: clean up whatever was written since.
		case err != nil:
			return s.wrap("merge: roll back", err)
		case cur.Phase == phaseCommitted:
			return s.rollForward(ctx, &cur)
		default:
			return nil
		}
	}
	if err := s.step("merge:aborting"); err != nil {
		return err
	}
	for _, archived := range []bool{false, true} {
		var models []mongo.WriteModel
		for _, mb := range in.Members {
			if mb.Archived == archived {
				models = append(models, unmarkModel(mb.ID, in.ID))
			}
		}
		if _, err := bulkChunks(ctx, s.collection(archived), models); err != nil {
			return s.wrap("merge: roll back", err)
		}
	}
	if err := s.step("merge:unmarked"); err != nil {
		return err
	}
	if err := s.releaseMergeClaim(ctx, in.Key, in.ID); err != nil {
		return s.wrap("merge: roll back", err)
	}
	if _, err := s.moves.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: in.IDs}}}, {Key: "rekey", Value: in.ID}}); err != nil {
		return s.wrap("merge: roll back", err)
	}
	if err := s.step("merge:released"); err != nil {
		return err
	}
	if _, err := s.staged.DeleteMany(ctx, bson.D{{Key: "intent", Value: in.ID}}); err != nil {
		return s.wrap("merge: roll back", err)
	}
	_, err = s.rekeys.DeleteOne(ctx, bson.D{{Key: "_id", Value: in.ID}})
	return s.wrap("merge: roll back", err)
}

// unmarkModel removes intent's mark from document id, counting the write
// in rev.
func unmarkModel(id int64, intent string) mongo.WriteModel {
	return mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: id}, {Key: "merging", Value: intent}}).
		SetUpdate(bson.D{{Key: "$unset", Value: bson.D{{Key: "merging", Value: ""}}}, {Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}})
}

// rollForward writes a committed merge's every step and marks it done.
// Each step is conditioned on the marks or idempotent, so it also
// finishes a merge another process stopped, and two processes may run it
// at once.
func (s *Store) rollForward(ctx context.Context, in *rekeyIntent) error {
	what := "merge into record " + itoa(in.SurvivorID)
	sm := in.member(in.SurvivorID)
	from, to := s.collection(sm.Archived), s.collection(in.ToArchive)
	survivorMarked := func() (bool, error) {
		n, err := from.CountDocuments(ctx, bson.D{{Key: "_id", Value: in.SurvivorID}, {Key: "merging", Value: in.ID}})
		return n > 0, err
	}
	marked, err := survivorMarked()
	if err != nil {
		return s.wrap(what, err)
	}
	// The merged history, while the survivor is still marked: once it is
	// replaced, ingest may trim its history, which a rewrite would bring
	// back. The entries carry the merge's id, so an ingest that read the
	// survivor before the mark cannot overwrite them.
	if marked && in.Staged > 0 {
		if err := s.copyStagedHistory(ctx, in); err != nil {
			return s.wrap(what+": history", err)
		}
	}
	if err := s.step("merge:history"); err != nil {
		return err
	}
	// The victims go before the survivor is written: one of them may have
	// the survivor's new key, in the table the survivor is written to.
	// Their content is in the staged survivor and history meanwhile.
	victims, byTable := in.victims()
	for archived, ids := range byTable {
		if _, err := s.collection(archived).DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "merging", Value: in.ID}}); err != nil {
			return s.wrap(what+": victims", err)
		}
	}
	if err := s.step("merge:victims"); err != nil {
		return err
	}
	if marked {
		if err := s.writeSurvivor(ctx, in, from, to, survivorMarked); err != nil {
			return s.wrap(what+": survivor", err)
		}
	}
	if err := s.step("merge:survivor"); err != nil {
		return err
	}
	for _, mb := range in.Members {
		if mb.Key == in.Key {
			continue
		}
		if _, err := s.keys.DeleteOne(ctx, bson.D{{Key: "_id", Value: mb.Key}, {Key: "id", Value: mb.ID}, {Key: "rekey", Value: bson.D{{Key: "$exists", Value: false}}}}); err != nil {
			return s.wrap(what+": keys", err)
		}
	}
	if _, err := s.keys.UpdateOne(ctx, bson.D{{Key: "_id", Value: in.Key}, {Key: "rekey", Value: in.ID}},
		bson.D{{Key: "$unset", Value: bson.D{{Key: "rekey", Value: ""}, {Key: "from", Value: ""}}}}); err != nil {
		return s.wrap(what+": keys", err)
	}
	if err := s.step("merge:keys"); err != nil {
		return err
	}
	if len(victims) > 0 {
		if _, err := s.history.DeleteMany(ctx, bson.D{{Key: "record_id", Value: bson.D{{Key: "$in", Value: victims}}}}); err != nil {
			return s.wrap(what+": old history", err)
		}
	}
	// The survivor's entries below the merged history; those above are
	// the merged ones or written by ingest after the merge.
	if _, err := s.history.DeleteMany(ctx, bson.D{{Key: "record_id", Value: in.SurvivorID}, {Key: "version", Value: bson.D{{Key: "$lt", Value: in.First}}}}); err != nil {
		return s.wrap(what+": old history", err)
	}
	if err := s.step("merge:old history"); err != nil {
		return err
	}
	_, err = s.journal.InsertOne(ctx, bson.D{{Key: "_id", Value: in.JournalSeq}, {Key: "kind", Value: crawlkeeper.RekeyJournal},
		{Key: "at", Value: in.JournalAt}, {Key: "body", Value: in.Journal}})
	if err != nil && !mongo.IsDuplicateKeyError(err) { // a duplicate: written before a crash
		return s.wrap(what+": journal", err)
	}
	if err := s.step("merge:journal"); err != nil {
		return err
	}
	if _, err := s.moves.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: in.IDs}}}, {Key: "rekey", Value: in.ID}}); err != nil {
		return s.wrap(what+": unlock", err)
	}
	if err := s.step("merge:unlocked"); err != nil {
		return err
	}
	if _, err := s.rekeys.UpdateOne(ctx, bson.D{{Key: "_id", Value: in.ID}, {Key: "phase", Value: phaseCommitted}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "phase", Value: phaseDone}, {Key: "at", Value: s.now().UnixMicro()}}}}); err != nil {
		return s.wrap(what, err)
	}
	if _, err := s.staged.DeleteMany(ctx, bson.D{{Key: "intent", Value: in.ID}}); err != nil {
		return s.wrap(what, err)
	}
	return s.step("merge:done")
}

// copyStagedHistory upserts a merge's staged history entries into the
// history, a bulk write of bulkChunk entries at a time.
func (s *Store) copyStagedHistory(ctx context.Context, in *rekeyIntent) error {
	cur, err := s.staged.Find(ctx, bson.D{{Key: "intent", Value: in.ID}, {Key: "n", Value: bson.D{{Key: "$gte", Value: 0}}}},
		options.Find().SetSort(bson.D{{Key: "intent", Value: 1}, {Key: "n", Value: 1}}).SetBatchSize(bulkChunk))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	var models []mongo.WriteModel
	flush := func() error {
		_, err := bulkChunks(ctx, s.history, models)
		models = models[:0]
		return err
	}
	for cur.Next(ctx) {
		var d stagedDoc
		if err := cur.Decode(&d); err != nil {
			return err
		}
		if d.History == nil {
			continue
		}
		models = append(models, mongo.NewReplaceOneModel().SetFilter(bson.D{{Key: "_id", Value: d.History.ID}}).SetReplacement(d.History).SetUpsert(true))
		if len(models) == bulkChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := cur.Err(); err != nil {
		return err
	}
	return flush()
}

// writeSurvivor replaces the marked survivor with its staged final
// document: in place when it stays in its table, otherwise inserted into
// the other and the marked copy deleted (a crash in between leaves both,
// under the merge's lock, and reads prefer the active one, the new).
func (s *Store) writeSurvivor(ctx context.Context, in *rekeyIntent, from, to *mongo.Collection, marked func() (bool, error)) error {
	var st stagedDoc
	if err := s.staged.FindOne(ctx, bson.D{{Key: "_id", Value: in.ID + ":s"}}).Decode(&st); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			// Deleted once the merge was done: another process finished
			// it since this one saw the survivor marked.
			if ok, merr := marked(); merr != nil || !ok {
				return merr
			}
		}
		return fmt.Errorf("read the staged survivor: %w", err)
	}
	heldErr := func(err error) error {
		return fmt.Errorf("key %s is held by a record outside the merge, which took it without a claim: %w", in.Key, err)
	}
	if from == to {
		_, err := from.ReplaceOne(ctx, bson.D{{Key: "_id", Value: in.SurvivorID}, {Key: "merging", Value: in.ID}}, st.Survivor)
		if mongo.IsDuplicateKeyError(err) {
			return heldErr(err)
		}
		return err
	}
	// Only while the marked copy is there: once it is gone, another
	// process finished this step and the record may have moved since.
	if ok, err := marked(); err != nil || !ok {
		return err
	}
	if _, err := to.InsertOne(ctx, st.Survivor); err != nil {
		if !mongo.IsDuplicateKeyError(err) {
			return err
		}
		n, cerr := to.CountDocuments(ctx, bson.D{{Key: "_id", Value: in.SurvivorID}})
		if cerr != nil {
			return cerr
		}
		if n == 0 {
			return heldErr(err)
		}
		// Inserted before a crash, or by another process.
	}
	_, err := from.DeleteOne(ctx, bson.D{{Key: "_id", Value: in.SurvivorID}, {Key: "merging", Value: in.ID}})
	return err
}
