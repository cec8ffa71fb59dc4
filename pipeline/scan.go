package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/clock"
)

// CheckpointState is the state name of the scanner's checkpoint.
const CheckpointState = "pipeline.scan"

// paceFraction is the part of the period a paced pass is spread over: the
// rest absorbs slow batches, so the pass still ends before its deadline.
const paceFraction = 0.9

// Checkpoint is the position of the current or last pass, stored in the
// store's state after every batch that moves it.
//
// A pass covers the ids in (0, End], End being the highest id when it
// began; it is split into ranges read in parallel. Ranges lists what is
// left of each: the ids in (Pos, End] of a range may still be unwritten,
// every id of the pass outside the ranges is written. A range's Pos moves
// only over batches that are written, in id order, so a process that dies
// loses at most the batches in flight and the next one reads them again:
// nothing is skipped.
type Checkpoint struct {
	Pass  int64  `json:"pass"`
	Chain string `json:"chain"`
	// StartedAt is when the pass began; a paced pass ends before
	// StartedAt plus the period.
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	End        int64      `json:"end"`
	Ranges     []Range    `json:"ranges"`
	// Marks are where this pass's reads began and when, in id order (see
	// Mark): Freshness derives from them when the records the pass did
	// not write back were processed.
	Marks []Mark `json:"marks,omitempty"`
}

// Range is an unfinished part of a pass: ids in (Pos, End].
type Range struct {
	Pos int64 `json:"pos"`
	End int64 `json:"end"`
}

// Position returns the id below which every record of the pass is
// written (End once the pass is finished).
func (c *Checkpoint) Position() int64 {
	if len(c.Ranges) == 0 {
		return c.End
	}
	return c.Ranges[0].Pos
}

// LoadCheckpoint reads the checkpoint, nil when no pass ever started.
func LoadCheckpoint(ctx context.Context, st crawlkeeper.StateStore) (*Checkpoint, error) {
	return loadState(ctx, st, CheckpointState, "to start a new pass")
}

// loadState reads the checkpoint stored as name, nil when there is none;
// deleting says what deleting a damaged one does.
func loadState(ctx context.Context, st crawlkeeper.StateStore, name, deleting string) (*Checkpoint, error) {
	b, err := st.GetState(ctx, name)
	if err != nil || len(b) == 0 {
		return nil, err
	}
	var c Checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("pipeline: checkpoint %s is damaged (%v): delete it %s", name, err, deleting)
	}
	return &c, nil
}

func saveCheckpoint(ctx context.Context, st crawlkeeper.StateStore, c *Checkpoint) error {
	return saveState(ctx, st, CheckpointState, c)
}

func saveState(ctx context.Context, st crawlkeeper.StateStore, name string, c *Checkpoint) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := st.PutState(ctx, name, b); err != nil {
		return fmt.Errorf("pipeline: save checkpoint %s: %w", name, err)
	}
	return nil
}

// PassReport summarises one pass, or the part of it this process ran.
// Outcome.Unchanged counts the records whose result was already stored:
// the pass did not write them.
type PassReport struct {
	Pass int64 `json:"pass"`
	Outcome
	DurationS float64 `json:"duration_s"`
	// Rate is records processed per second.
	Rate float64 `json:"rate"`
	// Resumed is set when the pass continued from a checkpoint, From
	// being the position it continued from.
	Resumed bool  `json:"resumed"`
	From    int64 `json:"from"`
	// Read counts the records the pass read.
	Read int64 `json:"-"`
	// Finished is false when the pass stopped early (an error or the
	// context); its checkpoint says where the next run continues.
	Finished bool `json:"-"`
}

// RunPass runs the current pass to its end: it resumes the pass of the
// checkpoint when it is unfinished and of the same chain, and begins a new
// one otherwise. It paces itself over the period only when Pace is set.
func (e *Engine) RunPass(ctx context.Context) (*PassReport, error) {
	if err := e.Init(ctx); err != nil {
		return nil, err
	}
	return e.runPass(ctx, e.Pace)
}

// rangeState is a range being read: the readers own next, the coordinator
// owns pos and done (finished batches not yet contiguous with pos).
type rangeState struct {
	pos, end int64
	done     map[int64]int64
}

// batch is one keyset read: the records with ids in (lo, hi].
type batch struct {
	rs     *rangeState
	lo, hi int64
	recs   []*crawlkeeper.Record
}

type batchResult struct {
	b   *batch
	out Outcome
}

func (e *Engine) runPass(ctx context.Context, pace bool) (*PassReport, error) {
	// The report's duration and rate are of the work done, so they come
	// from the monotonic clock, not from e.Clock: a fixed clock (--now)
	// would report 0 s and 0 records/s, the demo's time-lapse a pass
	// hundreds of times too long.
	start := time.Now()
	cp, err := LoadCheckpoint(ctx, e.Store)
	if err != nil {
		return nil, err
	}
	if err := e.reloadDead(ctx); err != nil {
		return nil, err
	}
	rep := &PassReport{}
	if cp == nil || cp.FinishedAt != nil || cp.Chain != e.chain {
		if cp != nil && cp.FinishedAt != nil {
			// Keep the finished pass: Freshness needs it for the ids
			// the new pass has not reached yet.
			if err := saveState(ctx, e.Store, FinishedState, cp); err != nil {
				return nil, err
			}
		}
		maxID, err := e.Store.MaxID(ctx)
		if err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
		next := int64(1)
		if cp != nil {
			next = cp.Pass + 1
		}
		cp = &Checkpoint{Pass: next, Chain: e.chain, StartedAt: e.now(), End: maxID, Ranges: splitRange(0, maxID, e.readers(), e.batch())}
		cp.cut()
		e.marks = e.mark()
		if err := saveCheckpoint(ctx, e.Store, cp); err != nil {
			return nil, err
		}
	} else {
		rep.Resumed = true
		cp.Ranges = resplit(cp.Ranges, e.readers(), e.batch())
		cp.cut()
	}
	mk := newMarker(cp, e.period())
	rep.Pass = cp.Pass
	rep.From = cp.Position()
	startPos := rep.From

	var deadline time.Time
	if pace {
		deadline = cp.StartedAt.Add(time.Duration(float64(e.period()) * paceFraction))
	}
	states := make([]*rangeState, len(cp.Ranges))
	var remaining atomic.Int64
	for i, r := range cp.Ranges {
		states[i] = &rangeState{pos: r.Pos, end: r.End, done: map[int64]int64{}}
		remaining.Add(r.End - r.Pos)
	}
	pc := &pacer{clock: e.clock(), maxRate: e.MaxRate, deadline: deadline}

	passCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var errMu sync.Mutex
	var firstErr error
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
		cancel()
	}

	queue := make(chan *rangeState, len(states))
	for _, s := range states {
		queue <- s
	}
	close(queue)
	// work is the bounded buffer between readers and workers.
	work := make(chan *batch, e.workers())
	results := make(chan batchResult, e.workers())
	size := e.batch()
	var read atomic.Int64

	var readers sync.WaitGroup
	for i := 0; i < e.readers(); i++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for rs := range queue {
				for pos := rs.pos; pos < rs.end; {
					if err := pc.wait(passCtx); err != nil {
						return
					}
					mk.read(rs.end, pos, e.now())
					recs, err := e.Store.ScanActive(passCtx, pos, rs.end, size)
					if err != nil {
						if passCtx.Err() == nil {
							fail(fmt.Errorf("pipeline: read after id %d: %w", pos, err))
						}
						return
					}
					hi := rs.end
					if len(recs) == size {
						hi = recs[len(recs)-1].ID
					}
					read.Add(int64(len(recs)))
					pc.consume(len(recs), hi-pos, remaining.Add(-(hi-pos))+(hi-pos))
					select {
					case work <- &batch{rs: rs, lo: pos, hi: hi, recs: recs}:
					case <-passCtx.Done():
						return
					}
					pos = hi
				}
			}
		}()
	}
	go func() { readers.Wait(); close(work) }()

	var workers sync.WaitGroup
	for i := 0; i < e.workers(); i++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for b := range work {
				if passCtx.Err() != nil {
					continue // drain, so the readers can stop
				}
				out, err := e.handle(passCtx, b.recs, true)
				if err != nil {
					if passCtx.Err() == nil {
						fail(fmt.Errorf("pipeline: batch after id %d: %w", b.lo, err))
					}
					continue
				}
				results <- batchResult{b: b, out: out}
			}
		}()
	}
	go func() { workers.Wait(); close(results) }()

	// The coordinator moves each range's position over finished batches
	// in id order and stores the checkpoint whenever a position moved.
	for res := range results {
		rep.add(res.out)
		if e.Observer != nil {
			e.Observer.ObserveProcessed(PathRescan, res.out)
		}
		rs := res.b.rs
		rs.done[res.b.lo] = res.b.hi
		moved := false
		for {
			hi, ok := rs.done[rs.pos]
			if !ok {
				break
			}
			delete(rs.done, rs.pos)
			rs.pos = hi
			moved = true
		}
		if !moved || passCtx.Err() != nil {
			continue
		}
		cp.Ranges = cp.Ranges[:0]
		for _, s := range states {
			if s.pos < s.end {
				cp.Ranges = append(cp.Ranges, Range{Pos: s.pos, End: s.end})
			}
		}
		cp.Marks = mk.snapshot(cp.Ranges)
		if err := saveCheckpoint(passCtx, e.Store, cp); err != nil {
			fail(err)
			continue
		}
		if e.Progress != nil {
			e.Progress(Progress{Pass: cp.Pass, Position: cp.Position(), Start: startPos, End: cp.End, Processed: rep.Processed})
		}
	}
	rep.Read = read.Load()
	elapsed := time.Since(start)
	rep.DurationS = elapsed.Seconds()
	if elapsed > 0 {
		rep.Rate = float64(rep.Processed) / elapsed.Seconds()
	}
	if firstErr != nil {
		return rep, firstErr
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	fin := e.now()
	cp.Ranges, cp.FinishedAt = nil, &fin
	cp.Marks = mk.snapshot(nil)
	if err := saveCheckpoint(ctx, e.Store, cp); err != nil {
		return rep, err
	}
	rep.Finished = true
	e.sweep(e.marks)
	if err := e.Save(ctx); err != nil {
		return rep, err
	}
	return rep, nil
}

// splitRange splits (pos, end] into at most n ranges of at least one
// batch's worth of ids each.
func splitRange(pos, end int64, n, batch int) []Range {
	if end <= pos {
		return []Range{}
	}
	return resplit([]Range{{Pos: pos, End: end}}, n, batch)
}

// resplit splits the largest ranges in halves until there are n of them
// or none is worth splitting (two batches of ids), keeping id order. A
// pass resumed with more readers than it began with uses them all.
func resplit(rs []Range, n, batch int) []Range {
	out := append([]Range(nil), rs...)
	for len(out) < n {
		best := -1
		for i, r := range out {
			if r.End-r.Pos >= 2*int64(batch) && (best < 0 || r.End-r.Pos > out[best].End-out[best].Pos) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		r := out[best]
		mid := r.Pos + (r.End-r.Pos)/2
		out = append(out[:best], append([]Range{{Pos: r.Pos, End: mid}, {Pos: mid, End: r.End}}, out[best+1:]...)...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out
}

// pacer spaces reads so that a pass neither exceeds MaxRate records per
// second nor runs ahead of its schedule: the ids left are spread evenly
// over the time left until the deadline. Readers share one pacer, so the
// limits hold for all of them together.
type pacer struct {
	clock    clock.Clock
	maxRate  float64
	deadline time.Time

	mu   sync.Mutex
	next time.Time
}

// wait blocks until the next read is allowed.
func (p *pacer) wait(ctx context.Context) error {
	p.mu.Lock()
	next := p.next
	p.mu.Unlock()
	if d := next.Sub(p.clock.Now()); d > 0 {
		select {
		case <-p.clock.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return ctx.Err()
}

// consume books a read of records records spanning ids ids, when
// remaining ids (these included) were left.
func (p *pacer) consume(records int, ids, remaining int64) {
	now := p.clock.Now()
	var delay time.Duration
	if p.maxRate > 0 {
		delay = time.Duration(float64(records) / p.maxRate * float64(time.Second))
	}
	if !p.deadline.IsZero() && remaining > 0 {
		if left := p.deadline.Sub(now); left > 0 {
			if d := time.Duration(float64(left) * float64(ids) / float64(remaining)); d > delay {
				delay = d
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next.Before(now) {
		p.next = now
	}
	p.next = p.next.Add(delay)
}
