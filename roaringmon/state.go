package roaringmon

import (
	"fmt"
	"sort"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/crawlkeeper/crawlkeeper"
)

// Log records. One log entry (one row, one batch) holds any number of
// records; applying them in log order gives every process the same state.
const (
	recQueue   byte = 1 // round, created, bucket, ids
	recMark    byte = 2 // round, created, bucket, kind, bucket start, ids
	recMerge   byte = 3 // now, retention (written by earlier versions)
	recFields  byte = 4 // source, counts, filled observations
	recReasons byte = 5 // round, then pairs of id and failure reason
	recMerge2  byte = 6 // now, retention, retention of closed rounds
)

// Mark kinds in records.
const (
	kindQueued byte = 1
	kindDone   byte = 2
	kindFailed byte = 3
)

// state is the whole monitor in memory, as of log entry seq.
type state struct {
	seq     int64
	snapSeq int64
	rounds  map[string]*round
	fields  map[string]*sourceFields
	// dirty maps a snapshot part to the last log entry that changed it, so
	// a snapshot rewrites only what changed.
	dirty map[string]int64
	// sizes are the body sizes of the last keepLog entries applied, for
	// folding the log by bytes.
	sizes []entrySize
}

type entrySize struct{ seq, n int64 }

// unfolded returns the bytes of the entries applied after the snapshot
// (as far as sizes remembers).
func (s *state) unfolded() int64 {
	var n int64
	for _, e := range s.sizes {
		if e.seq > s.snapSeq {
			n += e.n
		}
	}
	return n
}

// keepAfterFold returns how many of the newest entries a fold keeps: as
// many as fit keepBytes, from minKeep to keepLog.
func (s *state) keepAfterFold() int64 {
	var k, n int64
	for i := len(s.sizes) - 1; i >= 0 && k < keepLog; i-- {
		n += s.sizes[i].n
		if n > keepBytes && k >= minKeep {
			break
		}
		k++
	}
	return max(k, minKeep)
}

func newState() *state {
	return &state{rounds: map[string]*round{}, fields: map[string]*sourceFields{}, dirty: map[string]int64{}}
}

type round struct {
	name    string
	created int64 // Unix microseconds
	bucket  int64 // seconds
	queued  *roaring.Bitmap
	done    *roaring.Bitmap // merged buckets only; see effDone
	failed  *roaring.Bitmap
	buckets map[int64]*bucket // by start, Unix seconds
	// reasons holds the latest failure reason of failed targets, by id;
	// texts interns them, as many targets fail for the same reason.
	reasons map[uint32]string
	texts   map[string]string
}

// setReason records id's latest failure reason.
func (r *round) setReason(id uint32, reason string) {
	if t, ok := r.texts[reason]; ok {
		reason = t
	} else {
		r.texts[reason] = reason
	}
	r.reasons[id] = reason
}

type bucket struct {
	set    *roaring.Bitmap // nil once dropped
	count  int64
	merged bool
}

type sourceFields struct {
	source string
	fields map[string]*field
}

type field struct {
	present, filled int64
	targets         *roaring.Bitmap // nil once enough
	ntargets        int64           // the set's size when it was deleted
	samples         []int64
	enough          bool
	byRound         map[string]*[2]int64
}

func roundPart(name string) string    { return "r/" + name }
func fieldsPart(source string) string { return "f/" + source }

func newRound(name string, created, bsec int64) *round {
	return &round{name: name, created: created, bucket: bsec, queued: roaring.New(), done: roaring.New(),
		failed: roaring.New(), buckets: map[int64]*bucket{}, reasons: map[uint32]string{}, texts: map[string]string{}}
}

func (s *state) ensureRound(name string, created, bsec int64) *round {
	r := s.rounds[name]
	if r == nil {
		r = newRound(name, created, bsec)
		s.rounds[name] = r
	}
	return r
}

// effDone is the round's done set including buckets not merged yet. The
// result must not be modified: it may be r.done itself.
func (r *round) effDone() *roaring.Bitmap {
	var open []*roaring.Bitmap
	for _, b := range r.buckets {
		if !b.merged && b.set != nil {
			open = append(open, b.set)
		}
	}
	if len(open) == 0 {
		return r.done
	}
	return roaring.FastOr(append(open, r.done)...)
}

// sortedBuckets returns bucket starts in time order.
func (r *round) sortedBuckets() []int64 {
	out := make([]int64, 0, len(r.buckets))
	for s := range r.buckets {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// apply applies one log entry.
func (s *state) apply(seq int64, body []byte, opts crawlkeeper.MonitorOptions) error {
	d := &dec{b: body}
	for d.more() {
		switch rec := d.byte(); rec {
		case recQueue:
			name, created, bsec, ids := d.str(), d.i(), d.i(), d.bitmap()
			if d.err != nil {
				break
			}
			r := s.ensureRound(name, created, bsec)
			if bsec > 0 && len(r.buckets) == 0 {
				r.bucket = bsec
			}
			r.queued.Or(ids)
			s.dirty[roundPart(name)] = seq
		case recMark:
			name, created, bsec, kind, start, ids := d.str(), d.i(), d.i(), d.byte(), d.i(), d.bitmap()
			if d.err != nil {
				break
			}
			r := s.ensureRound(name, created, bsec)
			switch kind {
			case kindQueued:
				r.queued.Or(ids)
			case kindFailed:
				r.failed.Or(ids)
			case kindDone:
				b := r.buckets[start]
				if b == nil {
					b = &bucket{set: roaring.New()}
					r.buckets[start] = b
				}
				if b.set == nil {
					// The bucket's set was dropped: only the round's set
					// can still take the late mark.
					r.done.Or(ids)
					break
				}
				b.set.Or(ids)
				b.count = int64(b.set.GetCardinality())
				if b.merged {
					r.done.Or(ids)
				}
			default:
				d.fail("mark kind")
			}
			s.dirty[roundPart(name)] = seq
		case recReasons:
			name := d.str()
			r := s.rounds[name]
			for n := d.u(); n > 0 && d.err == nil; n-- {
				id, reason := uint32(d.u()), d.str()
				if r == nil {
					d.fail("round of a reason")
					break
				}
				r.setReason(id, reason)
			}
			if d.err == nil {
				s.dirty[roundPart(name)] = seq
			}
		case recMerge, recMerge2:
			now, retention := d.i(), d.i()
			closedRet := retention
			if rec == recMerge2 {
				closedRet = d.i()
			}
			if d.err != nil {
				break
			}
			for _, r := range s.rounds {
				if m, dr := r.merge(now, s.retentionOf(r, now, retention, closedRet), true); m+dr > 0 {
					s.dirty[roundPart(r.name)] = seq
				}
			}
		case recFields:
			s.applyFields(seq, d, opts)
		default:
			d.fail("record type")
		}
	}
	if d.err != nil {
		return fmt.Errorf("log entry %d: %w", seq, d.err)
	}
	s.seq = seq
	s.sizes = append(s.sizes, entrySize{seq, int64(len(body))})
	if len(s.sizes) > 2*keepLog {
		s.sizes = append(s.sizes[:0], s.sizes[len(s.sizes)-keepLog:]...)
	}
	return nil
}

// later reports whether a round was created after r (in the order of
// Rounds: creation time, then name).
func (s *state) later(r *round) bool {
	for _, o := range s.rounds {
		if o.created > r.created || (o.created == r.created && o.name > r.name) {
			return true
		}
	}
	return false
}

// retentionOf returns the bucket retention that applies to r at now
// (Unix seconds): closed, when r is closed (crawlkeeper.RoundClosed) and
// that shorter retention would drop a set the open one keeps, open
// otherwise. Deciding costs a count of the round, so it is made only when
// it matters.
func (s *state) retentionOf(r *round, now, open, closed int64) int64 {
	if closed >= open {
		return open
	}
	matters := false
	for start, b := range r.buckets {
		end := start + r.bucket
		if b.set != nil && (b.merged || end <= now) && end+closed <= now && end+open > now {
			matters = true
			break
		}
	}
	if !matters {
		return open
	}
	_, _, remaining := counts(r)
	if crawlkeeper.RoundClosed(remaining, s.later(r)) {
		return closed
	}
	return open
}

// merge folds the buckets finished at now (Unix seconds) into done and
// drops the sets of buckets that ended retention seconds before now. With
// write false it only counts.
func (r *round) merge(now, retention int64, write bool) (merged, dropped int) {
	for start, b := range r.buckets {
		end := start + r.bucket
		if !b.merged && end <= now {
			merged++
			if write {
				r.done.Or(b.set)
				b.merged = true
			}
		}
		if b.set != nil && (b.merged || end <= now) && end+retention <= now {
			dropped++
			if write {
				b.set = nil
			}
		}
	}
	if write && merged > 0 {
		r.done.RunOptimize()
	}
	return merged, dropped
}

func (s *state) applyFields(seq int64, d *dec, opts crawlkeeper.MonitorOptions) {
	source := d.str()
	sf := s.fields[source]
	if sf == nil {
		sf = &sourceFields{source: source, fields: map[string]*field{}}
		s.fields[source] = sf
	}
	get := func(name string) *field {
		f := sf.fields[name]
		if f == nil {
			f = &field{targets: roaring.New(), samples: []int64{}, byRound: map[string]*[2]int64{}}
			sf.fields[name] = f
		}
		return f
	}
	for n := d.u(); n > 0 && d.err == nil; n-- {
		rnd, name, present, filled := d.str(), d.str(), d.i(), d.i()
		f := get(name)
		f.present += present
		f.filled += filled
		if rnd != "" {
			c := f.byRound[rnd]
			if c == nil {
				c = &[2]int64{}
				f.byRound[rnd] = c
			}
			c[0] += present
			c[1] += filled
		}
	}
	for n := d.u(); n > 0 && d.err == nil; n-- {
		f := get(d.str())
		for k := d.u(); k > 0 && d.err == nil; k-- {
			tid, rid := d.u(), d.i()
			if f.enough {
				continue
			}
			if tid > 0 {
				f.targets.Add(uint32(tid - 1))
			}
			if !containsID(f.samples, rid) {
				f.samples = append(f.samples, rid)
			}
			if len(f.samples) >= opts.Samples {
				f.enough = true
				f.ntargets = int64(f.targets.GetCardinality())
				f.targets = nil
			}
		}
	}
	s.dirty[fieldsPart(source)] = seq
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Snapshot parts.

func (r *round) encode() []byte {
	e := &enc{}
	e.str(r.name)
	e.i(r.created)
	e.i(r.bucket)
	e.bitmap(r.queued)
	e.bitmap(r.done)
	e.bitmap(r.failed)
	starts := r.sortedBuckets()
	e.u(uint64(len(starts)))
	for _, s := range starts {
		b := r.buckets[s]
		e.i(s)
		e.i(b.count)
		e.bool(b.merged)
		e.bool(b.set != nil)
		if b.set != nil {
			e.bitmap(b.set)
		}
	}
	r.encodeReasons(e)
	return e.b
}

// encodeReasons writes the reasons of the targets still failed: the
// distinct texts, then (id gap, text number) pairs in id order. Parts
// written before reasons existed end before this section.
func (r *round) encodeReasons(e *enc) {
	var ids []uint32
	if len(r.reasons) > 0 {
		done := r.effDone()
		for id := range r.reasons {
			if r.failed.Contains(id) && !done.Contains(id) {
				ids = append(ids, id)
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	num := map[string]uint64{}
	var texts []string
	for _, id := range ids {
		t := r.reasons[id]
		if _, ok := num[t]; !ok {
			num[t] = uint64(len(texts))
			texts = append(texts, t)
		}
	}
	e.u(uint64(len(texts)))
	for _, t := range texts {
		e.str(t)
	}
	e.u(uint64(len(ids)))
	prev := uint32(0)
	for _, id := range ids {
		e.u(uint64(id - prev))
		e.u(num[r.reasons[id]])
		prev = id
	}
}

func decodeRound(body []byte) (*round, error) {
	d := &dec{b: body}
	r := newRound(d.str(), d.i(), d.i())
	r.queued, r.done, r.failed = d.bitmap(), d.bitmap(), d.bitmap()
	for n := d.u(); n > 0 && d.err == nil; n-- {
		start := d.i()
		b := &bucket{count: d.i(), merged: d.bool()}
		if d.bool() {
			b.set = d.bitmap()
		}
		r.buckets[start] = b
	}
	if d.more() {
		var texts []string
		for n := d.u(); n > 0 && d.err == nil; n-- {
			texts = append(texts, d.str())
		}
		id := uint32(0)
		for n := d.u(); n > 0 && d.err == nil; n-- {
			id += uint32(d.u())
			k := d.u()
			if k >= uint64(len(texts)) {
				d.fail("reason number")
				break
			}
			r.setReason(id, texts[k])
		}
	}
	return r, d.err
}

func (sf *sourceFields) encode() []byte {
	e := &enc{}
	e.str(sf.source)
	names := make([]string, 0, len(sf.fields))
	for n := range sf.fields {
		names = append(names, n)
	}
	sort.Strings(names)
	e.u(uint64(len(names)))
	for _, n := range names {
		f := sf.fields[n]
		e.str(n)
		e.i(f.present)
		e.i(f.filled)
		e.i(f.ntargets)
		e.bool(f.enough)
		e.u(uint64(len(f.samples)))
		for _, id := range f.samples {
			e.i(id)
		}
		e.bool(f.targets != nil)
		if f.targets != nil {
			e.bitmap(f.targets)
		}
		rounds := make([]string, 0, len(f.byRound))
		for r := range f.byRound {
			rounds = append(rounds, r)
		}
		sort.Strings(rounds)
		e.u(uint64(len(rounds)))
		for _, r := range rounds {
			e.str(r)
			e.i(f.byRound[r][0])
			e.i(f.byRound[r][1])
		}
	}
	return e.b
}

func decodeFields(body []byte) (*sourceFields, error) {
	d := &dec{b: body}
	sf := &sourceFields{source: d.str(), fields: map[string]*field{}}
	for n := d.u(); n > 0 && d.err == nil; n-- {
		name := d.str()
		f := &field{present: d.i(), filled: d.i(), ntargets: d.i(), enough: d.bool(), samples: []int64{}, byRound: map[string]*[2]int64{}}
		for k := d.u(); k > 0 && d.err == nil; k-- {
			f.samples = append(f.samples, d.i())
		}
		if d.bool() {
			f.targets = d.bitmap()
		}
		for k := d.u(); k > 0 && d.err == nil; k-- {
			r := d.str()
			f.byRound[r] = &[2]int64{d.i(), d.i()}
		}
		sf.fields[name] = f
	}
	return sf, d.err
}

// loadPart adds one snapshot part to s.
func (s *state) loadPart(name string, body []byte) error {
	switch {
	case len(name) > 2 && name[:2] == "r/":
		r, err := decodeRound(body)
		if err != nil {
			return fmt.Errorf("snapshot %s: %w", name, err)
		}
		s.rounds[r.name] = r
	case len(name) > 1 && name[:2] == "f/":
		sf, err := decodeFields(body)
		if err != nil {
			return fmt.Errorf("snapshot %s: %w", name, err)
		}
		s.fields[sf.source] = sf
	default:
		return fmt.Errorf("snapshot part %q: %w", name, errCorrupt)
	}
	return nil
}

// part encodes the snapshot part called name, or returns nil when it no
// longer exists.
func (s *state) part(name string) []byte {
	switch name[:2] {
	case "r/":
		if r := s.rounds[name[2:]]; r != nil {
			return r.encode()
		}
	case "f/":
		if sf := s.fields[name[2:]]; sf != nil {
			return sf.encode()
		}
	}
	return nil
}

func micros(t time.Time) int64 { return t.UnixMicro() }
