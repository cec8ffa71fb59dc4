package crawlkeeper

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper/recrawl"
)

// RecrawlStore is the store role the recrawl advisor reads: a source's
// active records' delivery counters, then the names of the few it lists.
type RecrawlStore interface {
	// RecrawlRecords returns every active record of source (the empty
	// name is a source like any other), in any order, with ID set and
	// Stats as RecrawlStats builds them, Name empty: one read that touches
	// no item, no name and no history.
	RecrawlRecords(ctx context.Context, source string) ([]recrawl.Record, error)
	// RecrawlNames returns the URL and last target of the active records
	// of source among ids, in any order; ids nil means every active
	// record of source.
	RecrawlNames(ctx context.Context, source string, ids []int64) ([]RecrawlName, error)
}

// RecrawlName is what a crawler fetches for a record.
type RecrawlName struct {
	ID     int64
	URL    string
	Target string // Record.LastTarget
}

// Name is what a crawler fetches and a round queues: the target its
// crawler named when it delivered the record, or else its URL.
func (n RecrawlName) Name() string {
	if n.Target != "" {
		return n.Target
	}
	return n.URL
}

// RecrawlStats builds what package recrawl estimates from, out of a
// record's last delivery, event date and delivery counters (nil for a
// record stored before they were kept). The advisor needs no other
// column: a record's last delivery is its last fetch.
func RecrawlStats(lastUpdatedAt time.Time, eventAt *time.Time, f *FetchCounts) recrawl.FetchStats {
	s := recrawl.FetchStats{LastFetch: lastUpdatedAt, EventAt: eventAt}
	if f != nil {
		s.Known = true
		s.Refetches, s.Changes = f.Refetches, f.Changes
		s.ChangedSeconds = float64(f.ChangedUS) / 1e6
		s.UnchangedSeconds = float64(f.UnchangedUS) / 1e6
		s.ChangedLogSeconds = f.ChangedLog
	}
	return s
}

// ParseBudget reads a crawl budget as fetches per day: "1000", "1000/day",
// "40/hour", "5000/week", "300/12h" (a count over any duration ParseDuration
// reads).
func ParseBudget(s string) (float64, error) {
	bad := func() (float64, error) {
		return 0, Errorf(EINVALID, "invalid budget %q: give fetches per period, like 1000/day, 40/hour or 5000/week", s)
	}
	count, period, ok := strings.Cut(strings.TrimSpace(s), "/")
	n, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(count), ",", ""), 64)
	if err != nil || !(n > 0) || math.IsInf(n, 1) {
		return bad()
	}
	if !ok {
		return n, nil
	}
	var d time.Duration
	switch p := strings.ToLower(strings.TrimSpace(period)); p {
	case "day", "d":
		d = 24 * time.Hour
	case "hour", "h":
		d = time.Hour
	case "minute", "min", "m":
		d = time.Minute
	case "week", "w":
		d = 7 * 24 * time.Hour
	default:
		pd, err := ParseDuration(p)
		if err != nil || pd <= 0 {
			return bad()
		}
		d = pd.D()
	}
	return n * float64(24*time.Hour) / float64(d), nil
}

// NextQuery asks the advisor what to fetch now.
type NextQuery struct {
	Source string
	// Budget is the crawl's fetches per day; 0 takes the source's pace:
	// its records delivered in the last 24 hours.
	Budget float64
	// Limit caps the answer (DefaultNextLimit when 0, at most
	// MaxNextLimit).
	Limit int
	// Round, when set, puts the round's remaining targets that no active
	// record names (by target or URL) first: pages never fetched.
	Round string
	// Fill tops the answer up to Limit with the records closest to due
	// when fewer are due, for a crawler whose capacity would otherwise
	// sit idle.
	Fill bool
}

// Limits of NextQuery.Limit.
const (
	DefaultNextLimit = 100
	MaxNextLimit     = 100000
)

// NextItem is one page to fetch.
type NextItem struct {
	// ID is the record's id; 0 for a target never fetched.
	ID     int64  `json:"id,omitempty"`
	Name   string `json:"name"`
	URL    string `json:"url,omitempty"`
	Reason string `json:"reason"`
	// Due is false for an item Fill added ahead of its time.
	Due   bool `json:"due"`
	Probe bool `json:"probe,omitempty"`
	// ChangeInterval is the estimated time between changes if the page
	// changes at all; SinceFetch is the time since its last delivery.
	ChangeInterval Duration `json:"change_interval"`
	SinceFetch     Duration `json:"since_fetch"`
	// Static is the probability that the page never changes; Stale that
	// the stored copy is out of date now.
	Static float64 `json:"static"`
	Stale  float64 `json:"stale"`
	// Gain is the expected freshness a fetch now buys (recrawl.Advice).
	Gain float64 `json:"gain"`
}

// NextPlan is the advisor's answer for one source.
type NextPlan struct {
	Source string `json:"source"`
	// Budget is the fetches per day the plan spends; BudgetFrom says
	// where it came from: "request", or "last_day" (the source's pace).
	Budget     float64 `json:"budget_per_day"`
	BudgetFrom string  `json:"budget_from"`
	// Records counts the source's active records; FromPrior those whose
	// estimate is the source's prior alone (no counted re-delivery yet).
	Records   int `json:"records"`
	FromPrior int `json:"from_prior"`
	// Due counts the records due now, listed or not; Targets the round's
	// targets never fetched that lead the list.
	Due     int `json:"due"`
	Targets int `json:"targets"`
	// FreshNow is the estimated share of the source's records whose
	// stored copy is current; Optimal the share the budget keeps current
	// at best, once the schedule has settled.
	FreshNow float64    `json:"fresh_now"`
	Optimal  float64    `json:"optimal"`
	At       time.Time  `json:"at"`
	Items    []NextItem `json:"items"`
}

// BudgetPoint is one point of a source's freshness curve.
type BudgetPoint struct {
	Budget    float64 `json:"budget_per_day"`
	Freshness float64 `json:"freshness"`
}

// SourceFreshness is a source's freshness now and what other budgets
// would keep, for the dashboard.
type SourceFreshness struct {
	Source     string        `json:"source"`
	Records    int           `json:"records"`
	FromPrior  int           `json:"from_prior"`
	Budget     float64       `json:"budget_per_day"`
	BudgetFrom string        `json:"budget_from"`
	FreshNow   float64       `json:"fresh_now"`
	Optimal    float64       `json:"optimal"`
	Curve      []BudgetPoint `json:"curve"`
}

// curveFactors are the budgets of the freshness curve, as multiples of the
// source's budget: from a quarter of it to eight times, doubling included.
var curveFactors = []float64{0.125, 0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 8}

// priorTTL is how long a fitted prior is reused: a source's distribution
// of change rates drifts over days, and fitting it costs about as much as
// ranking the records.
const priorTTL = time.Hour

// Advisor answers what to crawl next from the counters ingest keeps
// (package recrawl does the estimating and ranking). It is safe for
// concurrent use.
type Advisor struct {
	Store RecrawlStore
	// Monitor answers NextQuery.Round; nil makes a query with a round
	// EINVALID.
	Monitor Monitor
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time

	mu     sync.Mutex
	priors map[string]fittedPrior
}

type fittedPrior struct {
	prior recrawl.Prior
	at    time.Time
	n     int
}

func (a *Advisor) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

// recrawlSource is a source's records and its resolved budget.
type recrawlSource struct {
	recs       []recrawl.Record
	budget     float64
	budgetFrom string
	prior      *recrawl.Prior
}

// With budget 0 the source's pace is its records delivered in the last 24
// hours; an idle source is EINVALID unless idle allows it (budget left 0).
func (a *Advisor) read(ctx context.Context, source string, budget float64, now time.Time, idle bool) (*recrawlSource, error) {
	if budget < 0 || math.IsNaN(budget) || math.IsInf(budget, 0) {
		return nil, Errorf(EINVALID, "invalid budget %v: give a positive number of fetches per day", budget)
	}
	recs, err := a.Store.RecrawlRecords(ctx, source)
	if err != nil {
		return nil, err
	}
	src := &recrawlSource{recs: recs, budget: budget, budgetFrom: "request"}
	dayAgo := now.Add(-24 * time.Hour)
	lastDay := 0
	for i := range recs {
		if !recs[i].Stats.LastFetch.Before(dayAgo) {
			lastDay++
		}
	}
	if budget == 0 && !(idle && lastDay == 0) {
		if lastDay == 0 {
			return nil, Errorf(EINVALID, "source %q had no deliveries in the last 24 hours to take its pace from: give a budget, like --budget 1000/day", source)
		}
		src.budget, src.budgetFrom = float64(lastDay), "last_day"
	}
	src.prior = a.prior(source, src.recs, now)
	return src, nil
}

// prior returns the source's fitted prior, refitted when it is older than
// priorTTL or the source grew or shrank by a tenth.
func (a *Advisor) prior(source string, recs []recrawl.Record, now time.Time) *recrawl.Prior {
	a.mu.Lock()
	p, ok := a.priors[source]
	a.mu.Unlock()
	n := len(recs)
	if ok && now.Sub(p.at) < priorTTL && now.Sub(p.at) >= 0 && math.Abs(float64(n-p.n)) <= 0.1*float64(p.n) {
		return &p.prior
	}
	p = fittedPrior{prior: recrawl.FitPriorRecords(recs), at: now, n: n}
	a.mu.Lock()
	if a.priors == nil {
		a.priors = map[string]fittedPrior{}
	}
	a.priors[source] = p
	a.mu.Unlock()
	return &p.prior
}

// Next ranks the source's records (and the round's targets never fetched)
// for fetching now.
func (a *Advisor) Next(ctx context.Context, q NextQuery) (*NextPlan, error) {
	if q.Limit == 0 {
		q.Limit = DefaultNextLimit
	}
	if q.Limit < 0 || q.Limit > MaxNextLimit {
		return nil, Errorf(EINVALID, "invalid limit %d: give 1 to %d", q.Limit, MaxNextLimit)
	}
	now := a.now()
	src, err := a.read(ctx, q.Source, q.Budget, now, false)
	if err != nil {
		return nil, err
	}
	var targets []string
	if q.Round != "" {
		if targets, err = a.neverFetched(ctx, q.Source, q.Round, q.Limit); err != nil {
			return nil, err
		}
	}
	plan, err := recrawl.Advise(recrawl.Request{
		Records: src.recs,
		Targets: targets,
		Budget:  src.budget,
		Now:     now,
		Limit:   q.Limit,
		Fill:    q.Fill,
		Prior:   src.prior,
	})
	if err != nil {
		return nil, Errorf(EINVALID, "%v", err)
	}
	out := &NextPlan{
		Source: q.Source, Budget: src.budget, BudgetFrom: src.budgetFrom,
		Records: len(src.recs), FromPrior: plan.FromPrior, Due: plan.Due, Targets: len(targets),
		FreshNow: plan.FreshNow, Optimal: plan.Optimal, At: now,
		Items: make([]NextItem, len(plan.Items)),
	}
	var ids []int64
	for i, it := range plan.Items {
		out.Items[i] = NextItem{
			Name: it.Name, Reason: string(it.Reason), Due: it.Due, Probe: it.Probe,
			ChangeInterval: Duration(it.ChangeInterval.Round(time.Second)),
			SinceFetch:     Duration(it.SinceFetch.Round(time.Second)),
			Static:         it.Static, Stale: it.Stale, Gain: it.Gain,
		}
		if it.Reason != recrawl.NeverFetched {
			out.Items[i].ID = it.ID
			ids = append(ids, it.ID)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	// Only the listed records' names are read.
	names, err := a.Store.RecrawlNames(ctx, q.Source, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]RecrawlName, len(names))
	for _, n := range names {
		byID[n.ID] = n
	}
	for i := range out.Items {
		it := &out.Items[i]
		if it.ID == 0 {
			continue
		}
		n, ok := byID[it.ID]
		if !ok {
			// Archived or re-keyed between the two reads: the next call
			// will not list it.
			continue
		}
		it.Name, it.URL = n.Name(), n.URL
	}
	items := out.Items[:0]
	for _, it := range out.Items {
		if it.ID == 0 || it.Name != "" {
			items = append(items, it)
		}
	}
	out.Items = items
	return out, nil
}

// neverFetched returns up to limit targets remaining in the round that no
// active record of recs names, in the round's order. A target whose record
// was archived counts as never fetched: queuing it in a round asks for it
// again.
func (a *Advisor) neverFetched(ctx context.Context, source, round string, limit int) ([]string, error) {
	if a.Monitor == nil {
		return nil, Errorf(EINVALID, "no crawl monitor is configured, so round %q has no targets to read: leave the round out", round)
	}
	names, err := a.Store.RecrawlNames(ctx, source, nil)
	if err != nil {
		return nil, err
	}
	known := make(map[string]struct{}, len(names))
	for _, n := range names {
		known[n.URL] = struct{}{}
		if n.Target != "" {
			known[n.Target] = struct{}{}
		}
	}
	var out []string
	after := ""
	for len(out) < limit {
		page, err := a.Monitor.Remaining(ctx, round, after, MaxRemainingLimit)
		if err != nil {
			return nil, err
		}
		for _, name := range page {
			if _, ok := known[name]; !ok {
				out = append(out, name)
				if len(out) == limit {
					break
				}
			}
		}
		if len(page) < MaxRemainingLimit {
			break
		}
		after = page[len(page)-1]
	}
	return out, nil
}

// Freshness reports a source's estimated freshness now and the freshness
// the optimal schedule keeps at budgets around its own. Budget 0 takes its
// pace over the last 24 hours; a source idle that long has BudgetFrom
// "idle", and its curve spans recrawling every record once in 60 days to
// once a day.
func (a *Advisor) Freshness(ctx context.Context, source string, budget float64) (*SourceFreshness, error) {
	now := a.now()
	src, err := a.read(ctx, source, budget, now, true)
	if err != nil {
		return nil, err
	}
	out := &SourceFreshness{Source: source, Records: len(src.recs), Budget: src.budget, BudgetFrom: src.budgetFrom}
	if len(src.recs) == 0 {
		return out, nil
	}
	budgets := make([]float64, len(curveFactors))
	for i, f := range curveFactors {
		budgets[i] = src.budget * f
	}
	ref := src.budget
	if ref == 0 {
		out.BudgetFrom = "idle"
		n := float64(len(src.recs))
		budgets = []float64{n / 60, n / 30, n / 14, n / 7, n / 3, n}
		ref = n / 30
	}
	plan, err := recrawl.Advise(recrawl.Request{Records: src.recs, Budget: ref, Now: now, Limit: 1, Prior: src.prior})
	if err != nil {
		return nil, Errorf(EINVALID, "%v", err)
	}
	out.FromPrior, out.FreshNow = plan.FromPrior, plan.FreshNow
	if src.budget > 0 {
		out.Optimal = plan.Optimal
	}
	for _, b := range budgets {
		out.Curve = append(out.Curve, BudgetPoint{Budget: b, Freshness: src.prior.Freshness(len(src.recs), b)})
	}
	return out, nil
}

// FreshnessAll reports each of sources at its own pace, sorted by name.
func (a *Advisor) FreshnessAll(ctx context.Context, sources []string) ([]SourceFreshness, error) {
	sources = append([]string(nil), sources...)
	sort.Strings(sources)
	out := make([]SourceFreshness, 0, len(sources))
	for _, s := range sources {
		f, err := a.Freshness(ctx, s, 0)
		if err != nil {
			return nil, fmt.Errorf("source %q: %w", s, err)
		}
		out = append(out, *f)
	}
	return out, nil
}
