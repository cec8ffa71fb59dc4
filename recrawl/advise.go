package recrawl

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
	"time"
)

// Reason says why a record is proposed.
type Reason string

// The reasons, in the order the advisor considers them.
const (
	// NeverFetched: a target with no record yet.
	NeverFetched Reason = "never_fetched"
	// EventNear: the record's event date falls between its last fetch
	// and the event window ahead, and its copy is older than the wait for
	// the event, so its page is likely to change (or has changed) around
	// it.
	EventNear Reason = "event_near"
	// SourcePrior: the record has no observed interval of its own (its
	// counters were not kept, or it was never refetched): its estimate is
	// its source's prior.
	SourcePrior Reason = "source_prior"
	// LikelyChanged: its own history says a fetch now is worth it (or,
	// for a probe, that it changed at every fetch so far).
	LikelyChanged Reason = "likely_changed"
)

// Record is one record the advisor ranks: the caller's handles, returned as
// they are, and its counters.
type Record struct {
	ID    int64
	Name  string
	Stats FetchStats
}

// DefaultEventWindow is how far ahead an event date makes a record due.
const DefaultEventWindow = 24 * time.Hour

// Request is what the advisor ranks.
type Request struct {
	// Records are the source's active records (archived ones are not
	// proposed: leave them out).
	Records []Record
	// Targets are names of pages never fetched (a round's targets with no
	// record), in the order they should be fetched. They come first.
	Targets []string
	// Budget is the crawl's budget in fetches per day. It sets the due
	// threshold: a record is due when a fetch now is worth as much as the
	// last fetch the optimal allocation of this budget affords.
	Budget float64
	// Now is the time of the decision.
	Now time.Time
	// Limit caps the answer. 0 means no cap.
	Limit int
	// Fill, when fewer than Limit targets and due records exist, fills
	// the answer with the most valuable records not yet due (Due false):
	// for a crawler with a fixed capacity that would otherwise sit idle.
	Fill bool
	// Prior is the source's prior; nil fits it to Records (FitPrior). A
	// caller ranking the same source often can fit it once in a while and
	// pass it in.
	Prior *Prior
	// EventWindow is how far ahead an event date makes a record due.
	// Defaults to DefaultEventWindow; negative turns events off.
	EventWindow time.Duration
}

// Advice is one page to fetch.
type Advice struct {
	ID     int64
	Name   string
	Reason Reason
	// Due is false for records added by Fill ahead of their time.
	Due bool
	// Probe marks a fetch made to learn the record's rate: every fetch so
	// far found a change (or there was only one), so its rate is known
	// only from below, and a fetch after a short interval tells whether it
	// changes too fast to be worth its fetches.
	Probe bool
	// ChangeInterval is the estimated time between changes if the record
	// changes at all, 1/Estimate.Rate (0 for never-fetched targets).
	ChangeInterval time.Duration
	// Static is the probability that the record never changes.
	Static float64
	// SinceFetch is the time since the last fetch (0 for targets).
	SinceFetch time.Duration
	// OptimalInterval is the interval the optimal allocation of the
	// budget gives the record (0 when it is not worth fetching
	// regularly: it changes too fast for the budget, or never).
	OptimalInterval time.Duration
	// Stale is the probability that the stored copy is out of date,
	// E[1 - e^{-λ·SinceFetch}] (1 for targets).
	Stale float64
	// Gain is the expected freshness gained by a fetch now, as the
	// Lagrangian index the optimal schedule equalises: E[Marginal(λ,
	// SinceFetch)] over the record's posterior, in days. Records are due
	// when it reaches the Plan's Threshold.
	Gain float64
}

// Plan is the advisor's answer.
type Plan struct {
	// Items are the pages to fetch now: targets first, then records whose
	// event date is near, then probes (youngest first), then first
	// refetches, then due records by Gain, highest first, then (with
	// Fill) records not yet due by Gain.
	Items []Advice
	// Due counts the records due now, listed or not (targets excluded).
	Due int
	// Threshold is the Lagrange multiplier μ of the optimal allocation
	// of the budget over the source's records, in days: the value a fetch
	// must reach to be worth its share of the budget (0 when nothing is
	// worth refetching).
	Threshold float64
	// Prior is the prior the posteriors were computed under.
	Prior Prior
	// FreshNow is the expected share of records whose stored copy is
	// current now (estimated from about 1,000 records, every n/1000-th).
	FreshNow float64
	// Optimal is the mean freshness the optimal allocation of the budget
	// would keep records distributed as the prior at.
	Optimal float64
	// FromPrior counts the records without an interval of their own.
	FromPrior int
}

// ErrBudget is returned for a budget that is not a positive number.
var ErrBudget = errors.New("recrawl: the budget must be a positive number of fetches per day")

// The learning design (see the package documentation); the simulator
// chose the values.
const (
	// A record whose every fetch so far found a change (or that was
	// fetched once) is probed while its posterior mass on rates too fast
	// to be worth fetching lies within (probeAmbiguity,
	// 1-probeAmbiguity).
	probeAmbiguity = 0.15
	// A probe is due once probeAfter·μ has passed since the last fetch,
	// and stays a probe until probeUntil·μ: after that the interval is
	// too long to tell a page too fast to keep fresh from a merely
	// frequent one, and the record is ranked as any other.
	probeAfter = 0.5
	probeUntil = 3.0
	// freshSample bounds the records FreshNow is estimated from.
	freshSample = 1000
	// maxValuePerAge bounds Marginal(λ, a)/a over all λ (its peak is
	// 0.298426, at λa ≈ 1.79): a record younger than μ/maxValuePerAge
	// cannot be due.
	maxValuePerAge = 0.29843
)

// Advise ranks a source's records and targets for fetching now.
//
// Each record's change rate is a posterior over a grid of rates: its
// source's prior (fitted to the source's records) times the likelihood of
// its counters. The budget B per day defines the freshness-optimal
// allocation over records distributed as the prior: the threshold μ at
// which Σ f_i = B. A record is due when the expected value of fetching it
// now, E[Marginal(λ, time since its last fetch)], has reached μ: the
// moment the optimal schedule would fetch a page of that rate. Due
// records are ranked by that value. Records whose rate is known only from
// below are probed (see Advice.Probe), and records with one fetch get a
// second one before merely due records. Targets come first, in their
// order. The cost is linear in the records (a posterior over 32 rates
// for each record old enough to be due) plus O(n log Limit) for the
// selection.
func Advise(req Request) (Plan, error) {
	if !(req.Budget > 0) || math.IsInf(req.Budget, 1) {
		return Plan{}, fmt.Errorf("%w (got %v)", ErrBudget, req.Budget)
	}
	if req.Limit < 0 {
		return Plan{}, fmt.Errorf("recrawl: the limit must be 0 (no limit) or positive (got %d)", req.Limit)
	}
	t := tables()
	var plan Plan
	if req.Prior != nil {
		if len(req.Prior.Weights) != gridSize {
			return Plan{}, fmt.Errorf("recrawl: the prior has %d weights, want %d: make it with FitPrior or DefaultPrior", len(req.Prior.Weights), gridSize)
		}
		plan.Prior = *req.Prior
	} else {
		plan.Prior = fitPrior(len(req.Records), func(i int) *FetchStats { return &req.Records[i].Stats })
	}
	window := req.EventWindow
	if window == 0 {
		window = DefaultEventWindow
	}
	n := len(req.Records)
	mu := plan.Prior.threshold(t, n, req.Budget/day)
	plan.Threshold = mu / day
	plan.Optimal = plan.Prior.freshnessAt(t, mu)
	// Grid rates from index fast on change too fast to be worth a fetch.
	fast := gridSize
	for g, l := range t.rate {
		if mu > 0 && l*mu >= 1 {
			fast = g
			break
		}
	}

	for _, name := range req.Targets {
		if req.Limit > 0 && len(plan.Items) >= req.Limit {
			break
		}
		plan.Items = append(plan.Items, Advice{Name: name, Reason: NeverFetched, Due: true, Stale: 1})
	}
	room := req.Limit - len(plan.Items)
	if req.Limit == 0 {
		room = n
	}

	sc := scanner{
		req: &req, t: t, prior: &plan.Prior, mu: mu, fast: fast, room: room,
		now: req.Now.UnixNano(), horizon: req.Now.Add(window), window: window,
		freshEvery: n/freshSample + 1,
	}
	// Large sources are scanned in parallel chunks, each keeping its own
	// best room candidates; the merge keeps the best of those.
	chunks := min(runtime.GOMAXPROCS(0), n/parallelChunk)
	parts := make([]scan, max(chunks, 1))
	if chunks <= 1 {
		parts[0] = sc.scan(0, n)
	} else {
		var wg sync.WaitGroup
		for k := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				parts[k] = sc.scan(k*n/chunks, (k+1)*n/chunks)
			}()
		}
		wg.Wait()
	}
	var picked []candidate
	var freshSum float64
	var freshN int
	for _, p := range parts {
		plan.Due += p.due
		plan.FromPrior += p.fromPrior
		freshSum += p.freshSum
		freshN += p.freshN
		picked = append(picked, p.best...)
	}
	if freshN > 0 {
		plan.FreshNow = freshSum / float64(freshN)
	}
	sort.Slice(picked, func(i, j int) bool { return picked[i].better(picked[j]) })
	if len(picked) > room {
		picked = picked[:max(room, 0)]
	}
	now := sc.now
	var w [gridSize]float64
	for _, c := range picked {
		r := &req.Records[c.i]
		age := max(float64(now-lastFetch(&r.Stats).UnixNano())/1e9, 0)
		static := plan.Prior.posterior(t, &r.Stats, &w)
		var stale float64
		for g, wg := range w {
			stale += wg * -math.Expm1(-t.rate[g]*age)
		}
		rate := typicalRate(t, &w)
		a := Advice{
			ID:         r.ID,
			Name:       r.Name,
			Due:        c.tier != tierNone,
			Probe:      c.tier == tierProbe,
			Static:     static,
			SinceFetch: secondsDuration(age),
			Stale:      stale,
			Gain:       t.expectedMarginal(&w, age) / day,
		}
		if rate > 0 {
			a.ChangeInterval = secondsDuration(1 / rate)
		}
		if iv := optimalInterval(t, &w, mu); iv > 0 {
			a.OptimalInterval = secondsDuration(iv)
		}
		switch {
		case c.tier == tierEvent:
			a.Reason = EventNear
		case !informative(&r.Stats):
			a.Reason = SourcePrior
		default:
			a.Reason = LikelyChanged
		}
		plan.Items = append(plan.Items, a)
	}
	return plan, nil
}

// parallelChunk is the fewest records worth a goroutine of their own.
const parallelChunk = 20000

// scanner ranks a range of a request's records.
type scanner struct {
	req        *Request
	t          *gridTables
	prior      *Prior
	mu         float64
	fast       int
	room       int
	now        int64
	horizon    time.Time
	window     time.Duration
	freshEvery int
}

// scan is a range's outcome: its best room candidates and its counts.
type scan struct {
	best      []candidate
	due       int
	fromPrior int
	freshSum  float64
	freshN    int
}

func (sc *scanner) scan(lo, hi int) scan {
	var out scan
	t, mu, req := sc.t, sc.mu, sc.req
	var w [gridSize]float64
	h := make(candidates, 0, min(max(sc.room, 0), hi-lo))
	for i := lo; i < hi; i++ {
		s := &req.Records[i].Stats
		if !informative(s) {
			out.fromPrior++
		}
		last := lastFetch(s)
		age := max(float64(sc.now-last.UnixNano())/1e9, 0)
		sampled := i%sc.freshEvery == 0
		// Without ChangedLogSeconds a probe's short interval is
		// averaged away among the long ones and never settles anything:
		// such records are not probed.
		learning := mu > 0 && s.Known && s.Changes == s.Refetches && (s.Changes == 0 || s.ChangedLogSeconds != 0)
		probeAge := learning && age >= probeAfter*mu && age <= probeUntil*mu
		explore := mu > 0 && s.Known && s.Refetches == 0 && age > probeUntil*mu
		// An event ahead makes a record due once its copy is older than
		// the wait for the event (half way from the last fetch), so a
		// page just fetched is not fetched again because of tomorrow's
		// deadline; an event passed since the last fetch makes it due.
		event := sc.window > 0 && s.EventAt != nil && s.EventAt.After(last) && !s.EventAt.After(sc.horizon) &&
			float64(s.EventAt.UnixNano()-sc.now)/1e9 <= age
		// Most records are too young to be due; only probes, first
		// refetches, events, Fill and the FreshNow sample need their
		// posterior then.
		if maxValuePerAge*age < mu && !req.Fill && !sampled && !probeAge && !explore && !event {
			continue
		}
		e := sc.prior.evaluate(t, s, age, sc.fast)
		if sampled {
			f := sc.prior.posterior(t, s, &w)
			for g, wg := range w {
				if wg > 0 {
					f += wg * math.Exp(-t.rate[g]*age)
				}
			}
			out.freshSum += f
			out.freshN++
		}
		c := candidate{i: i, key: e.value}
		switch {
		case event:
			c.tier = tierEvent
		case probeAge && e.fast > probeAmbiguity && e.fast < 1-probeAmbiguity:
			// Youngest first: the shorter the interval, the more a probe
			// tells.
			c.tier, c.key = tierProbe, -age
		case explore:
			// A first refetch: the record has no interval of its own,
			// and it missed its probe window.
			c.tier = tierExplore
		case mu > 0 && e.value >= mu:
			c.tier = tierDue
		}
		if c.tier != tierNone {
			out.due++
		} else if !req.Fill || e.value <= 0 {
			continue
		}
		if sc.room <= 0 {
			continue
		}
		if len(h) < sc.room {
			heap.Push(&h, c)
		} else if c.better(h[0]) {
			h[0] = c
			heap.Fix(&h, 0)
		}
	}
	out.best = h
	return out
}

// optimalInterval is the τ at which E[Marginal(λ, τ)] = μ under the
// posterior w: the interval the optimal schedule would fetch the record
// at; 0 when it never reaches μ (the record changes too fast to be worth
// fetching, or never changes).
func optimalInterval(t *gridTables, w *[gridSize]float64, mu float64) float64 {
	if mu <= 0 {
		return 0
	}
	var limit float64 // E[1/λ], the value as τ grows without bound
	for g, wg := range w {
		limit += wg * t.invRate[g]
	}
	lo, hi := math.Log(mu), maxLogSeconds
	if limit <= mu || t.expectedMarginal(w, math.Exp(hi)) < mu {
		return 0
	}
	// 32 halvings of a range under 25 leave it within 1e-8.
	for i := 0; i < 32; i++ {
		mid := 0.5 * (lo + hi)
		if t.expectedMarginal(w, math.Exp(mid)) >= mu {
			hi = mid
		} else {
			lo = mid
		}
	}
	return math.Exp(hi)
}

func lastFetch(s *FetchStats) time.Time {
	if s.LastFetch.IsZero() {
		return s.FirstFetch
	}
	return s.LastFetch
}

// The tiers of the ranking, best last: due records, first refetches,
// probes, event dates.
const (
	tierNone = iota
	tierDue
	tierExplore
	tierProbe
	tierEvent
)

type candidate struct {
	i    int
	tier int
	key  float64
}

// better orders candidates: by tier, then by key (the value of a fetch
// now; for probes, the youngest first), then by position so that ties
// rank stably.
func (c candidate) better(o candidate) bool {
	if c.tier != o.tier {
		return c.tier > o.tier
	}
	if c.key != o.key {
		return c.key > o.key
	}
	return c.i < o.i
}

// candidates is a min-heap: the worst kept candidate on top.
type candidates []candidate

func (h candidates) Len() int           { return len(h) }
func (h candidates) Less(i, j int) bool { return h[j].better(h[i]) }
func (h candidates) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candidates) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *candidates) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
