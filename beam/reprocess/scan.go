package reprocess

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/crawlkeeper/crawlkeeper"
)

func init() {
	register.DoFn4x2[context.Context, *sdf.LockRTracker, Shard, func(Work), sdf.ProcessContinuation, error](&scanFn{})
	register.Emitter1[Work]()
	beam.RegisterType(reflect.TypeOf((*Shard)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Restriction)(nil)).Elem())
}

// paceFraction is the part of the period a pass is spread over, as in the
// goroutine engine: the rest absorbs slow batches.
const paceFraction = 0.9

// Shard is one of the scan's id shards: it owns the blocks of Block ids
// whose index modulo Count is Index. Blocks, unlike ranges computed from
// the highest id, give every id to the same shard whatever that id, so
// shards that start their passes at different moments never share or
// miss an id.
type Shard struct {
	Index, Count int
	Block        int64
}

// owns reports whether the shard owns the block holding id.
func (s Shard) owns(id int64) bool {
	return ((id-1)/s.Block)%int64(s.Count) == int64(s.Index)
}

// next returns the first position at or after pos (an id already read,
// or a block's start) whose next id the shard owns: reads continue from
// there.
func (s Shard) next(pos int64) int64 {
	if s.owns(pos + 1) {
		return pos
	}
	blk := pos / s.Block // the block holding pos+1
	skip := (int64(s.Index) - blk%int64(s.Count) + int64(s.Count)) % int64(s.Count)
	return (blk + skip) * s.Block
}

// blockEnd returns the last id of the block holding pos+1.
func (s Shard) blockEnd(pos int64) int64 {
	return (pos/s.Block + 1) * s.Block
}

// Restriction is a shard's scan state: pass Pass covers the ids in
// (0, End], End being the highest id when the pass began at Started (Unix
// nanoseconds); every id of the shard up to After is read. The zero
// restriction is an empty pass 0, so a new shard begins with pass 1.
type Restriction struct {
	Pass    int64
	After   int64
	End     int64
	Started int64
}

// Claim is a position on a shard's restriction: reading the shard's ids up
// to ID in pass Pass; or, with Wrap set, beginning pass Pass over
// (0, End] at Started.
type Claim struct {
	Pass    int64
	ID      int64
	Wrap    bool
	End     int64
	Started int64
}

// tracker tracks a shard's Restriction. It is unbounded: the scan never
// ends, it wraps to the next pass. A checkpoint hands the rest over as the
// residual, which resumes where the pass is.
type tracker struct {
	r       Restriction
	stopped bool
	err     error
}

var _ sdf.BoundableRTracker = (*tracker)(nil)

// TryClaim implements sdf.RTracker. Claiming the wrap to the next pass is
// what moves the restriction to that pass: a checkpoint taken afterwards
// resumes in the new pass, not in the old one.
func (t *tracker) TryClaim(pos any) bool {
	if t.stopped {
		return false
	}
	c, ok := pos.(Claim)
	if !ok {
		t.err = fmt.Errorf("reprocess: claim of a %T", pos)
		return false
	}
	switch {
	case c.Wrap:
		if c.Pass != t.r.Pass+1 || t.r.After < t.r.End {
			t.err = fmt.Errorf("reprocess: wrap to pass %d claimed at id %d of %d in pass %d", c.Pass, t.r.After, t.r.End, t.r.Pass)
			return false
		}
		t.r = Restriction{Pass: c.Pass, End: c.End, Started: c.Started}
	default:
		if c.Pass != t.r.Pass || c.ID <= t.r.After {
			t.err = fmt.Errorf("reprocess: claim of id %d in pass %d at id %d in pass %d", c.ID, c.Pass, t.r.After, t.r.Pass)
			return false
		}
		t.r.After = c.ID
	}
	return true
}

// GetError implements sdf.RTracker.
func (t *tracker) GetError() error { return t.err }

// TrySplit implements sdf.RTracker. Only checkpoints split: a scan is
// read in id order by one reader, and parallelism comes from shards.
func (t *tracker) TrySplit(fraction float64) (primary, residual any, err error) {
	if t.stopped || fraction > 0 {
		return t.r, nil, nil
	}
	t.stopped = true
	done := t.r
	done.End = done.After
	return done, t.r, nil
}

// GetProgress implements sdf.RTracker, in ids of the current pass.
func (t *tracker) GetProgress() (done, remaining float64) {
	return float64(t.r.After), float64(max(t.r.End-t.r.After, 0)) + 1
}

// IsDone implements sdf.RTracker: a scan is done only when it stopped
// (a checkpoint or a drain).
func (t *tracker) IsDone() bool { return t.stopped }

// GetRestriction implements sdf.RTracker.
func (t *tracker) GetRestriction() any { return t.r }

// IsBounded implements sdf.BoundableRTracker.
func (t *tracker) IsBounded() bool { return t.stopped }

// scanFn is the scanning splittable DoFn: one element per shard, each
// processed forever.
type scanFn struct {
	Opts Options

	st crawlkeeper.ScanStore
	// now is the clock; tests do not replace it, the scan paces in real
	// time like the runner's ResumeProcessingIn.
	now func() time.Time
}

func (fn *scanFn) Setup(ctx context.Context) error {
	st, err := acquireStore(ctx, fn.Opts.Store)
	if err != nil {
		return err
	}
	fn.st = st
	fn.now = time.Now
	return nil
}

func (fn *scanFn) Teardown() {
	if fn.st != nil {
		releaseStore(fn.Opts.Store)
		fn.st = nil
	}
}

// CreateInitialRestriction starts a shard before its first pass.
func (fn *scanFn) CreateInitialRestriction(Shard) Restriction { return Restriction{} }

// SplitRestriction keeps a shard's restriction whole: shards are the
// unit of parallelism.
func (fn *scanFn) SplitRestriction(_ Shard, r Restriction) []Restriction { return []Restriction{r} }

// RestrictionSize is the ids left in the pass, at least one: the scan
// always has work ahead.
func (fn *scanFn) RestrictionSize(_ Shard, r Restriction) float64 {
	return float64(max(r.End-r.After, 0)) + 1
}

// CreateTracker wraps the restriction in a thread-safe tracker.
func (fn *scanFn) CreateTracker(r Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(&tracker{r: r})
}

// TruncateRestriction ends the scan when the job drains.
func (fn *scanFn) TruncateRestriction(rt *sdf.LockRTracker, _ Shard) Restriction {
	r := rt.GetRestriction().(Restriction)
	r.End = r.After
	return r
}

// ProcessElement reads the shard's records in batches for up to a slice
// of time, emitting one Work per batch, then checkpoints. Between passes,
// and when a pass runs ahead of its pace, it checkpoints with a delay
// instead of waiting, so the worker is free meanwhile.
func (fn *scanFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, sh Shard, emit func(Work)) (sdf.ProcessContinuation, error) {
	o := fn.Opts.withDefaults()
	sliceEnd := fn.now().Add(o.Slice)
	defer running()()
	for {
		if quiescing.Load() {
			// The job is being cancelled (see quiesce.go).
			return sdf.ResumeProcessingIn(quiescePark), nil
		}
		r := rt.GetRestriction().(Restriction)
		if r.After >= r.End {
			// The pass is over: the next begins one period after this one
			// began, as the goroutine engine's passes do.
			if r.Pass > 0 {
				if wait := time.Unix(0, r.Started).Add(o.Period).Sub(fn.now()); wait > 0 {
					return sdf.ResumeProcessingIn(wait), nil
				}
			}
			maxID, err := fn.st.MaxID(ctx)
			if err != nil {
				return nil, fmt.Errorf("reprocess: shard %d: %w", sh.Index, err)
			}
			if !rt.TryClaim(Claim{Pass: r.Pass + 1, Wrap: true, End: maxID, Started: fn.now().UnixNano()}) {
				return sdf.StopProcessing(), nil
			}
			continue
		}
		pos := sh.next(r.After)
		if pos >= r.End {
			// No block of this shard is left in the pass.
			if !rt.TryClaim(Claim{Pass: r.Pass, ID: r.End}) {
				return sdf.StopProcessing(), nil
			}
			continue
		}
		hi := min(sh.blockEnd(pos), r.End)
		recs, err := fn.st.ScanActive(ctx, pos, hi, o.Batch)
		if err != nil {
			return nil, fmt.Errorf("reprocess: shard %d: read after id %d: %w", sh.Index, pos, err)
		}
		upto := hi
		if len(recs) == o.Batch {
			upto = recs[len(recs)-1].ID
		}
		if !rt.TryClaim(Claim{Pass: r.Pass, ID: upto}) {
			return sdf.StopProcessing(), nil
		}
		if len(recs) > 0 {
			b, err := json.Marshal(recs)
			if err != nil {
				return nil, fmt.Errorf("reprocess: encode records: %w", err)
			}
			emit(Work{Kind: KindScan, Pass: r.Pass, Shard: sh.Index, Records: b})
		}
		now := fn.now()
		// Pace: the pass reaches upto no earlier than its share of the
		// paced part of the period.
		if r.End > 0 {
			due := time.Unix(0, r.Started).Add(time.Duration(float64(o.Period) * paceFraction * float64(upto) / float64(r.End)))
			if wait := due.Sub(now); wait > 0 {
				return sdf.ResumeProcessingIn(wait), nil
			}
		}
		if !now.Before(sliceEnd) {
			return sdf.ResumeProcessingIn(0), nil
		}
	}
}

// shards returns the scan's elements, one per shard.
func shards(o Options) []Shard {
	out := make([]Shard, o.Shards)
	for i := range out {
		out[i] = Shard{Index: i, Count: o.Shards, Block: o.Block}
	}
	return out
}
