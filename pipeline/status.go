package pipeline

import (
	"context"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/processors"
)

// Status is where reprocessing stands: the current pass and how fresh the
// active records are. `crawlkeeper scan status` prints it and the HTTP API
// serves it.
type Status struct {
	Pass int64 `json:"pass"`
	// Position is the id up to which every record of the pass is
	// processed. A pass covers the ids up to PassEnd, the highest id when
	// it began; records added later wait for real time or the next pass.
	Position int64 `json:"position"`
	// PassDone counts the ids of the pass (of PassEnd) already processed:
	// with parallel readers it runs ahead of Position.
	PassDone          int64      `json:"pass_done"`
	PassStartedAt     *time.Time `json:"pass_started_at"`
	OldestProcessedAt *time.Time `json:"oldest_processed_at"`
	// Due counts active records never processed, processed for another
	// version or chain, or processed longer than a period ago.
	Due            int64                               `json:"due"`
	PassEnd        int64                               `json:"pass_end"`
	PassFinishedAt *time.Time                          `json:"pass_finished_at"`
	Chain          string                              `json:"chain"`
	Period         crawlkeeper.Duration                `json:"period"`
	Active         int64                               `json:"active"`
	NeverProcessed int64                               `json:"never_processed"`
	DeadLetters    int                                 `json:"dead_letters"`
	Sources        map[string]*processors.SourceCounts `json:"sources,omitempty"`
	StatsAt        *time.Time                          `json:"stats_at,omitempty"`
}

// ReadStatus reads the pipeline's status from the store for a processor
// chain and period at now.
func ReadStatus(ctx context.Context, st Store, chain string, period time.Duration, now time.Time) (*Status, error) {
	if period <= 0 {
		period = crawlkeeper.DefaultPipelinePeriod
	}
	cp, err := LoadCheckpoint(ctx, st)
	if err != nil {
		return nil, err
	}
	fr, err := Freshness(ctx, st, chain, now.Add(-period))
	if err != nil {
		return nil, err
	}
	dls, err := st.DeadLetters(ctx, 1<<30)
	if err != nil {
		return nil, err
	}
	s := &Status{Chain: chain, Period: crawlkeeper.Duration(period), OldestProcessedAt: fr.OldestProcessedAt, Due: fr.Due,
		Active: fr.Active, NeverProcessed: fr.NeverProcessed, DeadLetters: len(dls)}
	if cp != nil {
		started := cp.StartedAt
		s.Pass, s.Position, s.PassStartedAt, s.PassEnd, s.PassFinishedAt = cp.Pass, cp.Position(), &started, cp.End, cp.FinishedAt
		s.PassDone = cp.End
		for _, r := range cp.Ranges {
			s.PassDone -= r.End - r.Pos
		}
	}
	ss, err := processors.LoadStats(ctx, st)
	if err != nil {
		return nil, err
	}
	if ss != nil {
		s.Sources, s.StatsAt = ss.Sources, &ss.At
	}
	return s, nil
}

// LastPassDuration returns how long the last finished pass took, from its
// start to its end on the engine's clock (a paced pass spreads over most
// of the period); ok is false before any pass finished.
func LastPassDuration(ctx context.Context, st crawlkeeper.StateStore) (d time.Duration, ok bool, err error) {
	cp, err := LoadCheckpoint(ctx, st)
	if err != nil {
		return 0, false, err
	}
	if cp == nil || cp.FinishedAt == nil {
		if cp, err = loadState(ctx, st, FinishedState, "to forget the last finished pass"); err != nil || cp == nil || cp.FinishedAt == nil {
			return 0, false, err
		}
	}
	return cp.FinishedAt.Sub(cp.StartedAt), true, nil
}
