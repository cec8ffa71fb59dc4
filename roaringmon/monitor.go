// Package roaringmon is crawlkeeper's embedded crawl monitor: compressed
// bitmaps (github.com/RoaringBitmap/roaring/v2) in memory, persisted in
// the store through crawlkeeper.MonitorPersister (every store keeps them
// next to the records: the SQLite file, a PostgreSQL, MySQL or MongoDB
// database).
//
// Durability: every change is one log entry (a row holding the batch's
// serialized bitmaps per round, set and bucket) appended in a write
// transaction before the call returns, so an acknowledged mark survives a
// killed process. Marks derived from ingested items are appended in the
// ingest's own transaction (MarkTx) and commit with the records. The log
// is folded into per-round snapshot parts every CompactEvery entries;
// opening replays the snapshot and the log tail. Processes sharing the
// store converge: before answering, a monitor applies the log entries it
// has not seen, by sequence number, and reloads the snapshot when it lags
// behind a fold.
package roaringmon

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/crawlkeeper/crawlkeeper"
)

// DefaultCompactEvery is how many log entries accumulate before the log is
// folded into snapshot parts; DefaultCompactBytes is how many bytes of
// them do (a day of marks over 400,000 targets in random order writes
// about 0.8 MB of log). A fold rewrites the parts that changed, bucket
// sets included, so folding more often trades log for rewritten parts,
// whose old rows PostgreSQL and InnoDB keep until they reuse the space.
const (
	DefaultCompactEvery = 1000
	DefaultCompactBytes = 1 << 20
)

// A fold keeps the newest log entries that fit keepBytes (at least
// minKeep, at most keepLog), so that a process that lags a little catches
// up from the log instead of reloading every part.
const (
	keepLog   = 256
	keepBytes = 64 << 10
	minKeep   = 8
)

// Monitor is the embedded implementation of crawlkeeper.Monitor.
type Monitor struct {
	p    crawlkeeper.MonitorPersister
	opts crawlkeeper.MonitorOptions
	// CompactEvery overrides DefaultCompactEvery (tests fold often).
	CompactEvery int

	mu     sync.Mutex
	st     *state // nil until loaded, and after a failed apply
	dict   *dictionary
	closed bool
}

var (
	_ crawlkeeper.Monitor  = (*Monitor)(nil)
	_ crawlkeeper.TxMarker = (*Monitor)(nil)
)

// dictionary is the in-memory copy of the target dictionary, loaded on
// first use: status and merges never need it.
type dictionary struct {
	names []string
	ids   map[string]uint32
}

// Open returns a monitor persisted in p and loads its state.
func Open(ctx context.Context, p crawlkeeper.MonitorPersister, opts crawlkeeper.MonitorOptions) (*Monitor, error) {
	m := &Monitor{p: p, opts: opts.WithDefaults()}
	if err := m.read(ctx, false, func() error { return nil }); err != nil {
		return nil, err
	}
	return m, nil
}

// Close implements crawlkeeper.Monitor. The persister stays open.
func (m *Monitor) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

var errClosed = crawlkeeper.Errorf(crawlkeeper.EINVALID, "monitor is closed")

// catchUp brings memory up to the persisted state: the dictionary (when
// needed or loaded) and every log entry not applied yet. Callers hold mu.
func (m *Monitor) catchUp(v crawlkeeper.MonitorView, needDict bool) error {
	if m.closed {
		return errClosed
	}
	if needDict || m.dict != nil {
		if m.dict == nil {
			m.dict = &dictionary{ids: map[string]uint32{}}
		}
		d := m.dict
		err := v.TargetsFrom(uint32(len(d.names)), func(id uint32, name string) error {
			if id != uint32(len(d.names)) {
				return errors.New("monitor: target dictionary has a gap")
			}
			d.ids[name] = id
			d.names = append(d.names, name)
			return nil
		})
		if err != nil {
			m.dict = nil
			return err
		}
	}
	snap, err := v.SnapshotSeq()
	if err != nil {
		return err
	}
	if m.st != nil {
		if snap > m.st.snapSeq {
			// Another process folded the log: what it wrote no longer
			// needs a snapshot from us.
			for part, seq := range m.st.dirty {
				if seq <= snap {
					delete(m.st.dirty, part)
				}
			}
			m.st.snapSeq = snap
		}
		reload := false
		err := v.LogSince(m.st.seq, func(seq int64, body []byte) error {
			if seq != m.st.seq+1 {
				reload = true // the entries we missed were folded away
				return errStop
			}
			return m.st.apply(seq, body, m.opts)
		})
		if err != nil && !errors.Is(err, errStop) {
			m.st = nil
			return err
		}
		if !reload && m.st.seq >= snap {
			return nil
		}
	}
	// Load the snapshot and replay the log after it.
	st := newState()
	if err := v.Parts(st.loadPart); err != nil {
		return err
	}
	st.seq, st.snapSeq = snap, snap
	if err := v.LogSince(snap, func(seq int64, body []byte) error { return st.apply(seq, body, m.opts) }); err != nil {
		return err
	}
	m.st = st
	return nil
}

var errStop = errors.New("stop")

// read runs fn on caught-up memory.
//
// mu is taken inside the persister's transaction, never around it, as in
// writes: a goroutine that waits for mu may hold one of the store's pooled
// connections, so holding mu while waiting for a connection could leave
// every connection with a goroutine waiting for mu.
func (m *Monitor) read(ctx context.Context, needDict bool, fn func() error) error {
	var ferr error
	err := m.p.ViewMonitor(ctx, func(v crawlkeeper.MonitorView) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		if err := m.catchUp(v, needDict); err != nil {
			return err
		}
		ferr = fn()
		return nil
	})
	if err != nil {
		return wrap("read monitor", err)
	}
	return ferr
}

// change is what a write built: a log entry and the dictionary names it
// added.
type change struct {
	body     []byte
	first    uint32
	newNames []string
	seq      int64
}

// builder builds one change from caught-up memory; ids assigns dictionary
// ids to names, adding unknown ones.
type builder func(ids func(name string) uint32) ([]byte, error)

// writeIn builds a change inside tx. Callers must call committed after a
// successful commit.
func (m *Monitor) writeIn(tx crawlkeeper.MonitorTx, build builder) (*change, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.catchUp(tx, true); err != nil {
		return nil, err
	}
	c := &change{first: uint32(len(m.dict.names))}
	pending := map[string]uint32{}
	ids := func(name string) uint32 {
		if id, ok := m.dict.ids[name]; ok {
			return id
		}
		if id, ok := pending[name]; ok {
			return id
		}
		id := c.first + uint32(len(c.newNames))
		pending[name] = id
		c.newNames = append(c.newNames, name)
		return id
	}
	body, err := build(ids)
	if err != nil {
		return nil, err
	}
	if len(c.newNames) > 0 {
		if err := tx.AddTargets(c.first, c.newNames); err != nil {
			return nil, err
		}
	}
	if len(body) > 0 {
		c.body = body
		if c.seq, err = tx.AppendLog(body); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// committed applies a committed change to memory when memory is exactly one
// entry behind it; otherwise the next catch-up reads it from the log.
func (m *Monitor) committed(c *change) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dict != nil && uint32(len(m.dict.names)) == c.first {
		for i, n := range c.newNames {
			m.dict.ids[n] = c.first + uint32(i)
			m.dict.names = append(m.dict.names, n)
		}
	}
	if c.body != nil && m.st != nil && m.st.seq == c.seq-1 {
		if err := m.st.apply(c.seq, c.body, m.opts); err != nil {
			m.st = nil // reload from the store on the next call
		}
	}
}

// write builds and commits one change in its own transaction.
func (m *Monitor) write(ctx context.Context, build builder) error {
	var c *change
	err := m.p.UpdateMonitor(ctx, func(tx crawlkeeper.MonitorTx) error {
		var err error
		c, err = m.writeIn(tx, build)
		return err
	})
	if err != nil {
		return wrap("write monitor", err)
	}
	m.committed(c)
	return m.maybeCompact(ctx)
}

func wrap(what string, err error) error {
	var e *crawlkeeper.Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &crawlkeeper.Error{Code: crawlkeeper.EINTERNAL, Message: what, Err: err}
}

func (m *Monitor) compactEvery() int64 {
	if m.CompactEvery > 0 {
		return int64(m.CompactEvery)
	}
	return DefaultCompactEvery
}

func (m *Monitor) maybeCompact(ctx context.Context) error {
	m.mu.Lock()
	due := m.st != nil && (m.st.seq-m.st.snapSeq >= m.compactEvery() || m.st.unfolded() >= DefaultCompactBytes)
	m.mu.Unlock()
	if !due {
		return nil
	}
	return m.Compact(ctx)
}

// Compact folds the log into snapshot parts: every part changed since the
// last fold is rewritten, and old log entries are deleted.
func (m *Monitor) Compact(ctx context.Context) error {
	var seq int64
	err := m.p.UpdateMonitor(ctx, func(tx crawlkeeper.MonitorTx) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		if err := m.catchUp(tx, false); err != nil {
			return err
		}
		seq = m.st.seq
		if seq <= m.st.snapSeq {
			return nil
		}
		parts := make([]string, 0, len(m.st.dirty))
		for p := range m.st.dirty {
			parts = append(parts, p)
		}
		sort.Strings(parts)
		for _, p := range parts {
			if err := tx.PutPart(p, m.st.part(p)); err != nil {
				return err
			}
		}
		return tx.FoldLog(seq, m.st.keepAfterFold())
	})
	if err != nil {
		return wrap("compact monitor", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.st != nil && seq > m.st.snapSeq {
		m.st.snapSeq = seq
		for p, s := range m.st.dirty {
			if s <= seq {
				delete(m.st.dirty, p)
			}
		}
	}
	return nil
}

// MarkTx implements crawlkeeper.TxMarker: the marks are appended inside the
// caller's transaction.
func (m *Monitor) MarkTx(ctx context.Context, tx crawlkeeper.MonitorTx, marks []crawlkeeper.Mark) (func(), error) {
	if err := crawlkeeper.ValidateMarks(marks); err != nil {
		return nil, err
	}
	c, err := m.writeIn(tx, m.markBuilder(marks))
	if err != nil {
		return nil, wrap("write marks", err)
	}
	return func() { m.committed(c) }, nil
}

// Queue implements crawlkeeper.Monitor.
func (m *Monitor) Queue(ctx context.Context, q crawlkeeper.QueueRequest) (*crawlkeeper.QueueResult, error) {
	if err := crawlkeeper.ValidateRound(q.Round); err != nil {
		return nil, err
	}
	if q.Bucket != 0 {
		if err := crawlkeeper.ValidateBucket(q.Bucket); err != nil {
			return nil, err
		}
	}
	for _, n := range q.Targets {
		if err := crawlkeeper.ValidateTarget(n); err != nil {
			return nil, err
		}
	}
	if q.At.IsZero() {
		q.At = time.Now()
	}
	res := &crawlkeeper.QueueResult{Round: q.Round}
	err := m.write(ctx, func(ids func(string) uint32) ([]byte, error) {
		r := m.st.rounds[q.Round]
		bsec := int64(q.Bucket / time.Second)
		if r != nil && bsec != 0 && bsec != r.bucket && len(r.buckets) > 0 {
			return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "round %q already has %s buckets with marks: its bucket length cannot change (leave out --bucket)", q.Round, time.Duration(r.bucket)*time.Second)
		}
		if bsec == 0 {
			bsec = int64(m.opts.Bucket / time.Second)
			if r != nil {
				bsec = r.bucket
			}
		}
		known := len(m.dict.names)
		bm := roaring.New()
		for _, n := range q.Targets {
			bm.Add(ids(n))
		}
		res.Queued = int(bm.GetCardinality())
		for it := bm.Iterator(); it.HasNext(); {
			if it.Next() >= uint32(known) {
				res.NewTargets++
			}
		}
		if r != nil {
			res.Total = int64(r.queued.OrCardinality(bm))
		} else {
			res.Total = int64(bm.GetCardinality())
		}
		e := &enc{}
		e.byte(recQueue)
		e.str(q.Round)
		e.i(micros(q.At))
		e.i(bsec)
		e.bitmap(bm)
		return e.b, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Mark implements crawlkeeper.Monitor.
func (m *Monitor) Mark(ctx context.Context, marks []crawlkeeper.Mark) (int, error) {
	if len(marks) == 0 {
		return 0, nil
	}
	if err := crawlkeeper.ValidateMarks(marks); err != nil {
		return 0, err
	}
	if err := m.write(ctx, m.markBuilder(marks)); err != nil {
		return 0, err
	}
	return len(marks), nil
}

// markBuilder groups marks by round, kind and bucket into one bitmap each.
func (m *Monitor) markBuilder(marks []crawlkeeper.Mark) builder {
	return func(ids func(string) uint32) ([]byte, error) {
		type key struct {
			round string
			kind  byte
			start int64
		}
		type group struct {
			created, bucket int64
			bm              *roaring.Bitmap
		}
		groups := map[key]*group{}
		var order []key
		reasons := map[string]map[uint32]string{} // round → id → latest reason
		var reasonRounds []string
		newRounds := map[string][2]int64{} // created, bucket of rounds this batch creates
		for _, mk := range marks {
			r := m.st.rounds[mk.Round]
			var created, bsec int64
			if r != nil {
				created, bsec = r.created, r.bucket
			} else if nr, ok := newRounds[mk.Round]; ok {
				created, bsec = nr[0], nr[1]
			} else {
				created, bsec = micros(mk.At), int64(m.opts.Bucket/time.Second)
				newRounds[mk.Round] = [2]int64{created, bsec}
			}
			k := key{round: mk.Round}
			switch mk.Kind {
			case crawlkeeper.MarkQueued:
				k.kind = kindQueued
			case crawlkeeper.MarkFailed:
				k.kind = kindFailed
			default:
				k.kind = kindDone
				k.start = crawlkeeper.BucketStart(mk.At, time.Duration(bsec)*time.Second).Unix()
			}
			g := groups[k]
			if g == nil {
				g = &group{created: created, bucket: bsec, bm: roaring.New()}
				groups[k] = g
				order = append(order, k)
			}
			id := ids(mk.Target)
			g.bm.Add(id)
			if reason := crawlkeeper.CleanReason(mk.Reason); mk.Kind == crawlkeeper.MarkFailed && reason != "" {
				rs := reasons[mk.Round]
				if rs == nil {
					rs = map[uint32]string{}
					reasons[mk.Round] = rs
					reasonRounds = append(reasonRounds, mk.Round)
				}
				rs[id] = reason
			}
		}
		e := &enc{}
		for _, k := range order {
			g := groups[k]
			e.byte(recMark)
			e.str(k.round)
			e.i(g.created)
			e.i(g.bucket)
			e.byte(k.kind)
			e.i(k.start)
			e.bitmap(g.bm)
		}
		// Reasons follow the marks, which create their rounds.
		for _, rnd := range reasonRounds {
			rs := reasons[rnd]
			e.byte(recReasons)
			e.str(rnd)
			e.u(uint64(len(rs)))
			for id, reason := range rs {
				e.u(uint64(id))
				e.str(reason)
			}
		}
		return e.b, nil
	}
}

// MergeBuckets implements crawlkeeper.Monitor.
func (m *Monitor) MergeBuckets(ctx context.Context, now time.Time) (*crawlkeeper.MergeResult, error) {
	res := &crawlkeeper.MergeResult{}
	retention := int64(m.opts.BucketRetention / time.Second)
	closedRet := int64(m.opts.ClosedBucketRetention / time.Second)
	err := m.write(ctx, func(func(string) uint32) ([]byte, error) {
		*res = crawlkeeper.MergeResult{}
		for _, r := range m.st.rounds {
			mg, dr := r.merge(now.Unix(), m.st.retentionOf(r, now.Unix(), retention, closedRet), false)
			res.Merged += mg
			res.Dropped += dr
		}
		if res.Merged+res.Dropped == 0 {
			return nil, nil
		}
		e := &enc{}
		e.byte(recMerge2)
		e.i(now.Unix())
		e.i(retention)
		e.i(closedRet)
		return e.b, nil
	})
	if err != nil {
		return nil, err
	}
	if res.Dropped > 0 {
		// The snapshot still holds the dropped sets: fold now, so that the
		// space goes when the sets do.
		if err := m.Compact(ctx); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func (m *Monitor) round(name string) (*round, error) {
	r := m.st.rounds[name]
	if r == nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "round %q not found: queue it with `crawlkeeper round queue --round %s` or mark a target in it", name, name)
	}
	return r, nil
}

func (m *Monitor) targetID(name string) (uint32, error) {
	id, ok := m.dict.ids[name]
	if !ok {
		return 0, crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "target %q is not in the dictionary: queue or mark it first", name)
	}
	return id, nil
}

// counts returns a round's done, failed and remaining counts.
func counts(r *round) (done, failed, remaining int64) {
	ed := r.effDone()
	done = int64(ed.GetCardinality())
	failed = int64(r.failed.GetCardinality() - r.failed.AndCardinality(ed))
	closed := roaring.Or(ed, r.failed)
	remaining = int64(r.queued.GetCardinality() - r.queued.AndCardinality(closed))
	return done, failed, remaining
}

// Status implements crawlkeeper.Monitor.
func (m *Monitor) Status(ctx context.Context, name string) (*crawlkeeper.RoundStatus, error) {
	var st *crawlkeeper.RoundStatus
	err := m.read(ctx, false, func() error {
		r, err := m.round(name)
		if err != nil {
			return err
		}
		st = &crawlkeeper.RoundStatus{Round: r.name, Queued: int64(r.queued.GetCardinality()),
			Bucket: crawlkeeper.Duration(time.Duration(r.bucket) * time.Second), CreatedAt: crawlkeeper.MicrosTime(r.created),
			Buckets: []crawlkeeper.BucketCount{}}
		st.Done, st.Failed, st.Remaining = counts(r)
		for _, bm := range []*roaring.Bitmap{r.queued, r.done, r.failed} {
			bm.RunOptimize()
			st.Bytes += int64(bm.GetSerializedSizeInBytes())
		}
		for _, s := range r.sortedBuckets() {
			b := r.buckets[s]
			if b.set != nil {
				b.set.RunOptimize()
				st.BucketBytes += int64(b.set.GetSerializedSizeInBytes())
			}
			st.Buckets = append(st.Buckets, crawlkeeper.BucketCount{Start: time.Unix(s, 0).UTC(), Done: b.count, Merged: b.merged, Dropped: b.set == nil})
		}
		return nil
	})
	return st, err
}

// page returns up to limit names of ids in bm after the id of after.
func (m *Monitor) page(bm *roaring.Bitmap, after string, limit int) ([]string, error) {
	ids, err := m.pageIDs(bm, after, crawlkeeper.PageLimit(limit))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = m.dict.names[id]
	}
	return out, nil
}

// pageIDs returns up to limit ids of bm after the id of after.
func (m *Monitor) pageIDs(bm *roaring.Bitmap, after string, limit int) ([]uint32, error) {
	out := []uint32{}
	it := bm.Iterator()
	if after != "" {
		id, err := m.targetID(after)
		if err != nil {
			return nil, err
		}
		if id == ^uint32(0) {
			return out, nil
		}
		it.AdvanceIfNeeded(id + 1)
	}
	for it.HasNext() && len(out) < limit {
		out = append(out, it.Next())
	}
	return out, nil
}

// Remaining implements crawlkeeper.Monitor.
func (m *Monitor) Remaining(ctx context.Context, name, after string, limit int) ([]string, error) {
	var out []string
	err := m.read(ctx, true, func() error {
		r, err := m.round(name)
		if err != nil {
			return err
		}
		rem := roaring.AndNot(r.queued, roaring.Or(r.effDone(), r.failed))
		out, err = m.page(rem, after, limit)
		return err
	})
	return out, err
}

// failedOnly is the round's failed targets that were not done in it.
func failedOnly(r *round) *roaring.Bitmap { return roaring.AndNot(r.failed, r.effDone()) }

// Failed implements crawlkeeper.Monitor.
func (m *Monitor) Failed(ctx context.Context, q crawlkeeper.FailedQuery) (*crawlkeeper.FailedPage, error) {
	q, err := crawlkeeper.ValidateFailedQuery(q)
	if err != nil {
		return nil, err
	}
	var page *crawlkeeper.FailedPage
	err = m.read(ctx, true, func() error {
		r, err := m.round(q.Round)
		if err != nil {
			return err
		}
		set := failedOnly(r)
		var also *round
		if q.Also != "" {
			if also, err = m.round(q.Also); err != nil {
				return err
			}
			set.And(failedOnly(also))
		}
		// The done sets of the rounds created after this one, in order.
		var later []*round
		var laterDone []*roaring.Bitmap
		if q.DoneLater {
			rounds := m.sortedRounds()
			for i, o := range rounds {
				if o == r {
					later = rounds[i+1:]
					break
				}
			}
			for _, o := range later {
				laterDone = append(laterDone, o.effDone())
			}
			set.And(roaring.FastOr(laterDone...))
		}
		page = &crawlkeeper.FailedPage{Round: q.Round, Also: q.Also, DoneLater: q.DoneLater,
			Count: int64(set.GetCardinality()), Targets: []crawlkeeper.FailedTarget{}}
		ids, err := m.pageIDs(set, q.After, q.Limit+1)
		if err != nil {
			return err
		}
		if len(ids) > q.Limit {
			ids = ids[:q.Limit]
			page.Next = m.dict.names[ids[len(ids)-1]]
		}
		for _, id := range ids {
			ft := crawlkeeper.FailedTarget{Target: m.dict.names[id], Reason: r.reasons[id]}
			if also != nil {
				ft.AlsoReason = also.reasons[id]
			}
			for i, d := range laterDone {
				if d.Contains(id) {
					ft.DoneIn = later[i].name
					break
				}
			}
			page.Targets = append(page.Targets, ft)
		}
		return nil
	})
	return page, err
}

// Diff implements crawlkeeper.Monitor.
func (m *Monitor) Diff(ctx context.Context, a, b, after string, limit int) (*crawlkeeper.RoundDiff, error) {
	var d *crawlkeeper.RoundDiff
	err := m.read(ctx, true, func() error {
		ra, err := m.round(a)
		if err != nil {
			return err
		}
		rb, err := m.round(b)
		if err != nil {
			return err
		}
		da, db := ra.effDone(), rb.effDone()
		onlyA, onlyB := roaring.AndNot(da, db), roaring.AndNot(db, da)
		d = &crawlkeeper.RoundDiff{Round: a, Vs: b}
		d.OnlyRound.Count = int64(onlyA.GetCardinality())
		d.OnlyVs.Count = int64(onlyB.GetCardinality())
		if d.OnlyRound.Names, err = m.page(onlyA, after, limit); err != nil {
			return err
		}
		d.OnlyVs.Names, err = m.page(onlyB, after, limit)
		return err
	})
	return d, err
}

func (m *Monitor) sortedRounds() []*round {
	out := make([]*round, 0, len(m.st.rounds))
	for _, r := range m.st.rounds {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].created != out[j].created {
			return out[i].created < out[j].created
		}
		return out[i].name < out[j].name
	})
	return out
}

// Rounds implements crawlkeeper.Monitor.
func (m *Monitor) Rounds(ctx context.Context) ([]crawlkeeper.RoundSummary, error) {
	out := []crawlkeeper.RoundSummary{}
	err := m.read(ctx, false, func() error {
		for _, r := range m.sortedRounds() {
			s := crawlkeeper.RoundSummary{Round: r.name, CreatedAt: crawlkeeper.MicrosTime(r.created),
				Bucket: crawlkeeper.Duration(time.Duration(r.bucket) * time.Second), Queued: int64(r.queued.GetCardinality())}
			s.Done, s.Failed, s.Remaining = counts(r)
			out = append(out, s)
		}
		return nil
	})
	return out, err
}

// Target implements crawlkeeper.Monitor.
func (m *Monitor) Target(ctx context.Context, name string) (*crawlkeeper.TargetStatus, error) {
	var ts *crawlkeeper.TargetStatus
	err := m.read(ctx, true, func() error {
		id, err := m.targetID(name)
		if err != nil {
			return err
		}
		ts = &crawlkeeper.TargetStatus{Target: name, ID: id, Rounds: []crawlkeeper.TargetRound{}}
		for _, r := range m.sortedRounds() {
			tr := crawlkeeper.TargetRound{Round: r.name, Queued: r.queued.Contains(id), Done: r.done.Contains(id)}
			for _, s := range r.sortedBuckets() {
				b := r.buckets[s]
				if b.set != nil && b.set.Contains(id) {
					tr.Done = true
					at := time.Unix(s, 0).UTC()
					tr.DoneAt = &at
					break
				}
			}
			tr.Failed = !tr.Done && r.failed.Contains(id)
			if tr.Failed {
				tr.Reason = r.reasons[id]
			}
			if tr.Queued || tr.Done || tr.Failed {
				ts.Rounds = append(ts.Rounds, tr)
			}
		}
		return nil
	})
	return ts, err
}

// ObserveFields implements crawlkeeper.Monitor.
func (m *Monitor) ObserveFields(ctx context.Context, obs []crawlkeeper.FieldObservation) error {
	if len(obs) == 0 {
		return nil
	}
	bySource := map[string][]crawlkeeper.FieldObservation{}
	var sources []string
	for _, o := range obs {
		if _, ok := bySource[o.Source]; !ok {
			sources = append(sources, o.Source)
		}
		bySource[o.Source] = append(bySource[o.Source], o)
	}
	return m.write(ctx, func(ids func(string) uint32) ([]byte, error) {
		e := &enc{}
		for _, src := range sources {
			encodeFields(e, src, bySource[src], m.st.fields[src], m.opts.Samples, ids)
		}
		return e.b, nil
	})
}

// encodeFields writes one source's observations: counts per round and
// field, and the filled observations of fields that still need samples
// (only as many as can still become samples).
func encodeFields(e *enc, source string, obs []crawlkeeper.FieldObservation, cur *sourceFields, samples int, ids func(string) uint32) {
	type rf struct{ round, field string }
	cnt := map[rf]*[2]int64{}
	var cntOrder []rf
	type filled struct {
		tid uint64
		rid int64
	}
	fills := map[string][]filled{}
	var fillOrder []string
	need := map[string]int{} // field → samples it can still take
	newIDs := map[string]map[int64]bool{}
	for _, o := range obs {
		for _, f := range o.Fields {
			k := rf{o.Round, f.Name}
			c := cnt[k]
			if c == nil {
				c = &[2]int64{}
				cnt[k] = c
				cntOrder = append(cntOrder, k)
			}
			c[0]++
			if !f.Filled {
				continue
			}
			c[1]++
			n, ok := need[f.Name]
			if !ok {
				n = samples
				var have []int64
				if cur != nil && cur.fields[f.Name] != nil {
					cf := cur.fields[f.Name]
					if cf.enough {
						n = 0
					} else {
						n = samples - len(cf.samples)
						have = cf.samples
					}
				}
				need[f.Name] = n
				newIDs[f.Name] = map[int64]bool{}
				for _, id := range have {
					newIDs[f.Name][id] = true
				}
				fillOrder = append(fillOrder, f.Name)
			}
			if n <= 0 {
				continue
			}
			var tid uint64
			if o.Target != "" && crawlkeeper.ValidateTarget(o.Target) == nil {
				tid = uint64(ids(o.Target)) + 1
			}
			fills[f.Name] = append(fills[f.Name], filled{tid, o.RecordID})
			if !newIDs[f.Name][o.RecordID] {
				newIDs[f.Name][o.RecordID] = true
				need[f.Name] = n - 1
			}
		}
	}
	e.byte(recFields)
	e.str(source)
	e.u(uint64(len(cntOrder)))
	for _, k := range cntOrder {
		e.str(k.round)
		e.str(k.field)
		e.i(cnt[k][0])
		e.i(cnt[k][1])
	}
	var withFills []string
	for _, f := range fillOrder {
		if len(fills[f]) > 0 {
			withFills = append(withFills, f)
		}
	}
	e.u(uint64(len(withFills)))
	for _, f := range withFills {
		e.str(f)
		e.u(uint64(len(fills[f])))
		for _, x := range fills[f] {
			e.u(x.tid)
			e.i(x.rid)
		}
	}
}

// Fields implements crawlkeeper.Monitor.
func (m *Monitor) Fields(ctx context.Context, source string) ([]crawlkeeper.FieldReport, error) {
	var stats []crawlkeeper.FieldStats
	err := m.read(ctx, false, func() error {
		for src, sf := range m.st.fields {
			if source != "" && src != source {
				continue
			}
			for name, f := range sf.fields {
				fs := crawlkeeper.FieldStats{Source: src, Field: name, Present: f.present, Filled: f.filled,
					Targets: f.ntargets, Samples: append([]int64{}, f.samples...), Enough: f.enough, ByRound: map[string][2]int64{}}
				if f.targets != nil {
					fs.Targets = int64(f.targets.GetCardinality())
				}
				for r, c := range f.byRound {
					fs.ByRound[r] = *c
				}
				stats = append(stats, fs)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return crawlkeeper.FieldReports(stats, source, m.opts), nil
}

// MonitorSize implements crawlkeeper.MonitorSizer when the persister
// reports its tables' sizes (the SQL stores do).
func (m *Monitor) MonitorSize(ctx context.Context) (*crawlkeeper.MonitorSize, error) {
	s, ok := m.p.(crawlkeeper.MonitorSizer)
	if !ok {
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "this store does not report the size of the monitor's data")
	}
	return s.MonitorSize(ctx)
}
