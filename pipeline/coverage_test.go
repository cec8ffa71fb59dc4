package pipeline

import (
	"math/rand"
	"testing"
	"time"
)

// TestMarksAreLowerBounds simulates passes read by several ranges in a
// random interleaving, stopped and resumed with another number of readers,
// with few marks allowed so that they merge, and checks after every step
// that each covered id's bound is no later than the last time it was
// read, and that the covered spans are exactly the ids outside the ranges
// left to read.
func TestMarksAreLowerBounds(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		const end, batch = 600, 7
		t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		now := t0
		cp := &Checkpoint{Pass: 1, StartedAt: now, End: end, Ranges: splitRange(0, end, 1+rng.Intn(4), batch)}
		cp.cut()
		lastRead := map[int64]time.Time{}
		for stops := 0; len(cp.Ranges) > 0; stops++ {
			mk := newMarker(cp, 0) // mark every read
			mk.max = 3 + rng.Intn(6)
			type reader struct{ pos, done, end int64 }
			var rs []*reader
			for _, r := range cp.Ranges {
				rs = append(rs, &reader{pos: r.Pos, done: r.Pos, end: r.End})
			}
			live := func() []Range {
				var out []Range
				for _, r := range rs {
					if r.done < r.end {
						out = append(out, Range{Pos: r.done, End: r.end})
					}
				}
				return out
			}
			// Read until every range is done or the process "dies".
			for steps := 0; ; steps++ {
				var open []*reader
				for _, r := range rs {
					if r.pos < r.end {
						open = append(open, r)
					}
				}
				if len(open) == 0 || (stops < 2 && steps > 5 && rng.Intn(8) == 0) {
					break
				}
				r := open[rng.Intn(len(open))]
				now = now.Add(time.Duration(1+rng.Intn(100)) * time.Second)
				mk.read(r.end, r.pos, now)
				hi := min(r.pos+batch, r.end)
				for id := r.pos + 1; id <= hi; id++ {
					lastRead[id] = now
				}
				r.pos = hi
				// Batches finish in order, some later than they are read.
				if rng.Intn(2) == 0 {
					r.done = r.pos
				}
				cp.Ranges, cp.Marks = live(), mk.snapshot(live())
				check(t, seed, cp, lastRead)
			}
			for _, r := range rs {
				if r.pos == r.end {
					r.done = r.end
				}
			}
			cp.Ranges, cp.Marks = live(), mk.snapshot(live())
			check(t, seed, cp, lastRead)
			// Resume: another number of readers, marks cut anew.
			now = now.Add(time.Hour)
			cp.Ranges = resplit(cp.Ranges, 1+rng.Intn(4), batch)
			cp.cut()
			check(t, seed, cp, lastRead)
		}
	}
}

func check(t *testing.T, seed int64, cp *Checkpoint, lastRead map[int64]time.Time) {
	t.Helper()
	left := map[int64]bool{}
	for _, r := range cp.Ranges {
		for id := r.Pos + 1; id <= r.End; id++ {
			left[id] = true
		}
	}
	covered := map[int64]time.Time{}
	prev := int64(-1)
	for _, s := range cp.covered() {
		if s.After < prev || s.Through <= s.After {
			t.Fatalf("seed %d: spans out of order: %+v", seed, cp.covered())
		}
		prev = s.Through
		for id := s.After + 1; id <= s.Through; id++ {
			covered[id] = s.At
		}
	}
	for id := int64(1); id <= cp.End; id++ {
		at, ok := covered[id]
		if ok == left[id] {
			t.Fatalf("seed %d: id %d covered %v, left to read %v", seed, id, ok, left[id])
		}
		if ok && at.After(lastRead[id]) {
			t.Fatalf("seed %d: id %d bound %v is later than its last read %v (marks %v, ranges %v)", seed, id, at, lastRead[id], cp.Marks, cp.Ranges)
		}
	}
}
