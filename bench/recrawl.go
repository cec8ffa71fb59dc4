package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/recrawl"
)

// RecrawlNames are the results of the recrawl simulation.
var RecrawlNames = []string{"recrawl_freshness", "recrawl_vs_nutch", "recrawl_vs_uniform", "recrawl_new_hours"}

// recrawlPages is the simulation's size: pages whose content changes as
// Poisson processes, crawled for 60 simulated days at a tenth of them a
// day. A benchmark at a smaller scale simulates as many pages as its
// scale.
const recrawlPages = 10000

// recrawlSource is the source the simulated pages are delivered under.
const recrawlSource = "recrawl-sim"

// Recrawl is the measurement of the recrawl advisor (package recrawl's
// simulator): uniform round-robin, Nutch's AdaptiveFetchSchedule, the
// advisor and the oracle crawl the same pages at the same budget. Every
// fetch of the advisor's crawl is delivered through crawlkeeper's ingest
// into a scratch store, and the advisor ranks what that store read back
// (crawlkeeper.RecrawlStore), never the simulated rates; the other
// policies need no store.
var Recrawl = Measurement{Names: RecrawlNames, Run: runRecrawl}

func runRecrawl(ctx context.Context, env *Env) ([]Result, error) {
	opts := &env.Options
	rates, err := recrawl.ParseRates(opts.RecrawlRates)
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "--recrawl-rates: %v", err)
	}
	pages := min(recrawlPages, max(opts.Scale, 100))
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	cfg := recrawl.SimConfig{Pages: pages, Rates: &rates, Seed: 1,
		NewStore: func(policy string) (recrawl.Store, error) {
			if policy != recrawl.PolicyAdvisor {
				return recrawl.NewMemStore(), nil
			}
			st, closeStore, err := opts.Open(ctx, "recrawl")
			if err != nil {
				return nil, err
			}
			closers = append(closers, closeStore)
			s := &IngestStore{Store: st, Source: recrawlSource, Dates: opts.Dates}
			s.Progress = func(at time.Time) {
				opts.progress("recrawl (advisor, simulated days)", int(at.Sub(s.start)/(24*time.Hour)), 60)
			}
			return s, nil
		}}
	opts.progress("recrawl (uniform, nutch, oracle)", 0, 1)
	rep, err := recrawl.Simulate(ctx, cfg)
	if err != nil {
		return nil, err
	}
	adv, _ := rep.Result(recrawl.PolicyAdvisor)
	var out []Result
	for _, row := range rep.Rows() {
		switch row.Name {
		case "recrawl_new_hours":
			out = append(out, Result{Name: row.Name, Unit: "hours", Value: row.Value, N: pages,
				Target: "value <= 24", Met: row.Value >= 0 && row.Value <= 24})
		default:
			policy := map[string]string{"recrawl_freshness": recrawl.PolicyOracle, "recrawl_vs_nutch": recrawl.PolicyNutch, "recrawl_vs_uniform": recrawl.PolicyUniform}[row.Name]
			other, _ := rep.Result(policy)
			min, target := 1.0, "value/baseline > 1"
			if row.Name == "recrawl_freshness" {
				min, target = 0.95, "value/baseline >= 0.95"
			}
			out = append(out, Result{Name: row.Name, Unit: "freshness (days 31-60)", Value: adv.Freshness, Baseline: other.Freshness,
				Ratio: row.Value, N: pages, Target: target, Met: row.Value >= min && (min == 0.95 || row.Value > 1)})
		}
	}
	return out, nil
}

// IngestStore is the simulator's store (recrawl.Store) on a crawlkeeper
// store: each fetch is an item ingested at its simulated time, and the
// advisor reads back the source's records and counters. Deliveries are
// buffered and ingested in one batch per simulated time, before the next
// read, as a crawler posting its fetches of the hour would.
type IngestStore struct {
	Store  crawlkeeper.Store
	Source string
	Dates  crawlkeeper.DateParser
	// Progress, when set, is called at each read with the simulated time.
	Progress func(at time.Time)

	g       *crawlkeeper.Ingester
	at      time.Time
	start   time.Time
	pending []map[string]any
	metas   []crawlkeeper.Meta
	names   map[int64]string
}

var _ recrawl.Store = (*IngestStore)(nil)

// Deliver implements recrawl.Store.
func (s *IngestStore) Deliver(ctx context.Context, page, content string, at time.Time) error {
	if s.start.IsZero() {
		s.start = at
	}
	if !at.Equal(s.at) {
		if err := s.flush(ctx); err != nil {
			return err
		}
		s.at = at
	}
	s.pending = append(s.pending, map[string]any{"url": page, "title": page, "body": content})
	s.metas = append(s.metas, crawlkeeper.Meta{Source: s.Source})
	return nil
}

func (s *IngestStore) flush(ctx context.Context) error {
	if len(s.pending) == 0 {
		return nil
	}
	if s.g == nil {
		s.g = &crawlkeeper.Ingester{Store: s.Store, Config: &crawlkeeper.Config{}, Dates: s.Dates, Now: func() time.Time { return s.at }}
	}
	sum, err := s.g.IngestItems(ctx, s.pending, s.metas)
	if err != nil {
		return err
	}
	if sum.Rejected > 0 {
		return fmt.Errorf("recrawl: ingest rejected %d of %d fetches: %v", sum.Rejected, len(s.pending), sum.Errors)
	}
	s.pending, s.metas = s.pending[:0], s.metas[:0]
	return nil
}

// Stats implements recrawl.Store: what crawlkeeper stored, read as the
// advisor reads it.
func (s *IngestStore) Stats(ctx context.Context) ([]recrawl.Record, error) {
	if err := s.flush(ctx); err != nil {
		return nil, err
	}
	if s.Progress != nil && !s.at.IsZero() {
		s.Progress(s.at)
	}
	recs, err := s.Store.RecrawlRecords(ctx, s.Source)
	if err != nil {
		return nil, err
	}
	// Names are read once per record, as the advisor reads those of the
	// records it lists.
	var unknown []int64
	for _, r := range recs {
		if _, ok := s.names[r.ID]; !ok {
			unknown = append(unknown, r.ID)
		}
	}
	if len(unknown) > 0 {
		names, err := s.Store.RecrawlNames(ctx, s.Source, unknown)
		if err != nil {
			return nil, err
		}
		if s.names == nil {
			s.names = map[int64]string{}
		}
		for _, n := range names {
			s.names[n.ID] = n.URL
		}
	}
	for i := range recs {
		recs[i].Name = s.names[recs[i].ID]
	}
	return recs, nil
}
