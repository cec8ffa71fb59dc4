package mongodb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The embedded monitor's persistence: crawlkeeper.MonitorPersister over
// four collections, without multi-document transactions.
//
//   - monitor_targets: the target dictionary, {_id: id, name}. Ids are
//     dense from 0: a writer inserts its new names at the ids right after
//     the dictionary it read, in one ordered insert, so two writers that
//     read the same dictionary collide on _id (or on the unique name) and
//     the loser starts over on the new dictionary. (The _ids of the
//     dictionary and the log are fixed-width hexadecimal strings, see
//     seqID.)
//   - monitor_log: one document per write, {_id: seq, body}. The sequence
//     number is taken by the insert itself: a writer inserts its entry
//     with the number after the highest it knows; when another writer got
//     there first the unique _id rejects the insert and the writer tries
//     the next number.
//     An atomic counter ($inc through findAndModify) is what one would
//     use on MongoDB, but FerretDB 1.24 runs findAndModify as a read
//     followed by a write (see the README), so concurrent increments
//     would hand out one number twice there; and a counter leaves a gap
//     when a process dies between taking a number and writing its entry.
//     Taking the number by inserting the entry leaves no gap to skip: an
//     entry is visible before the next number can be taken, so the log
//     is dense and in insertion order, and a reader that has applied
//     entries up to n and reads n+1 next has missed nothing. The highest
//     entry is never deleted, so numbers are never reused.
//   - monitor_snapshots: {_id: seq}, one per fold: the parts hold the
//     state up to seq. The highest is the current snapshot.
//   - monitor_parts: snapshot parts, split into chunks under the 16 MB
//     document limit: {name, v, token, i, n, body}, where v is the fold
//     that wrote it and token tells apart two processes folding at the
//     same v. A fold writes only the parts that changed since the
//     snapshot it started from, then inserts its snapshot document. The
//     state of a part at snapshot s is its complete version with the
//     highest v at or below s: a part that changed after an earlier fold
//     was rewritten by every later fold that saw the change, and a
//     version written by a fold that died before its snapshot document
//     still holds the state at its v, which no later change has
//     overtaken unless a higher version exists.
//
// Writers do not exclude each other (there are no transactions to do it
// with); what UpdateMonitor keeps of a failed run are dictionary names
// without marks and parts of a fold nobody uses, both harmless, the parts
// removed by a later fold. Reads are not one snapshot either, so a
// view pins what it reads: the current snapshot and the highest log entry
// when it starts, then the dictionary (which holds every name those
// entries use, since names are inserted before their entry), then only
// log entries up to the pinned one. When a concurrent fold removed what a
// view needed (a log entry, a part version), the view sees a gap or a
// missing snapshot, and runs again on the newer state.
//
// Marks of ingested items are written by the monitor right after the
// records (the command line's ingest and serve do it before they answer),
// since no transaction can hold both.

var _ crawlkeeper.MonitorPersister = (*Store)(nil)

// errRetry tells the monitor's View and Update loops that a concurrent
// writer changed what this run read; running it again converges.
var errRetry = errors.New("the monitor changed while it was read")

// monitorAttempts bounds how often a monitor read or write runs again
// after a concurrent change.
const monitorAttempts = 20

// maxPartChunk is the size of the chunks a snapshot part is split into,
// well under MongoDB's 16 MB document limit.
const maxPartChunk = 8 << 20

// maxLogBody bounds one log entry, which is one document. A batch of marks
// encodes to a few kilobytes per round and bucket, so only a pathological
// batch comes near it.
const maxLogBody = 15 << 20

// UpdateMonitor implements crawlkeeper.MonitorPersister. fn runs again
// (with a short random pause) when a concurrent writer took the
// dictionary ids it wanted or a fold removed what it read.
func (s *Store) UpdateMonitor(ctx context.Context, fn func(tx crawlkeeper.MonitorTx) error) error {
	return s.monitorRun(ctx, func(t *monitorTx) error { return fn(t) })
}

// ViewMonitor implements crawlkeeper.MonitorPersister.
func (s *Store) ViewMonitor(ctx context.Context, fn func(v crawlkeeper.MonitorView) error) error {
	return s.monitorRun(ctx, func(t *monitorTx) error { return fn(t) })
}

func (s *Store) monitorRun(ctx context.Context, fn func(t *monitorTx) error) error {
	var err error
	for attempt := 1; attempt <= monitorAttempts; attempt++ {
		err = fn(&monitorTx{ctx: ctx, s: s})
		if !errors.Is(err, errRetry) || ctx.Err() != nil {
			break
		}
		if attempt > 1 {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(mrand.IntN(attempt*5)+1) * time.Millisecond):
			}
		}
	}
	if errors.Is(err, errRetry) {
		return &crawlkeeper.Error{Code: crawlkeeper.ECONFLICT, Message: "monitor: concurrent writers kept changing it; retry", Err: err}
	}
	return s.wrap("monitor", err)
}

// monitorTx is one run of a monitor read or write (see above).
type monitorTx struct {
	ctx context.Context
	s   *Store

	pinned bool
	snap   int64 // the current snapshot when the run started
	high   int64 // the highest log entry then

	// parts written by PutPart, stored by FoldLog (which knows the fold's
	// sequence number); nil bodies delete.
	parts map[string][]byte
}

// pin reads the current snapshot, then the highest log entry, once per
// run and before anything else.
func (t *monitorTx) pin() error {
	if t.pinned {
		return nil
	}
	var err error
	if t.snap, err = highestID(t.ctx, t.s.monSnaps); err != nil {
		return fmt.Errorf("monitor: read snapshot: %w", err)
	}
	if t.high, err = t.s.highestLog(t.ctx, max(t.s.logHint.Load(), t.snap)); err != nil {
		return fmt.Errorf("monitor: read log: %w", err)
	}
	t.high = max(t.high, t.snap)
	t.s.noteLog(t.high)
	t.pinned = true
	return nil
}

// noteLog records that log entry seq exists, as a starting point for the
// next search of the highest.
func (s *Store) noteLog(seq int64) {
	for {
		h := s.logHint.Load()
		if seq <= h || s.logHint.CompareAndSwap(h, seq) {
			return
		}
	}
}

// highestID returns the highest integer _id of c, 0 when c is empty. It
// reads the whole collection on FerretDB, which sorts in the client: the
// snapshots collection it serves holds two or three documents.
func highestID(ctx context.Context, c *mongo.Collection) (int64, error) {
	var d struct {
		ID int64 `bson:"_id"`
	}
	err := c.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}}).SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	return d.ID, err
}

// seqID is the _id of log entry (or dictionary id) n: fixed-width hex, so
// that string order is number order. FerretDB answers a lookup by _id
// from its index only for string and ObjectID values; with integer _ids
// every lookup read the whole collection.
func seqID(n int64) string { return fmt.Sprintf("%016x", n) }

func parseSeqID(id string) (int64, error) {
	n, err := strconv.ParseInt(id, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("monitor: malformed _id %q", id)
	}
	return n, nil
}

// highestLogID returns the highest log entry by a sorted read, 0 when the
// log is empty.
func highestLogID(ctx context.Context, c *mongo.Collection) (int64, error) {
	var d struct {
		ID string `bson:"_id"`
	}
	err := c.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}}).SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return parseSeqID(d.ID)
}

// exists reports whether c holds a document with _id seqID(n).
func exists(ctx context.Context, c *mongo.Collection, n int64) (bool, error) {
	id := seqID(n)
	err := c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	return err == nil, err
}

// highestLog returns the highest log entry, searching up from hint, an
// entry known to have existed. The log is dense from its lowest entry to
// its highest, so entry x exists exactly when x is between them: the
// search doubles its step from hint until it finds a missing entry, then
// halves the interval, a few lookups by _id instead of a sorted read of
// the whole log (which FerretDB would decode document by document). When
// a fold removed the hint meanwhile, it reads the highest directly.
func (s *Store) highestLog(ctx context.Context, hint int64) (int64, error) {
	lo := max(hint, 1)
	ok, err := exists(ctx, s.monLog, lo)
	if err != nil {
		return 0, err
	}
	if !ok {
		if hint == 0 {
			return 0, nil // nothing was ever folded, so the log is empty
		}
		return highestLogID(ctx, s.monLog)
	}
	hi := lo + 1 // the first entry known to be missing, once found
	for step := int64(1); ; step *= 2 {
		ok, err := exists(ctx, s.monLog, lo+step)
		if err != nil {
			return 0, err
		}
		if !ok {
			hi = lo + step
			break
		}
		lo += step
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := exists(ctx, s.monLog, mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

func (t *monitorTx) TargetsFrom(from uint32, fn func(id uint32, name string) error) error {
	if err := t.pin(); err != nil {
		return err
	}
	// A few new names, the usual case, are read by _id; ids are dense, so
	// the first one missing ends the dictionary.
	next := int64(from)
	for ; next < int64(from)+pointReads; next++ {
		var d struct {
			Name []byte `bson:"name"`
		}
		err := t.s.monTargets.FindOne(t.ctx, bson.D{{Key: "_id", Value: seqID(next)}}).Decode(&d)
		if errors.Is(err, mongo.ErrNoDocuments) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("monitor: read targets: %w", err)
		}
		if err := fn(uint32(next), string(d.Name)); err != nil {
			return err
		}
	}
	cur, err := t.s.monTargets.Find(t.ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: seqID(next)}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(10000))
	if err != nil {
		return fmt.Errorf("monitor: read targets: %w", err)
	}
	defer cur.Close(t.ctx)
	for cur.Next(t.ctx) {
		var d struct {
			ID   string `bson:"_id"`
			Name []byte `bson:"name"`
		}
		if err := cur.Decode(&d); err != nil {
			return fmt.Errorf("monitor: read targets: %w", err)
		}
		id, err := parseSeqID(d.ID)
		if err != nil {
			return err
		}
		if id != next {
			// An insert of later names is still running: the entries this
			// run reads use none of them.
			break
		}
		if err := fn(uint32(id), string(d.Name)); err != nil {
			return err
		}
		next++
	}
	return cur.Err()
}

func (t *monitorTx) SnapshotSeq() (int64, error) {
	if err := t.pin(); err != nil {
		return 0, err
	}
	return t.snap, nil
}

// partDoc is one chunk of a snapshot part.
type partDoc struct {
	ID    string `bson:"_id"`
	Name  []byte `bson:"name"`
	V     int64  `bson:"v"`
	Token string `bson:"token"`
	I     int    `bson:"i"`
	N     int    `bson:"n"`
	Tomb  bool   `bson:"tomb,omitempty"`
	Body  []byte `bson:"body,omitempty"`
}

// partVersion is one complete or incomplete version of a part.
type partVersion struct {
	name   string
	v      int64
	token  string
	n      int
	tomb   bool
	chunks map[int]string // i → _id
}

func (pv *partVersion) complete() bool { return len(pv.chunks) == pv.n }

// partVersions reads the chunk headers of parts written at or below v and
// groups them by version.
func (t *monitorTx) partVersions(v int64) (map[string][]*partVersion, error) {
	cur, err := t.s.monParts.Find(t.ctx, bson.D{{Key: "v", Value: bson.D{{Key: "$lte", Value: v}}}},
		options.Find().SetProjection(bson.D{{Key: "body", Value: 0}}).SetBatchSize(10000))
	if err != nil {
		return nil, err
	}
	var docs []partDoc
	if err := cur.All(t.ctx, &docs); err != nil {
		return nil, err
	}
	type key struct {
		name, token string
		v           int64
	}
	byKey := map[key]*partVersion{}
	out := map[string][]*partVersion{}
	for _, d := range docs {
		k := key{string(d.Name), d.Token, d.V}
		pv := byKey[k]
		if pv == nil {
			pv = &partVersion{name: k.name, v: d.V, token: d.Token, n: d.N, tomb: d.Tomb, chunks: map[int]string{}}
			byKey[k] = pv
			out[k.name] = append(out[k.name], pv)
		}
		pv.chunks[d.I] = d.ID
	}
	for _, vs := range out {
		// Newest first; between two folds at the same v, the lower token.
		sort.Slice(vs, func(i, j int) bool {
			if vs[i].v != vs[j].v {
				return vs[i].v > vs[j].v
			}
			return vs[i].token < vs[j].token
		})
	}
	return out, nil
}

// current returns the version of a part that holds its state: the newest
// complete one.
func current(vs []*partVersion) *partVersion {
	for _, pv := range vs {
		if pv.complete() {
			return pv
		}
	}
	return nil
}

func (t *monitorTx) Parts(fn func(name string, body []byte) error) error {
	if err := t.pin(); err != nil {
		return err
	}
	if t.snap == 0 {
		return nil
	}
	versions, err := t.partVersions(t.snap)
	if err != nil {
		return fmt.Errorf("monitor: read snapshot: %w", err)
	}
	names := make([]string, 0, len(versions))
	for n := range versions {
		names = append(names, n)
	}
	sort.Strings(names)
	var ids []string
	var pick []*partVersion
	for _, n := range names {
		pv := current(versions[n])
		if pv == nil || pv.tomb {
			continue
		}
		pick = append(pick, pv)
		for i := 0; i < pv.n; i++ {
			ids = append(ids, pv.chunks[i])
		}
	}
	bodies := make(map[string][]byte, len(ids))
	for len(ids) > 0 {
		// A few chunks per query keeps each reply under the 48 MB
		// message limit.
		batch := ids[:min(len(ids), 4)]
		ids = ids[len(batch):]
		cur, err := t.s.monParts.Find(t.ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: batch}}}})
		if err != nil {
			return fmt.Errorf("monitor: read snapshot: %w", err)
		}
		var docs []partDoc
		if err := cur.All(t.ctx, &docs); err != nil {
			return fmt.Errorf("monitor: read snapshot: %w", err)
		}
		for _, d := range docs {
			bodies[d.ID] = d.Body
		}
	}
	// A fold that started after this run may have removed versions it
	// read; it removes them only after removing this run's snapshot.
	var d bson.M
	err = t.s.monSnaps.FindOne(t.ctx, bson.D{{Key: "_id", Value: t.snap}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return errRetry
	}
	if err != nil {
		return fmt.Errorf("monitor: read snapshot: %w", err)
	}
	for _, pv := range pick {
		var body []byte
		for i := 0; i < pv.n; i++ {
			b, ok := bodies[pv.chunks[i]]
			if !ok {
				return errRetry
			}
			body = append(body, b...)
		}
		if err := fn(pv.name, body); err != nil {
			return err
		}
	}
	return nil
}

func (t *monitorTx) LogSince(seq int64, fn func(seq int64, body []byte) error) error {
	if err := t.pin(); err != nil {
		return err
	}
	if seq >= t.high {
		return nil
	}
	if t.high-seq <= pointReads {
		// A few entries behind, the usual case: read them by _id.
		for n := seq + 1; n <= t.high; n++ {
			var d struct {
				Body []byte `bson:"body"`
			}
			err := t.s.monLog.FindOne(t.ctx, bson.D{{Key: "_id", Value: seqID(n)}}).Decode(&d)
			if errors.Is(err, mongo.ErrNoDocuments) {
				return errRetry // folded away since this run pinned the log
			}
			if err != nil {
				return fmt.Errorf("monitor: read log: %w", err)
			}
			if err := fn(n, d.Body); err != nil {
				return err
			}
		}
		return nil
	}
	cur, err := t.s.monLog.Find(t.ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: seqID(seq)}, {Key: "$lte", Value: seqID(t.high)}}}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(1000))
	if err != nil {
		return fmt.Errorf("monitor: read log: %w", err)
	}
	defer cur.Close(t.ctx)
	next := seq + 1
	for cur.Next(t.ctx) {
		var d struct {
			ID   string `bson:"_id"`
			Body []byte `bson:"body"`
		}
		if err := cur.Decode(&d); err != nil {
			return fmt.Errorf("monitor: read log: %w", err)
		}
		n, err := parseSeqID(d.ID)
		if err != nil {
			return err
		}
		if n != next {
			// The log is dense: entries below n were folded away since
			// this run pinned its snapshot.
			return errRetry
		}
		if err := fn(n, d.Body); err != nil {
			return err
		}
		next++
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("monitor: read log: %w", err)
	}
	if next <= t.high {
		return errRetry // the pinned entries were folded away meanwhile
	}
	return nil
}

// pointReads is how far behind a run reads the log entry by entry rather
// than as a range.
const pointReads = 16

// targetDocs is how many dictionary documents one insert carries.
const targetDocs = 1000

func (t *monitorTx) AddTargets(first uint32, names []string) error {
	if err := t.pin(); err != nil {
		return err
	}
	for i := 0; i < len(names); i += targetDocs {
		c := names[i:min(i+targetDocs, len(names))]
		docs := make([]any, len(c))
		for j, n := range c {
			docs[j] = bson.D{{Key: "_id", Value: seqID(int64(first) + int64(i+j))}, {Key: "name", Value: []byte(n)}}
		}
		_, err := t.s.monTargets.InsertMany(t.ctx, docs, options.InsertMany().SetOrdered(true))
		if mongo.IsDuplicateKeyError(err) {
			// Another writer added names first: start over on the
			// dictionary as it is now.
			return errRetry
		}
		if err != nil {
			return fmt.Errorf("monitor: add targets: %w", err)
		}
	}
	return nil
}

func (t *monitorTx) AppendLog(body []byte) (int64, error) {
	if err := t.pin(); err != nil {
		return 0, err
	}
	if len(body) > maxLogBody {
		return 0, crawlkeeper.Errorf(crawlkeeper.ETOOLARGE, "monitor: one write encodes to %d MB, over MongoDB's 16 MB document limit: send the marks or targets in smaller batches", len(body)>>20)
	}
	// Try the number after the highest entry known; each rejection means
	// another writer took it, so the next one is tried.
	last := max(t.high, t.s.logHint.Load())
	for attempt := 0; attempt < 1000; attempt++ {
		_, err := t.s.monLog.InsertOne(t.ctx, bson.D{{Key: "_id", Value: seqID(last + 1)}, {Key: "body", Value: body}})
		if mongo.IsDuplicateKeyError(err) {
			last = max(last+1, t.s.logHint.Load())
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("monitor: append log: %w", err)
		}
		t.s.noteLog(last + 1)
		return last + 1, nil
	}
	return 0, errConflict
}

func (t *monitorTx) PutPart(name string, body []byte) error {
	if t.parts == nil {
		t.parts = map[string][]byte{}
	}
	t.parts[name] = body
	return nil
}

// FoldLog writes the parts given to PutPart as versions at seq, then the
// snapshot document that makes them current, then removes what no reader
// of this or a later snapshot needs. Another process that folded at the
// same seq first made the same state current, which is as good.
func (t *monitorTx) FoldLog(seq, keep int64) error {
	if err := t.pin(); err != nil {
		return err
	}
	var tb [8]byte
	rand.Read(tb[:])
	token := hex.EncodeToString(tb[:])
	names := make([]string, 0, len(t.parts))
	for n := range t.parts {
		names = append(names, n)
	}
	sort.Strings(names)
	for k, name := range names {
		body := t.parts[name]
		n := max(1, (len(body)+maxPartChunk-1)/maxPartChunk)
		for i := 0; i < n; i++ {
			d := partDoc{ID: token + ":" + strconv.Itoa(k) + ":" + strconv.Itoa(i), Name: []byte(name), V: seq, Token: token, I: i, N: n}
			if body == nil {
				d.Tomb = true
			} else {
				d.Body = body[i*maxPartChunk : min((i+1)*maxPartChunk, len(body))]
			}
			if _, err := t.s.monParts.InsertOne(t.ctx, d); err != nil {
				return fmt.Errorf("monitor: write snapshot: %w", err)
			}
		}
	}
	_, err := t.s.monSnaps.InsertOne(t.ctx, bson.D{{Key: "_id", Value: seq}})
	if mongo.IsDuplicateKeyError(err) {
		t.s.monParts.DeleteMany(t.ctx, bson.D{{Key: "token", Value: token}})
		return nil
	}
	if err != nil {
		return fmt.Errorf("monitor: write snapshot: %w", err)
	}
	// What follows only removes what is no longer needed: a failure leaves
	// it to the next fold.
	t.s.monLog.DeleteMany(t.ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$lte", Value: seqID(seq - max(keep, 1))}}}})
	t.cleanParts(t.snap)
	return nil
}

// cleanParts removes the snapshots below base and then the part versions
// that no snapshot at or above base reads: for each part, those older
// than its current version at base. A run that pinned a removed snapshot
// notices (see Parts) and runs again.
func (t *monitorTx) cleanParts(base int64) {
	if base <= 0 {
		return
	}
	if _, err := t.s.monSnaps.DeleteMany(t.ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: base}}}}); err != nil {
		return
	}
	versions, err := t.partVersions(base)
	if err != nil {
		return
	}
	var ids []string
	for _, vs := range versions {
		cur := current(vs)
		if cur == nil {
			continue
		}
		for _, pv := range vs {
			if pv.v < cur.v {
				for _, id := range pv.chunks {
					ids = append(ids, id)
				}
			}
		}
	}
	for len(ids) > 0 {
		batch := ids[:min(len(ids), 1000)]
		ids = ids[len(batch):]
		if _, err := t.s.monParts.DeleteMany(t.ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: batch}}}}); err != nil {
			return
		}
	}
}
