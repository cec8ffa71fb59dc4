package mongodb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// # Re-keying without transactions
//
// A key change touches one record and two key claims; a merge touches
// every record of its group, their history and key claims, and the
// journal. Both are described by intent documents in the rekeys
// collection, written before their first write.
//
// Key changes: a page's changes share one intent. For each, the new key
// is claimed in the keys collection — a claim held by another record, or
// by an id reserved too recently to tell whether its record is still
// being inserted, leaves the change out — no other record may have the
// key in active or archive, and the record is updated only in the state
// it was read in and while no merge holds it. The claims the records no
// longer need are released and the intent removed; the repair settles an
// intent a crashed run left the same way once it is staleIntent old.
//
// Merges: one intent each, which goes through phases.
//
//   - planned: the intent is written with the rev of each record of the
//     group as read. The survivor's final document and the merged history
//     are staged in rekey_staged, a document each, never in the intent
//     (which would pass MongoDB's 16 MiB document limit for a large
//     group). The group is locked against moves (move intents of kind
//     rekey), the survivor's new key is claimed (a claim held by a record
//     of the group is taken over, and the claim notes from whom), and each
//     record is marked (merging: the intent's id, rev incremented) only at
//     the rev read. Last, no record outside the group may have the key.
//     When any of this fails — a record changed or is being moved, the key
//     is held outside the group — the merge is rolled back and reported as
//     not applied.
//   - committed: set only while the intent is still planned, so a
//     rollback by another process (below) and the commit exclude each
//     other. From here the merge is rolled forward: history, victims,
//     survivor, key claims, the survivor's older history, journal, locks.
//     Each step is conditioned on the marks — the survivor is replaced,
//     and the victims deleted, only while they carry the intent's mark —
//     so a step run again after a crash, or by two processes at once,
//     never undoes a write made after it.
//   - aborting: a rollback in progress: unmark, give the claim back,
//     unlock, delete the staged documents and the intent.
//   - done: finished. The intent stays for staleIntent as a tombstone: an
//     ingest that read a victim (or the survivor) before the mark may
//     still write that record's history after the merge deleted it, and
//     the repair deletes such late entries (as a purge's tombstone does);
//     Check buries them at once, and a later merge of the same records
//     first, applying only if there were none (it was planned from a
//     history that held them).
//
// No other writer changes a marked document: ingest's conditional updates
// and the event, processing and search writes filter on the mark's
// absence, and moves cannot lock a record a merge has locked (and check,
// once locked, that it is still as they read it). History entries a merge
// writes carry its id, and ingest never overwrites one: an ingest that
// read the survivor before the mark fails with a conflict instead of
// replacing a merged version with a stale one. An ingest that meets a
// mark, or a key a merge claimed, settles the intent — rolls a committed
// one forward, a planned one older than staleIntent (its process is
// presumed dead) back — and tries again, so a crashed rekey never blocks
// a delivery for longer than that.
//
// The repair — at the start of every RewriteKeys and MergeRecords call,
// by Open and by Check — rolls committed and aborting intents forward or
// back whatever their age, planned ones and key changes once they are
// stale, deletes done merges once stale, and deletes staged documents
// whose intent is gone; Check also clears marks whose intent is gone
// (left by a process that kept working after its planned intent was
// rolled back for it, then crashed).
//
// What this does not cover, and why it is left: a process that stalls for
// longer than staleIntent (a planned intent of its own is then rolled
// back, which it notices at its commit; an ingest's late history write
// after the tombstone is gone would stay as an orphan, as after a purge);
// a record that has the new key without a claim (stored before claims
// existed, or by an ingest whose claim another ingest released as stale)
// and appears after the check under the merge's claim, which makes the
// survivor's write fail on the unique index and the merge report it; and
// two processes rolling one merge forward whose survivor changes table,
// where the second checks the mark, and before its insert (one round
// trip later) the first finishes the merge and an archive pass moves the
// record back.

var _ crawlkeeper.RekeyStore = (*Store)(nil)

// Intent kinds of the rekeys collection.
const (
	rekeyKeys  = "keys"
	rekeyMerge = "merge"
)

// Phases of a merge intent (see the notes above).
const (
	phasePlanned   = "planned"
	phaseCommitted = "committed"
	phaseAborting  = "aborting"
	phaseDone      = "done"
)

// unmarked is the filter term of a write that must not touch a document a
// merge holds.
var unmarked = bson.E{Key: "merging", Value: bson.D{{Key: "$exists", Value: false}}}

// keyChangeDoc is one key change of an intent.
type keyChangeDoc struct {
	ID  int64  `bson:"id"`
	Old string `bson:"old"`
	New string `bson:"new"`
}

// mergeMember is one record of a merge's group as the merge read it.
type mergeMember struct {
	ID       int64 `bson:"id"`
	Archived bool  `bson:"archived"`
	// Rev is the rev read; the mark makes it Rev+1.
	Rev int64  `bson:"rev"`
	Key string `bson:"key"`
}

// rekeyIntent describes a key change or a merge in progress.
type rekeyIntent struct {
	ID   string `bson:"_id"`
	Kind string `bson:"kind"`
	// At is when the intent was written (a done merge: when it finished),
	// in Unix microseconds of the store's clock.
	At int64 `bson:"at"`
	// IDs are the records involved, so that ingest finds the intents of
	// the records it meets.
	IDs []int64 `bson:"ids"`
	// Changes are the key changes of a rekeyKeys intent.
	Changes []keyChangeDoc `bson:"changes,omitempty"`

	// A merge: its phase, the survivor's id, final key and table, the
	// group, the first version of the merged history and how many entries
	// are staged, and the journal entry with the sequence number taken
	// for it.
	Phase      string        `bson:"phase,omitempty"`
	SurvivorID int64         `bson:"survivor_id,omitempty"`
	Key        string        `bson:"key,omitempty"`
	ToArchive  bool          `bson:"to_archive,omitempty"`
	Members    []mergeMember `bson:"members,omitempty"`
	First      int64         `bson:"first,omitempty"`
	Staged     int           `bson:"staged,omitempty"`
	JournalSeq int64         `bson:"journal_seq,omitempty"`
	JournalAt  int64         `bson:"journal_at,omitempty"`
	Journal    []byte        `bson:"journal,omitempty"`
}

func (in *rekeyIntent) member(id int64) mergeMember {
	for _, m := range in.Members {
		if m.ID == id {
			return m
		}
	}
	return mergeMember{ID: id}
}

// victims returns the ids of the group the merge deletes, by table.
func (in *rekeyIntent) victims() (all []int64, byTable map[bool][]int64) {
	byTable = map[bool][]int64{}
	for _, m := range in.Members {
		if m.ID != in.SurvivorID {
			all = append(all, m.ID)
			byTable[m.Archived] = append(byTable[m.Archived], m.ID)
		}
	}
	return all, byTable
}

// stagedDoc is one document a merge stages: the survivor's final
// document (N is -1) or the N-th entry of the merged history.
type stagedDoc struct {
	ID       string      `bson:"_id"`
	Intent   string      `bson:"intent"`
	N        int         `bson:"n"`
	Survivor *recordDoc  `bson:"survivor,omitempty"`
	History  *historyDoc `bson:"history,omitempty"`
}

// claimDoc is a key claim (see the package notes). Rekey is set while a
// merge holds the claim for its survivor, and From when the merge took it
// over from a record of its group, to give it back on a rollback.
type claimDoc struct {
	Key   string `bson:"_id"`
	ID    int64  `bson:"id"`
	Rekey string `bson:"rekey,omitempty"`
	From  int64  `bson:"from,omitempty"`
}

func (s *Store) now() time.Time {
	if s.clock != nil {
		return s.clock()
	}
	return time.Now()
}

// staleBefore is the time before which an intent's process is presumed
// dead.
func (s *Store) staleBefore() time.Time { return s.now().Add(-staleIntent) }

func newToken() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
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

// RewriteKeys implements crawlkeeper.RekeyStore. For each change the new
// key is claimed, the record updated only in the state it was read in,
// and the claim it no longer needs released, under one intent. A change
// whose key another record holds, active or archived, is left out.
func (s *Store) RewriteKeys(ctx context.Context, changes []crawlkeeper.KeyChange) ([]int64, error) {
	done := []int64{}
	if len(changes) == 0 {
		return done, nil
	}
	if err := s.repairRekeys(ctx, s.staleBefore(), false); err != nil {
		return nil, err
	}
	in := &rekeyIntent{ID: fmt.Sprintf("keys:%d:%s", changes[0].State.ID, newToken()), Kind: rekeyKeys, At: s.now().UnixMicro()}
	for _, c := range changes {
		r, err := s.Get(ctx, c.State.ID)
		if crawlkeeper.ErrorCode(err) == crawlkeeper.ENOTFOUND {
			continue
		}
		if err != nil {
			return nil, err
		}
		in.Changes = append(in.Changes, keyChangeDoc{ID: c.State.ID, Old: r.Key, New: c.Key})
		in.IDs = append(in.IDs, c.State.ID)
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
	for _, c := range changes {
		oldKey, ok := old[c.State.ID]
		if !ok {
			continue
		}
		applied, err := s.rewriteKey(ctx, c, oldKey)
		if err != nil {
			return nil, err
		}
		if applied {
			done = append(done, c.State.ID)
		}
	}
	if err := s.finishKeyIntent(ctx, in); err != nil {
		return nil, err
	}
	return done, nil
}

// rewriteKey applies one key change and reports whether it applied.
func (s *Store) rewriteKey(ctx context.Context, c crawlkeeper.KeyChange, oldKey string) (bool, error) {
	id := c.State.ID
	if oldKey != c.Key {
		held, err := s.claimKey(ctx, c.Key, id)
		if err != nil {
			return false, err
		}
		if held {
			return false, nil
		}
	}
	if err := s.step("rekey:claimed"); err != nil {
		return false, err
	}
	// A record that has the key without a claim (stored before claims
	// existed) holds it too.
	others, err := s.keyHolders(ctx, c.Key, []int64{id})
	if err != nil {
		return false, s.wrap("rewrite keys", err)
	}
	applied := false
	if others == 0 {
		filter := bson.D{{Key: "_id", Value: id}, {Key: "version", Value: c.State.Version}, {Key: "last_updated_at", Value: c.State.LastUpdatedAt.UnixMicro()}, unmarked}
		update := bson.D{{Key: "$set", Value: bson.D{{Key: "key", Value: c.Key}, {Key: "key_parts", Value: nonNil(c.KeyParts)}}}, {Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}}
		res, err := s.collection(c.Archived).UpdateOne(ctx, filter, update)
		switch {
		case mongo.IsDuplicateKeyError(err):
			// The unique index: a record that took the key meanwhile.
		case err != nil:
			return false, s.wrap("rewrite key of record "+itoa(id), err)
		default:
			applied = res.MatchedCount == 1
		}
	}
	if err := s.step("rekey:updated"); err != nil {
		return false, err
	}
	if oldKey == c.Key {
		return applied, nil
	}
	// Release the claim the record no longer needs: the old key when the
	// key changed, the new one when the change was left out.
	release := oldKey
	if !applied {
		release = c.Key
	}
	if _, err := s.keys.DeleteOne(ctx, bson.D{{Key: "_id", Value: release}, {Key: "id", Value: id}, {Key: "rekey", Value: bson.D{{Key: "$exists", Value: false}}}}); err != nil {
		return false, s.wrap("rewrite keys", err)
	}
	return applied, nil
}

// keyHolders counts the records other than except that have key, active
// or archived.
func (s *Store) keyHolders(ctx context.Context, key string, except []int64) (int64, error) {
	var n int64
	for _, c := range []*mongo.Collection{s.active, s.archive} {
		k, err := c.CountDocuments(ctx, bson.D{{Key: "key", Value: key}, {Key: "_id", Value: bson.D{{Key: "$nin", Value: except}}}})
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

// claimKey claims key for record id and reports whether another record
// holds it. A claim left by a record that no longer exists, or by a
// merge rolled back, is released first (see releaseLeftClaim).
func (s *Store) claimKey(ctx context.Context, key string, id int64) (bool, error) {
	for try := 0; try < 4; try++ {
		_, err := s.keys.InsertOne(ctx, claimDoc{Key: key, ID: id})
		if err == nil {
			return false, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return false, s.wrap("claim key", err)
		}
		c, err := s.readClaim(ctx, key)
		if err != nil {
			return false, s.wrap("claim key", err)
		}
		if c == nil {
			continue
		}
		if c.ID == id && c.Rekey == "" {
			return false, nil
		}
		released, err := s.releaseLeftClaim(ctx, c)
		if err != nil {
			return false, s.wrap("claim key", err)
		}
		if !released {
			return true, nil
		}
	}
	return true, nil
}

// readClaim returns the claim of key, nil when it has none.
func (s *Store) readClaim(ctx context.Context, key string) (*claimDoc, error) {
	var c claimDoc
	err := s.keys.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&c)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// releaseLeftClaim changes a claim that no live writer needs and reports
// whether it did: a merge's claim whose intent is gone or finished goes
// back to the state before the merge (or becomes a plain claim of its
// holder, when the holder has the key), and a plain claim whose record
// exists in neither table is deleted — unless its id was reserved less
// than staleIntent ago, since an ingest claims a new record's key before
// it inserts the record.
func (s *Store) releaseLeftClaim(ctx context.Context, c *claimDoc) (bool, error) {
	if c.Rekey != "" {
		var in rekeyIntent
		err := s.rekeys.FindOne(ctx, bson.D{{Key: "_id", Value: c.Rekey}}).Decode(&in)
		if err == nil && in.Phase != phaseDone {
			return false, nil
		}
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return false, err
		}
		holder, err := s.getOne(ctx, bson.D{{Key: "_id", Value: c.ID}}, "record "+itoa(c.ID))
		if err != nil && crawlkeeper.ErrorCode(err) != crawlkeeper.ENOTFOUND {
			return false, err
		}
		if holder != nil && holder.Key == c.Key {
			_, err := s.keys.UpdateOne(ctx, bson.D{{Key: "_id", Value: c.Key}, {Key: "rekey", Value: c.Rekey}},
				bson.D{{Key: "$unset", Value: bson.D{{Key: "rekey", Value: ""}, {Key: "from", Value: ""}}}})
			return err == nil, err
		}
		return true, s.releaseMergeClaim(ctx, c.Key, c.Rekey)
	}
	exists, err := s.recordExists(ctx, c.ID)
	if err != nil || exists {
		return false, err
	}
	young, err := s.reservedRecently(ctx, c.ID)
	if err != nil || young {
		return false, err
	}
	res, err := s.keys.DeleteOne(ctx, bson.D{{Key: "_id", Value: c.Key}, {Key: "id", Value: c.ID}, {Key: "rekey", Value: bson.D{{Key: "$exists", Value: false}}}})
	if err != nil {
		return false, err
	}
	return res.DeletedCount == 1, nil
}

// recordExists reports whether record id is active or archived.
func (s *Store) recordExists(ctx context.Context, id int64) (bool, error) {
	for _, c := range []*mongo.Collection{s.active, s.archive} {
		n, err := c.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}})
		if err != nil || n > 0 {
			return n > 0, err
		}
	}
	return false, nil
}

// reservedRecently reports whether id was reserved (takeIDs) less than
// staleIntent ago. Reservations older than ten minutes are deleted now
// and then, so one not found is old.
func (s *Store) reservedRecently(ctx context.Context, id int64) (bool, error) {
	var r struct {
		Last int64 `bson:"last"`
		At   int64 `bson:"at"`
	}
	err := s.recordIDs.FindOne(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$lte", Value: id}}}},
		options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}})).Decode(&r)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return r.Last >= id && r.At >= s.staleBefore().UnixMicro(), nil
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
			// A claim a merge holds for the record is the merge's to settle.
			if _, err := s.keys.DeleteOne(ctx, bson.D{{Key: "_id", Value: k}, {Key: "id", Value: c.ID}, {Key: "rekey", Value: bson.D{{Key: "$exists", Value: false}}}}); err != nil {
				return s.wrap("rewrite keys", err)
			}
		}
	}
	_, err := s.rekeys.DeleteOne(ctx, bson.D{{Key: "_id", Value: in.ID}})
	return s.wrap("rewrite keys", err)
}

// markRef is a marked document met by a reader.
type markRef struct {
	archived bool
	id       int64
	intent   string
}

// settleMarks settles the intents of marks a reader met (settleIntent);
// a mark whose intent is gone or done is left over and removed. It
// reports whether anything changed, so that reading again may find the
// records free.
func (s *Store) settleMarks(ctx context.Context, marks []markRef) (bool, error) {
	byIntent := map[string][]markRef{}
	for _, m := range marks {
		byIntent[m.intent] = append(byIntent[m.intent], m)
	}
	progressed := false
	for id, ms := range byIntent {
		var in rekeyIntent
		err := s.rekeys.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&in)
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return false, s.wrap("settle a rekey merge", err)
		}
		if err == nil && in.Phase != phaseDone {
			p, err := s.settleIntent(ctx, &in, s.staleBefore())
			if err != nil {
				return false, err
			}
			progressed = progressed || p
			continue
		}
		for _, m := range ms {
			if _, err := s.collection(m.archived).UpdateOne(ctx, bson.D{{Key: "_id", Value: m.id}, {Key: "merging", Value: id}},
				bson.D{{Key: "$unset", Value: bson.D{{Key: "merging", Value: ""}}}, {Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}}); err != nil {
				return false, s.wrap("clear a left-over merge mark", err)
			}
		}
		progressed = true
	}
	return progressed, nil
}

// settleRecords settles the rekey intents that involve any of ids, as a
// writer does that found them held, and reports whether anything changed.
func (s *Store) settleRecords(ctx context.Context, ids []int64) (bool, error) {
	cur, err := s.rekeys.Find(ctx, bson.D{{Key: "ids", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return false, s.wrap("settle rekey intents", err)
	}
	var intents []*rekeyIntent
	if err := cur.All(ctx, &intents); err != nil {
		return false, s.wrap("settle rekey intents", err)
	}
	progressed := false
	for _, in := range intents {
		p, err := s.settleIntent(ctx, in, s.staleBefore())
		if err != nil {
			return false, err
		}
		progressed = progressed || p
	}
	return progressed, nil
}

// settleIntent takes an intent as far as a process other than its owner
// may, and reports whether it did anything: a committed merge is rolled
// forward and an aborting one back whatever their age; a planned merge
// and a key change only once written before olderThan (their process is
// presumed dead). A done merge is left to the repair.
func (s *Store) settleIntent(ctx context.Context, in *rekeyIntent, olderThan time.Time) (bool, error) {
	stale := olderThan.IsZero() || in.At < olderThan.UnixMicro()
	switch in.Kind {
	case rekeyKeys:
		if !stale {
			return false, nil
		}
		return true, s.finishKeyIntent(ctx, in)
	case rekeyMerge:
		switch in.Phase {
		case phaseCommitted:
			return true, s.rollForward(ctx, in)
		case phaseAborting:
			return true, s.rollBack(ctx, in)
		case phasePlanned:
			if !stale {
				return false, nil
			}
			return true, s.rollBack(ctx, in)
		case phaseDone:
			return false, nil
		}
		return false, fmt.Errorf("%w: rekey intent %s kept the whole merge in itself; finish it by running `crawlkeeper check` with the version that wrote it", errOldIntent, in.ID)
	}
	return false, fmt.Errorf("repair rekey: unknown intent kind %q", in.Kind)
}

// errOldIntent marks a merge intent written by a version before merges
// had phases. Open leaves it (ingest never meets one); rekey and Check
// report it.
var errOldIntent = errors.New("a merge was interrupted under an older crawlkeeper")

// repairRekeys settles every rekey intent that is not done
// (settleIntent, with olderThan; zero settles every one), buries the done
// merges written before olderThan (buryMerge) and deletes them, and
// deletes staged documents whose intent is gone. With buryAll it buries
// every done merge, however young (Check: a late entry is not history).
func (s *Store) repairRekeys(ctx context.Context, olderThan time.Time, buryAll bool) error {
	intents, err := s.findIntents(ctx, bson.D{{Key: "phase", Value: bson.D{{Key: "$ne", Value: phaseDone}}}})
	if err != nil {
		return s.wrap("repair rekey", err)
	}
	var old error
	for _, in := range intents {
		if _, err := s.settleIntent(ctx, in, olderThan); errors.Is(err, errOldIntent) {
			old = err // the others are settled all the same
		} else if err != nil {
			return err
		}
	}
	done := bson.D{{Key: "phase", Value: phaseDone}}
	before := int64(math.MaxInt64)
	if !olderThan.IsZero() {
		before = olderThan.UnixMicro()
	}
	if !buryAll {
		done = append(done, bson.E{Key: "at", Value: bson.D{{Key: "$lt", Value: before}}})
	}
	if intents, err = s.findIntents(ctx, done); err != nil {
		return s.wrap("repair rekey", err)
	}
	for _, in := range intents {
		if _, err := s.buryMerge(ctx, in, in.At < before); err != nil {
			return err
		}
	}
	if err := s.cleanStaged(ctx); err != nil {
		return err
	}
	return old
}

// findIntents returns the rekey intents that match filter, oldest first.
func (s *Store) findIntents(ctx context.Context, filter bson.D) ([]*rekeyIntent, error) {
	cur, err := s.rekeys.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "at", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var intents []*rekeyIntent
	err = cur.All(ctx, &intents)
	return intents, err
}

// buryMerge deletes the history that an ingest which read a victim (or
// the survivor) before a done merge's mark wrote after the merge deleted
// that history, and with remove the intent too. It reports whether it
// deleted any entry.
func (s *Store) buryMerge(ctx context.Context, in *rekeyIntent, remove bool) (bool, error) {
	var n int64
	victims, _ := in.victims()
	if len(victims) > 0 {
		res, err := s.history.DeleteMany(ctx, bson.D{{Key: "record_id", Value: bson.D{{Key: "$in", Value: victims}}}})
		if err != nil {
			return false, s.wrap("repair rekey", err)
		}
		n += res.DeletedCount
	}
	res, err := s.history.DeleteMany(ctx, bson.D{{Key: "record_id", Value: in.SurvivorID}, {Key: "version", Value: bson.D{{Key: "$lt", Value: in.First}}},
		{Key: "merge", Value: bson.D{{Key: "$exists", Value: false}}}})
	if err != nil {
		return false, s.wrap("repair rekey", err)
	}
	n += res.DeletedCount
	if remove {
		if _, err := s.rekeys.DeleteOne(ctx, bson.D{{Key: "_id", Value: in.ID}, {Key: "phase", Value: phaseDone}}); err != nil {
			return false, s.wrap("repair rekey", err)
		}
	}
	return n > 0, nil
}

// buriedLate buries the done merges that involve any of ids (buryMerge)
// and reports whether any late history was there: a merge planned from
// a history that held such an entry must not apply.
func (s *Store) buriedLate(ctx context.Context, ids []int64) (bool, error) {
	intents, err := s.findIntents(ctx, bson.D{{Key: "phase", Value: phaseDone}, {Key: "ids", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return false, s.wrap("merge", err)
	}
	late := false
	for _, in := range intents {
		l, err := s.buryMerge(ctx, in, false)
		if err != nil {
			return false, err
		}
		late = late || l
	}
	return late, nil
}

// cleanStaged deletes staged documents whose intent is gone or done (a
// crash after the merge finished, or a process that staged after its
// intent was rolled back for it).
func (s *Store) cleanStaged(ctx context.Context) error {
	// A find rather than distinct, which FerretDB 1.24 refuses when the
	// driver adds maxTimeMS (a context with a deadline).
	cur, err := s.staged.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "intent", Value: 1}}))
	if err != nil {
		return s.wrap("repair rekey", err)
	}
	var docs []struct {
		Intent string `bson:"intent"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return s.wrap("repair rekey", err)
	}
	seen := map[string]bool{}
	for _, d := range docs {
		id := d.Intent
		if seen[id] {
			continue
		}
		seen[id] = true
		n, err := s.rekeys.CountDocuments(ctx, bson.D{{Key: "_id", Value: id}, {Key: "phase", Value: bson.D{{Key: "$ne", Value: phaseDone}}}})
		if err != nil {
			return s.wrap("repair rekey", err)
		}
		if n > 0 {
			continue
		}
		if _, err := s.staged.DeleteMany(ctx, bson.D{{Key: "intent", Value: id}}); err != nil {
			return s.wrap("repair rekey", err)
		}
	}
	return nil
}

// clearLeftMarks removes the marks whose intent is gone or done, which a
// process left that kept working after its planned intent was rolled back
// for it. It reads every marked document, so only Check runs it.
func (s *Store) clearLeftMarks(ctx context.Context) error {
	var marks []markRef
	for _, archived := range []bool{false, true} {
		docs, err := findDocs(ctx, s.collection(archived), bson.D{{Key: "merging", Value: bson.D{{Key: "$exists", Value: true}}}},
			options.Find().SetProjection(bson.D{{Key: "merging", Value: 1}}))
		if err != nil {
			return s.wrap("check merge marks", err)
		}
		for _, d := range docs {
			marks = append(marks, markRef{archived: archived, id: d.ID, intent: d.Merging})
		}
	}
	if len(marks) == 0 {
		return nil
	}
	// Live intents are settled as far as their age allows; left-over
	// marks go.
	_, err := s.settleMarks(ctx, marks)
	return err
}
