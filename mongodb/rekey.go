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

// # Re-keying without transactions
//
// A key change touches the record and two key claims; a merge touches
// every record of its group, their history and key claims, and the
// journal. Each is described in full by an intent document in the rekeys
// collection, inserted before the first write and removed after the last.
// Every step of an intent is idempotent (replacements, upserts and deletes
// by id; the journal entry's sequence number is taken before the intent is
// written), so the repair — run at the start of every RewriteKeys and
// MergeRecords call and by Check — rolls an interrupted intent forward:
// rerunning rekey after a crash completes what the crash stopped, and no
// record or version is lost, because the intent holds the merged record
// and its whole history until they are written.

var _ crawlkeeper.RekeyStore = (*Store)(nil)

// Intent kinds of the rekeys collection.
const (
	rekeyKeys  = "keys"
	rekeyMerge = "merge"
)

// keyChangeDoc is one key change of an intent.
type keyChangeDoc struct {
	ID  int64  `bson:"id"`
	Old string `bson:"old"`
	New string `bson:"new"`
}

// rekeyIntent describes a key change or a merge in progress.
type rekeyIntent struct {
	ID   string `bson:"_id"`
	Kind string `bson:"kind"`
	At   int64  `bson:"at"`
	// Changes are the key changes of a rekeyKeys intent.
	Changes []keyChangeDoc `bson:"changes,omitempty"`
	// A merge: the survivor's final document, the ids and old keys of the
	// group, the survivor's whole history, and the journal entry with the
	// sequence number taken for it.
	Survivor   *recordDoc   `bson:"survivor,omitempty"`
	Group      []int64      `bson:"group,omitempty"`
	OldKeys    []string     `bson:"old_keys,omitempty"`
	History    []historyDoc `bson:"history,omitempty"`
	JournalSeq int64        `bson:"journal_seq,omitempty"`
	JournalAt  int64        `bson:"journal_at,omitempty"`
	Journal    []byte       `bson:"journal,omitempty"`
}

// RewriteKeys implements crawlkeeper.RekeyStore. For each change the new
// key is claimed, the record updated only in the state it was read in,
// and the claim it no longer needs released, under one intent.
func (s *Store) RewriteKeys(ctx context.Context, changes []crawlkeeper.KeyChange) ([]int64, error) {
	done := []int64{}
	if len(changes) == 0 {
		return done, nil
	}
	if err := s.repairRekeys(ctx); err != nil {
		return nil, err
	}
	in := &rekeyIntent{ID: fmt.Sprintf("keys:%d:%d", changes[0].State.ID, time.Now().UnixNano()), Kind: rekeyKeys, At: time.Now().UnixMicro()}
	for _, c := range changes {
		r, err := s.Get(ctx, c.State.ID)
		if crawlkeeper.ErrorCode(err) == crawlkeeper.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, err
		}
		in.Changes = append(in.Changes, keyChangeDoc{ID: c.State.ID, Old: r.Key, New: c.Key})
	}
	if len(in.Changes) == 0 {
		return done, nil
	}
	if _, err := s.rekeys.InsertOne(ctx, in); err != nil {
		return nil, s.wrap("rewrite keys", err)
	}
	if err := s.step("rekey:intent"); err != nil {
		return nil, err
	}
	old := map[int64]string{}
	for _, c := range in.Changes {
		old[c.ID] = c.Old
	}
	var conflict error
	for _, c := range changes {
		oldKey, ok := old[c.State.ID]
		if !ok {
			continue
		}
		if err := s.claimKey(ctx, c.Key, c.State.ID); err != nil {
			if crawlkeeper.ErrorCode(err) == crawlkeeper.ECONFLICT {
				conflict = err
				break
			}
			return nil, err
		}
		if err := s.step("rekey:claimed"); err != nil {
			return nil, err
		}
		filter := bson.D{{Key: "_id", Value: c.State.ID}, {Key: "version", Value: c.State.Version}, {Key: "last_updated_at", Value: c.State.LastUpdatedAt.UnixMicro()}}
		update := bson.D{{Key: "$set", Value: bson.D{{Key: "key", Value: c.Key}, {Key: "key_parts", Value: nonNil(c.KeyParts)}}}, {Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}}
		res, err := s.collection(c.Archived).UpdateOne(ctx, filter, update)
		if err != nil {
			return nil, s.wrap("rewrite key of record "+itoa(c.State.ID), err)
		}
		if res.ModifiedCount == 1 {
			done = append(done, c.State.ID)
		}
		if err := s.step("rekey:updated"); err != nil {
			return nil, err
		}
		if oldKey == c.Key {
			continue
		}
		// Release the claim the record no longer needs: the old key when
		// the key changed, the new one when the record had moved on.
		release := oldKey
		if res.ModifiedCount != 1 {
			release = c.Key
		}
		if _, err := s.keys.DeleteOne(ctx, bson.D{{Key: "_id", Value: release}, {Key: "id", Value: c.State.ID}}); err != nil {
			return nil, s.wrap("rewrite keys", err)
		}
	}
	if err := s.finishKeyIntent(ctx, in); err != nil {
		return nil, err
	}
	if conflict != nil {
		return nil, conflict
	}
	return done, nil
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

func (s *Store) collection(archived bool) *mongo.Collection {
	if archived {
		return s.archive
	}
	return s.active
}

// claimKey claims key for record id. A claim held by another record that
// still exists is a conflict; a claim left by a record that no longer
// exists is taken over.
func (s *Store) claimKey(ctx context.Context, key string, id int64) error {
	_, err := s.keys.InsertOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "id", Value: id}})
	if err == nil || !mongo.IsDuplicateKeyError(err) {
		return s.wrap("claim key", err)
	}
	var k struct {
		ID int64 `bson:"id"`
	}
	if err := s.keys.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&k); err != nil {
		if errors.Is(err, mongo.ErrNoDocuments) {
			return s.claimKey(ctx, key, id)
		}
		return s.wrap("claim key", err)
	}
	if k.ID == id {
		return nil
	}
	for _, c := range []*mongo.Collection{s.active, s.archive} {
		n, err := c.CountDocuments(ctx, bson.D{{Key: "_id", Value: k.ID}})
		if err != nil {
			return s.wrap("claim key", err)
		}
		if n > 0 {
			return &crawlkeeper.Error{Code: crawlkeeper.ECONFLICT, Message: fmt.Sprintf("key %s is held by record %d; run rekey again", key, k.ID)}
		}
	}
	_, err = s.keys.UpdateOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "id", Value: k.ID}}, bson.D{{Key: "$set", Value: bson.D{{Key: "id", Value: id}}}})
	return s.wrap("claim key", err)
}

// finishKeyIntent settles the claims of a key-change intent — each record
// keeps the claim of the key it has and loses the other — and removes it.
func (s *Store) finishKeyIntent(ctx context.Context, in *rekeyIntent) error {
	for _, c := range in.Changes {
		if c.Old == c.New {
			continue
		}
		r, err := s.Get(ctx, c.ID)
		var has string
		switch {
		case crawlkeeper.ErrorCode(err) == crawlkeeper.ENOTFOUND:
		case err != nil:
			return err
		default:
			has = r.Key
		}
		for _, k := range []string{c.Old, c.New} {
			if k == has {
				continue
			}
			if _, err := s.keys.DeleteOne(ctx, bson.D{{Key: "_id", Value: k}, {Key: "id", Value: c.ID}}); err != nil {
				return s.wrap("rewrite keys", err)
			}
		}
	}
	_, err := s.rekeys.DeleteOne(ctx, bson.D{{Key: "_id", Value: in.ID}})
	return s.wrap("rewrite keys", err)
}

// MergeRecords implements crawlkeeper.RekeyStore: for each merge in turn
// the group is read, and when every record is in the state the merge was
// decided on (and none is being moved), an intent with the merged record
// and history is written and rolled forward (see the notes at the top of
// this file).
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
	if err := s.repairRekeys(ctx); err != nil {
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

// mergeOne applies one merge under its own intent.
func (s *Store) mergeOne(ctx context.Context, m *crawlkeeper.RekeyMerge) (bool, error) {
	ids := m.IDs()
	moving, err := s.moving(ctx, ids)
	if err != nil {
		return false, s.wrap("merge", err)
	}
	if len(moving) > 0 {
		return false, nil
	}
	type state struct {
		archived bool
		doc      *recordDoc
	}
	cur := map[int64]state{}
	var rev int64
	for _, archived := range []bool{false, true} {
		docs, err := findDocs(ctx, s.collection(archived), bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
			options.Find().SetProjection(bson.D{{Key: "version", Value: 1}, {Key: "last_updated_at", Value: 1}, {Key: "rev", Value: 1}}))
		if err != nil {
			return false, s.wrap("merge", err)
		}
		for _, d := range docs {
			if _, dup := cur[d.ID]; dup {
				return false, nil // in both collections: a move in flight
			}
			cur[d.ID] = state{archived: archived, doc: d}
			rev = max(rev, d.Rev)
		}
	}
	if !m.Holds(func(id int64) (bool, int64, time.Time, bool) {
		st, ok := cur[id]
		if !ok {
			return false, 0, time.Time{}, false
		}
		return st.archived, st.doc.Version, crawlkeeper.MicrosTime(st.doc.LastUpdatedAt), true
	}) {
		return false, nil
	}
	seq, err := s.takeIDs(ctx, s.journalSeq, 1)
	if err != nil {
		return false, s.wrap("merge", err)
	}
	in := &rekeyIntent{ID: fmt.Sprintf("merge:%d", m.Survivor.ID), Kind: rekeyMerge, At: time.Now().UnixMicro(),
		Survivor: toDoc(m.Survivor, rev+1), Group: ids, JournalSeq: seq, JournalAt: m.At.UnixMicro(), Journal: m.JournalBody()}
	for _, f := range m.From {
		in.OldKeys = append(in.OldKeys, f.Key)
	}
	for _, h := range m.History {
		in.History = append(in.History, historyDoc{ID: historyID(h.RecordID, h.Version), RecordID: h.RecordID, Version: h.Version,
			Item: h.Item, ContentHash: h.ContentHash, ValidFrom: h.ValidFrom.UnixMicro(), ValidTo: h.ValidTo.UnixMicro()})
	}
	if _, err := s.rekeys.InsertOne(ctx, in); err != nil {
		if mongo.IsDuplicateKeyError(err) {
			return false, nil // another process merges into the survivor
		}
		return false, s.wrap("merge", err)
	}
	if err := s.step("merge:intent"); err != nil {
		return false, err
	}
	if err := s.finishMerge(ctx, in); err != nil {
		return false, err
	}
	return true, nil
}

// finishMerge writes a merge intent's every step and removes the intent.
// Each step is idempotent, so it also rolls an interrupted merge forward.
func (s *Store) finishMerge(ctx context.Context, in *rekeyIntent) error {
	d := in.Survivor
	var victims []int64
	for _, id := range in.Group {
		if id != d.ID {
			victims = append(victims, id)
		}
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"history", func() error {
			if len(in.History) == 0 {
				return nil
			}
			models := make([]mongo.WriteModel, len(in.History))
			for i, h := range in.History {
				models[i] = mongo.NewReplaceOneModel().SetFilter(bson.D{{Key: "_id", Value: h.ID}}).SetReplacement(h).SetUpsert(true)
			}
			_, err := bulkChunks(ctx, s.history, models)
			return err
		}},
		{"victims", func() error {
			for _, c := range []*mongo.Collection{s.active, s.archive} {
				if _, err := c.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: victims}}}}); err != nil {
					return err
				}
			}
			return nil
		}},
		{"survivor", func() error {
			to, other := s.active, s.archive
			if d.ArchivedAt != nil {
				to, other = s.archive, s.active
			}
			if _, err := other.DeleteOne(ctx, bson.D{{Key: "_id", Value: d.ID}}); err != nil {
				return err
			}
			_, err := to.ReplaceOne(ctx, bson.D{{Key: "_id", Value: d.ID}}, d, options.Replace().SetUpsert(true))
			return err
		}},
		{"keys", func() error {
			if _, err := s.keys.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.Key}}, bson.D{{Key: "$set", Value: bson.D{{Key: "id", Value: d.ID}}}}, options.UpdateOne().SetUpsert(true)); err != nil {
				return err
			}
			for _, k := range in.OldKeys {
				if k == d.Key {
					continue
				}
				if _, err := s.keys.DeleteOne(ctx, bson.D{{Key: "_id", Value: k}, {Key: "id", Value: bson.D{{Key: "$in", Value: in.Group}}}}); err != nil {
					return err
				}
			}
			return nil
		}},
		{"old history", func() error {
			if len(victims) > 0 {
				if _, err := s.history.DeleteMany(ctx, bson.D{{Key: "record_id", Value: bson.D{{Key: "$in", Value: victims}}}}); err != nil {
					return err
				}
			}
			first := d.Version - int64(len(in.History))
			_, err := s.history.DeleteMany(ctx, bson.D{{Key: "record_id", Value: d.ID}, {Key: "version", Value: bson.D{{Key: "$lt", Value: first}}}})
			return err
		}},
		{"journal", func() error {
			_, err := s.journal.InsertOne(ctx, bson.D{{Key: "_id", Value: in.JournalSeq}, {Key: "kind", Value: crawlkeeper.RekeyJournal},
				{Key: "at", Value: in.JournalAt}, {Key: "body", Value: in.Journal}})
			if mongo.IsDuplicateKeyError(err) {
				return nil // written before a crash
			}
			return err
		}},
	}
	for _, st := range steps {
		if err := st.run(); err != nil {
			return s.wrap("merge into record "+itoa(d.ID)+": "+st.name, err)
		}
		if err := s.step("merge:" + st.name); err != nil {
			return err
		}
	}
	_, err := s.rekeys.DeleteOne(ctx, bson.D{{Key: "_id", Value: in.ID}})
	return s.wrap("merge", err)
}

// repairRekeys rolls forward every rekey intent a crashed process left.
// A rekey run is one process; intents of one still running elsewhere are
// rolled forward too, which is harmless because every step is idempotent.
func (s *Store) repairRekeys(ctx context.Context) error {
	cur, err := s.rekeys.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "at", Value: 1}}))
	if err != nil {
		return s.wrap("repair rekey", err)
	}
	var intents []*rekeyIntent
	if err := cur.All(ctx, &intents); err != nil {
		return s.wrap("repair rekey", err)
	}
	for _, in := range intents {
		switch in.Kind {
		case rekeyKeys:
			err = s.finishKeyIntent(ctx, in)
		case rekeyMerge:
			err = s.finishMerge(ctx, in)
		default:
			err = fmt.Errorf("repair rekey: unknown intent kind %q", in.Kind)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
