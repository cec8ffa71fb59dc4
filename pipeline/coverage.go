package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// A pass writes back only the results that changed. When it processed the
// records it did not write follows from its checkpoint: each range reads
// its ids in order, and the checkpoint keeps marks of where reads began
// and when. A record the pass covered was read, and processed, no earlier
// than the mark at or below its batch, so the mark's time is a lower bound
// of its processed time that Freshness uses (crawlkeeper.FreshnessQuery
// states the rule). Marks are taken at most every period/marksPerPeriod in
// each range, so the bound is within that of the true time; a pass slower
// than its period merges old marks (keeping the earlier time, which keeps
// the bound true) to stay within maxMarks.

// FinishedState is the state name of the last finished pass's checkpoint,
// kept while the next pass runs: the records the next pass has not reached
// yet were processed by it.
const FinishedState = "pipeline.scan.finished"

const (
	// marksPerPeriod is how many marks a range takes at most per period.
	marksPerPeriod = 1024
	// maxMarks bounds the marks one checkpoint keeps.
	maxMarks = 4096
)

// Mark says that the reads of a pass above Pos began at At: every record
// with an id above Pos, up to the next mark, that the pass covered was
// read at or after At. A pass without marks has an implicit one at 0 and
// its start time.
type Mark struct {
	Pos int64
	At  time.Time
}

// MarshalJSON writes a mark as [pos, unix microseconds]: a checkpoint
// holds up to maxMarks of them and is written after every batch.
func (m Mark) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]int64{m.Pos, m.At.UnixMicro()})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Mark) UnmarshalJSON(b []byte) error {
	var v [2]int64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("pipeline: checkpoint mark: %w", err)
	}
	m.Pos, m.At = v[0], crawlkeeper.MicrosTime(v[1])
	return nil
}

// bound returns the lower bound of the time the pass read id at: the time
// of the highest mark below id, or the pass's start.
func (c *Checkpoint) bound(id int64) time.Time {
	i := sort.Search(len(c.Marks), func(i int) bool { return c.Marks[i].Pos >= id })
	if i == 0 {
		return c.StartedAt
	}
	return c.Marks[i-1].At
}

// covered returns the spans of ids the pass has processed, with the bound
// of each, in id order: (0, End] less the ranges still to read.
func (c *Checkpoint) covered() []crawlkeeper.CoveredSpan {
	var out []crawlkeeper.CoveredSpan
	add := func(after, through int64) {
		// Split (after, through] at the marks inside it.
		i := sort.Search(len(c.Marks), func(i int) bool { return c.Marks[i].Pos > after })
		for lo := after; lo < through; {
			hi := through
			if i < len(c.Marks) && c.Marks[i].Pos < through {
				hi = c.Marks[i].Pos
			}
			if hi > lo {
				at := c.bound(lo + 1)
				if n := len(out); n > 0 && out[n-1].Through == lo && out[n-1].At.Equal(at) {
					out[n-1].Through = hi
				} else {
					out = append(out, crawlkeeper.CoveredSpan{After: lo, Through: hi, At: at})
				}
			}
			lo = hi
			i++
		}
	}
	pos := int64(0)
	for _, r := range c.Ranges {
		add(pos, min(r.Pos, c.End))
		pos = max(pos, r.End)
	}
	add(pos, c.End)
	return out
}

// cut prepares the marks for reading the ranges of c: the marks inside a
// range go, as its ids are read again and marked anew, and a mark at each
// range's end keeps the bound of the ids above it, so that marks taken in
// the range never reach ids outside it.
func (c *Checkpoint) cut() {
	if len(c.Ranges) == 0 {
		return
	}
	ends := make([]Mark, 0, len(c.Ranges))
	for _, r := range c.Ranges {
		ends = append(ends, Mark{Pos: r.End, At: c.bound(r.End + 1)})
	}
	kept := make([]Mark, 0, len(c.Marks)+len(ends))
	for _, m := range c.Marks {
		inside := false
		for _, r := range c.Ranges {
			if m.Pos >= r.Pos && m.Pos <= r.End {
				inside = true
				break
			}
		}
		if !inside {
			kept = append(kept, m)
		}
	}
	kept = append(kept, ends...)
	sort.Slice(kept, func(i, j int) bool { return kept[i].Pos < kept[j].Pos })
	c.Marks = kept
}

// marker collects a running pass's marks: readers add them, the
// coordinator copies them into the checkpoint it saves.
type marker struct {
	every time.Duration
	max   int

	mu    sync.Mutex
	marks []Mark
	// last is when each range (by its end) was last marked.
	last map[int64]time.Time
}

func newMarker(c *Checkpoint, period time.Duration) *marker {
	return &marker{every: period / marksPerPeriod, max: maxMarks, marks: append([]Mark(nil), c.Marks...), last: map[int64]time.Time{}}
}

// read notes that the range ending at end is about to read the ids above
// pos at now. The first read of a range is always marked, later ones when
// the range's last mark is older than the spacing.
func (m *marker) read(end, pos int64, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if last, ok := m.last[end]; ok && now.Sub(last) < m.every {
		return
	}
	m.last[end] = now
	i := sort.Search(len(m.marks), func(i int) bool { return m.marks[i].Pos >= pos })
	if i < len(m.marks) && m.marks[i].Pos == pos {
		// The range's own end mark, or its start read again: the ids
		// up to the next mark are all in this range and read from now.
		if now.After(m.marks[i].At) {
			m.marks[i].At = now
		}
		return
	}
	m.marks = append(m.marks, Mark{})
	copy(m.marks[i+1:], m.marks[i:])
	m.marks[i] = Mark{Pos: pos, At: now}
}

// snapshot returns the marks for a checkpoint, merging marks that no
// range will read near again while there are more than m.max. live are
// the ranges still being read.
func (m *marker) snapshot(live []Range) []Mark {
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.marks) > m.max {
		if !m.mergeOne(live) {
			break
		}
	}
	return append([]Mark(nil), m.marks...)
}

// mergeOne merges the two neighbouring frozen marks closest in time into
// the lower position and the earlier time: each id's bound can only go
// down, so it stays a lower bound. A mark is frozen when it lies in no
// live range (nothing will mark near it again).
func (m *marker) mergeOne(live []Range) bool {
	frozen := func(p int64) bool {
		for _, r := range live {
			if p >= r.Pos && p <= r.End {
				return false
			}
		}
		return true
	}
	best := -1
	var gap time.Duration
	for i := 0; i+1 < len(m.marks); i++ {
		a, b := m.marks[i], m.marks[i+1]
		if !frozen(a.Pos) || !frozen(b.Pos) {
			continue
		}
		d := b.At.Sub(a.At)
		if d < 0 {
			d = -d
		}
		if best < 0 || d < gap {
			best, gap = i, d
		}
	}
	if best < 0 {
		return false
	}
	if m.marks[best+1].At.Before(m.marks[best].At) {
		m.marks[best].At = m.marks[best+1].At
	}
	m.marks = append(m.marks[:best+1], m.marks[best+2:]...)
	return true
}

// loadFinished reads the last finished pass's checkpoint, nil when none
// was kept.
func loadFinished(ctx context.Context, st crawlkeeper.StateStore) (*Checkpoint, error) {
	return loadState(ctx, st, FinishedState, "(freshness then counts only stored processed times until the next pass ends)")
}

// Coverage returns the ids that passes of chain have processed, with the
// time from which each span's records were read: the current pass's
// covered ranges and, for the ids it has not reached, the last finished
// pass's.
func Coverage(ctx context.Context, st crawlkeeper.StateStore, chain string) ([]crawlkeeper.CoveredSpan, error) {
	cp, err := LoadCheckpoint(ctx, st)
	if err != nil {
		return nil, err
	}
	fin, err := loadFinished(ctx, st)
	if err != nil {
		return nil, err
	}
	// A checkpoint that finished after the kept one (a process stopped
	// between saving the two) is the last finished pass.
	if cp != nil && cp.FinishedAt != nil && (fin == nil || cp.Pass > fin.Pass) {
		fin = cp
	}
	var cur []crawlkeeper.CoveredSpan
	if cp != nil && cp.FinishedAt == nil && cp.Chain == chain {
		cur = cp.covered()
	}
	var prev []crawlkeeper.CoveredSpan
	if fin != nil && fin.Chain == chain {
		prev = fin.covered()
	}
	return overlay(cur, prev), nil
}

// overlay returns the spans of top, and the parts of the spans of under
// that no span of top covers, in id order. Both are sorted and disjoint.
func overlay(top, under []crawlkeeper.CoveredSpan) []crawlkeeper.CoveredSpan {
	out := append([]crawlkeeper.CoveredSpan(nil), top...)
	for _, u := range under {
		lo := u.After
		for _, t := range top {
			if t.Through <= lo || t.After >= u.Through {
				continue
			}
			if t.After > lo {
				out = append(out, crawlkeeper.CoveredSpan{After: lo, Through: t.After, At: u.At})
			}
			lo = max(lo, t.Through)
		}
		if lo < u.Through {
			out = append(out, crawlkeeper.CoveredSpan{After: lo, Through: u.Through, At: u.At})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].After < out[j].After })
	return out
}

// Freshness reports how current processing is for chain: the store's
// counts, with the processed times of the records passes read but did not
// write back derived from the pass checkpoints.
func Freshness(ctx context.Context, st Store, chain string, dueBefore time.Time) (*crawlkeeper.Freshness, error) {
	cov, err := Coverage(ctx, st, chain)
	if err != nil {
		return nil, err
	}
	return st.Freshness(ctx, crawlkeeper.FreshnessQuery{Chain: chain, DueBefore: dueBefore, Covered: cov})
}
