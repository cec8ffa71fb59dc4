package processors

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// StatsState is the state name under which Stats saves its counters.
const StatsState = "pipeline.stats"

// SourceCounts are the per-source counters of the stats processor.
type SourceCounts struct {
	// Records counts the source's active records.
	Records int64 `json:"records"`
	// Changes counts their content changes (version - 1, summed).
	Changes int64 `json:"changes"`
	// DateErrors counts event-field strings that could not be read.
	DateErrors int64 `json:"date_errors"`
}

// SourceStats is what Stats saves: counters by source and when.
type SourceStats struct {
	At      time.Time                `json:"at"`
	Sources map[string]*SourceCounts `json:"sources"`
}

// Stats keeps per-source counters of the active records current: each
// processed record replaces its previous contribution, so a change or a
// new date error shows at once, and records that left the active set are
// swept out after each pass. Like Fingerprint, its state is rebuilt from
// the store on start. Place it after dates in the chain, so it counts the
// date errors of the current reading. It writes nothing into derived; the
// counters are saved in the store's state (StatsState) after each pass.
type Stats struct {
	// Now stamps saved counters. Defaults to time.Now.
	Now func() time.Time

	mu     sync.Mutex
	epoch  uint64
	byID   map[int64]statEntry
	totals map[string]*SourceCounts
}

type statEntry struct {
	source     string
	changes    int64
	dateErrors int64
	epoch      uint64
}

var (
	_ crawlkeeper.CorpusProcessor = (*Stats)(nil)
	_ crawlkeeper.StateSaver      = (*Stats)(nil)
)

// Name implements crawlkeeper.Processor.
func (s *Stats) Name() string { return "stats" }

// Version implements crawlkeeper.Processor.
func (s *Stats) Version() int { return 1 }

// Process implements crawlkeeper.Processor.
func (s *Stats) Process(_ context.Context, r *crawlkeeper.Record, _ map[string]any) error {
	s.Load(r)
	return nil
}

// Load implements crawlkeeper.CorpusProcessor.
func (s *Stats) Load(r *crawlkeeper.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byID == nil {
		s.byID = map[int64]statEntry{}
		s.totals = map[string]*SourceCounts{}
	}
	s.drop(r.ID)
	e := statEntry{source: r.Source, changes: r.Version - 1, dateErrors: int64(len(r.DateErrors)), epoch: s.epoch}
	s.byID[r.ID] = e
	t := s.totals[e.source]
	if t == nil {
		t = &SourceCounts{}
		s.totals[e.source] = t
	}
	t.Records++
	t.Changes += e.changes
	t.DateErrors += e.dateErrors
}

func (s *Stats) drop(id int64) {
	e, ok := s.byID[id]
	if !ok {
		return
	}
	delete(s.byID, id)
	t := s.totals[e.source]
	t.Records--
	t.Changes -= e.changes
	t.DateErrors -= e.dateErrors
	if t.Records == 0 {
		delete(s.totals, e.source)
	}
}

// Mark implements crawlkeeper.CorpusProcessor.
func (s *Stats) Mark() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	return s.epoch
}

// Sweep implements crawlkeeper.CorpusProcessor.
func (s *Stats) Sweep(mark uint64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var old []int64
	for id, e := range s.byID {
		if e.epoch < mark {
			old = append(old, id)
		}
	}
	for _, id := range old {
		s.drop(id)
	}
	return len(old)
}

// Snapshot returns a copy of the counters.
func (s *Stats) Snapshot() map[string]SourceCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]SourceCounts, len(s.totals))
	for k, v := range s.totals {
		out[k] = *v
	}
	return out
}

// Save implements crawlkeeper.StateSaver.
func (s *Stats) Save(ctx context.Context, st crawlkeeper.StateStore) error {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	snap := s.Snapshot()
	out := SourceStats{At: now().UTC(), Sources: make(map[string]*SourceCounts, len(snap))}
	for k, v := range snap {
		v := v
		out.Sources[k] = &v
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return st.PutState(ctx, StatsState, b)
}

// LoadStats reads the counters a Stats processor saved, nil when none.
func LoadStats(ctx context.Context, st crawlkeeper.StateStore) (*SourceStats, error) {
	b, err := st.GetState(ctx, StatsState)
	if err != nil || len(b) == 0 {
		return nil, err
	}
	var out SourceStats
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("read %s: %w", StatsState, err)
	}
	return &out, nil
}
