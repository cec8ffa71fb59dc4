package recrawl

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// The policies the simulator knows.
const (
	PolicyUniform = "uniform"
	PolicyNutch   = "nutch"
	PolicyAdvisor = "advisor"
	PolicyOracle  = "oracle"
	// PolicyIndex is the advisor's ranking given the true rates instead
	// of its estimates: what separates its estimation error from its
	// scheduling.
	PolicyIndex = "index"
	// PolicyKnownAfter, followed by a count K ("known-after-3"), is the
	// advisor told each page's true rate once it has fetched it K times:
	// a bound on what learning faster could buy.
	PolicyKnownAfter = "known-after-"
)

// SimConfig sets up a simulation.
type SimConfig struct {
	// Pages is the number of pages. Defaults to 10,000.
	Pages int
	// Rates is the distribution of their change rates. Defaults to the
	// "default" preset.
	Rates *Rates
	// Days is the simulated time. Defaults to 60.
	Days int
	// MeasureFrom is the day from which freshness is averaged for the
	// headline figures (days MeasureFrom+1 to Days). Defaults to 30.
	MeasureFrom int
	// Tick is the scheduling step: each policy is asked once per tick
	// for the pages to fetch, and the day's budget is spread over the
	// ticks. Defaults to one hour.
	Tick time.Duration
	// Budget is the number of fetches per day. Defaults to Pages/10.
	Budget float64
	// TargetAt is when a new page (a target with no record) is added.
	// Defaults to 30 days and 17 minutes: mid-run, and between two ticks
	// so that the wait for the next tick counts.
	TargetAt time.Duration
	// Seed drives the rates and the change times. Every policy sees the
	// same pages changing at the same times.
	Seed uint64
	// Policies to run, by name. Defaults to all four.
	Policies []string
	// NewStore returns the store a policy's fetches are delivered to.
	// Defaults to a new MemStore per policy.
	NewStore func(policy string) (Store, error)
	// Start is the simulated clock's origin. Defaults to 2026-01-01 UTC.
	Start time.Time
	// Nutch configures the Nutch policy. Defaults to nutch-default.xml.
	Nutch *NutchConfig
	// AdvisorStrict makes the advisor policy fetch only due records
	// (Request.Fill off). By default it fills each tick's budget, as the
	// other policies spend theirs (except Nutch's, whose generator selects
	// only pages whose time has come).
	AdvisorStrict bool
}

func (c *SimConfig) defaults() error {
	if c.Pages == 0 {
		c.Pages = 10000
	}
	if c.Pages < 1 {
		return fmt.Errorf("recrawl sim: pages must be positive (got %d)", c.Pages)
	}
	if c.Rates == nil {
		r, err := ParseRates("default")
		if err != nil {
			return err
		}
		c.Rates = &r
	}
	if c.Days == 0 {
		c.Days = 60
	}
	if c.MeasureFrom == 0 {
		c.MeasureFrom = 30
	}
	if c.MeasureFrom >= c.Days || c.MeasureFrom < 0 {
		return fmt.Errorf("recrawl sim: measuring from day %d leaves nothing of %d days", c.MeasureFrom, c.Days)
	}
	if c.Tick == 0 {
		c.Tick = time.Hour
	}
	if c.Tick <= 0 {
		return fmt.Errorf("recrawl sim: the tick must be positive (got %v)", c.Tick)
	}
	if c.Budget == 0 {
		c.Budget = float64(c.Pages) / 10
	}
	if !(c.Budget > 0) {
		return fmt.Errorf("recrawl sim: the budget must be positive (got %v)", c.Budget)
	}
	if c.TargetAt == 0 {
		c.TargetAt = 30*24*time.Hour + 17*time.Minute
	}
	if len(c.Policies) == 0 {
		c.Policies = []string{PolicyUniform, PolicyNutch, PolicyAdvisor, PolicyOracle}
	}
	for _, p := range c.Policies {
		switch p {
		case PolicyUniform, PolicyNutch, PolicyAdvisor, PolicyOracle, PolicyIndex:
		default:
			if _, ok := knownAfter(p); !ok {
				return fmt.Errorf("recrawl sim: unknown policy %q: use %s, %s, %s, %s, %s or %sK (K ≥ 1)", p, PolicyUniform, PolicyNutch, PolicyAdvisor, PolicyOracle, PolicyIndex, PolicyKnownAfter)
			}
		}
	}
	if c.NewStore == nil {
		c.NewStore = func(string) (Store, error) { return NewMemStore(), nil }
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.Nutch == nil {
		n := DefaultNutchConfig()
		c.Nutch = &n
	}
	return nil
}

// PolicyResult is one policy's run.
type PolicyResult struct {
	Policy string
	// Freshness is the time-averaged share of fresh pages over days
	// MeasureFrom+1 to Days.
	Freshness float64
	// Daily is the time-averaged freshness of each day.
	Daily []float64
	// Fetches counts the fetches made.
	Fetches int
	// NewHours is the time from the new target's appearance to its first
	// fetch, in hours; -1 if it was never fetched.
	NewHours float64
	// PageFetches and PageFreshness are, for each page (the new target
	// last), the fetches made and the share of time it was fresh over the
	// measured days: where each policy spent its budget, and what it
	// bought.
	PageFetches   []int
	PageFreshness []float64
}

// SimReport is a simulation's outcome.
type SimReport struct {
	Config SimConfig
	// Rates are the pages' true change rates per second (the new target
	// last), for reports: no policy but the oracle sees them.
	Rates   []float64
	Results []PolicyResult
}

// Result returns the named policy's result.
func (r SimReport) Result(policy string) (PolicyResult, bool) {
	for _, p := range r.Results {
		if p.Policy == policy {
			return p, true
		}
	}
	return PolicyResult{}, false
}

// Row is one figure of the report, as the bench prints it.
type Row struct {
	Name  string
	Value float64
	Unit  string
}

// Rows are the bench's figures: recrawl_freshness (the advisor's
// freshness over the measured days against the oracle's),
// recrawl_vs_nutch and recrawl_vs_uniform (against those policies) and
// recrawl_new_hours (hours until the advisor fetched the new target). A
// row whose policies did not run is left out.
func (r SimReport) Rows() []Row {
	var rows []Row
	adv, ok := r.Result(PolicyAdvisor)
	if !ok {
		return nil
	}
	for _, c := range []struct{ row, policy string }{
		{"recrawl_freshness", PolicyOracle},
		{"recrawl_vs_nutch", PolicyNutch},
		{"recrawl_vs_uniform", PolicyUniform},
	} {
		if p, ok := r.Result(c.policy); ok && p.Freshness > 0 {
			rows = append(rows, Row{c.row, adv.Freshness / p.Freshness, "ratio"})
		}
	}
	rows = append(rows, Row{"recrawl_new_hours", adv.NewHours, "hours"})
	return rows
}

// page is one simulated page: its change process and what the running
// policy last fetched of it.
type page struct {
	rate       float64
	rng        uint64  // splitmix64 state of its change times
	nextChange float64 // seconds since the start
	lastChange float64 // the last change at or before the last advance; -1 if none
	version    int64

	fetched    bool
	seen       int64 // version at the last fetch
	lastFetch  float64
	freshUntil float64
}

// splitmix64 is the per-page random stream: each page's change times come
// from its own seed, so they are the same under every policy whatever
// order the pages are fetched in.
func splitmix64(s *uint64) uint64 {
	*s += 0x9e3779b97f4a7c15
	z := *s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (p *page) exp() float64 {
	u := float64(splitmix64(&p.rng)>>11) / (1 << 53)
	return -math.Log1p(-u) / p.rate
}

// advance plays the page's changes up to t.
func (p *page) advance(t float64) {
	for p.nextChange <= t {
		p.version++
		p.lastChange = p.nextChange
		p.nextChange += p.exp()
	}
}

// world is the simulated pages, the same for every policy.
type world struct {
	cfg   SimConfig
	rates []float64 // pages, then the target
	names []string
	seeds []uint64
}

// sim is one policy's run over the world.
type sim struct {
	w      *world
	pages  []page
	exists int // pages that exist now (the target appears mid-run)
	fresh  []float64

	pageFresh []float64 // each page's fresh seconds in the measured days
}

func (w *world) newSim() *sim {
	s := &sim{w: w, pages: make([]page, len(w.rates)), exists: w.cfg.Pages}
	for i := range s.pages {
		p := &s.pages[i]
		p.rate, p.rng, p.lastChange = w.rates[i], w.seeds[i], -1
		p.nextChange = math.Inf(1)
		if p.rate > 0 {
			p.nextChange = p.exp()
		}
	}
	s.fresh = make([]float64, w.cfg.Days)
	s.pageFresh = make([]float64, len(w.rates))
	return s
}

// addFresh counts the fresh time [from, to) of a measured page in the
// daily buckets.
func (s *sim) addFresh(i int, from, to float64) {
	m := float64(s.w.cfg.MeasureFrom) * day
	if lo, hi := math.Max(from, m), math.Min(to, float64(s.w.cfg.Days)*day); hi > lo {
		s.pageFresh[i] += hi - lo
	}
	for from < to {
		d := int(from / day)
		if d >= len(s.fresh) {
			return
		}
		end := math.Min(to, float64(d+1)*day)
		s.fresh[d] += end - from
		from = end
	}
}

// fetch records a fetch of page i at t and returns whether its content
// changed since the policy's previous fetch.
func (s *sim) fetch(i int, t float64) (changed bool) {
	p := &s.pages[i]
	p.advance(t)
	measured := i < s.w.cfg.Pages
	if p.fetched {
		changed = p.version != p.seen
		if measured {
			s.addFresh(i, p.lastFetch, math.Min(p.freshUntil, t))
		}
	}
	p.fetched, p.seen, p.lastFetch, p.freshUntil = true, p.version, t, p.nextChange
	return changed
}

func (s *sim) finish(end float64) {
	for i := 0; i < s.w.cfg.Pages; i++ {
		p := &s.pages[i]
		if p.fetched {
			s.addFresh(i, p.lastFetch, math.Min(p.freshUntil, end))
		}
	}
}

// simPolicy is a scheduling policy under simulation.
type simPolicy interface {
	// start is called once before the first tick.
	start(s *sim)
	// next returns up to k distinct pages (indices below exists) to
	// fetch at t.
	next(ctx context.Context, s *sim, t float64, k int) ([]int, error)
	// fetched reports a fetch of page i at t.
	fetched(s *sim, i int, t float64, changed bool)
	// added reports a new page (never fetched).
	added(s *sim, i int, t float64)
}

// Simulate runs every configured policy over the same pages and returns
// their freshness. Freshness is exact: each page's change times are known,
// so the time its copy was current is integrated from the fetch and change
// times, not sampled.
func Simulate(ctx context.Context, cfg SimConfig) (SimReport, error) {
	if err := cfg.defaults(); err != nil {
		return SimReport{}, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	w := &world{cfg: cfg}
	w.rates = cfg.Rates.Sample(cfg.Pages+1, rng)
	w.names = make([]string, cfg.Pages+1)
	w.seeds = make([]uint64, cfg.Pages+1)
	for i := range w.names {
		w.names[i] = "https://sim.example/p/" + strconv.Itoa(i)
		w.seeds[i] = rng.Uint64()
	}
	rep := SimReport{Config: cfg, Rates: w.rates}
	for _, name := range cfg.Policies {
		res, err := w.run(ctx, name)
		if err != nil {
			return rep, fmt.Errorf("recrawl sim: %s: %w", name, err)
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

func (w *world) run(ctx context.Context, name string) (PolicyResult, error) {
	cfg := w.cfg
	store, err := cfg.NewStore(name)
	if err != nil {
		return PolicyResult{}, err
	}
	s := w.newSim()
	var pol simPolicy
	switch name {
	case PolicyUniform:
		pol = &uniformPolicy{}
	case PolicyNutch:
		pol = newNutchPolicy(*cfg.Nutch, len(w.rates))
	case PolicyAdvisor:
		pol = newAdvisorPolicy(store, w, !cfg.AdvisorStrict)
	case PolicyOracle:
		pol = newOraclePolicy(w)
	case PolicyIndex:
		pol = &indexPolicy{}
	default:
		k, _ := knownAfter(name)
		pol = &knownAfterPolicy{adv: newAdvisorPolicy(store, w, !cfg.AdvisorStrict), k: k}
	}
	pol.start(s)
	res := PolicyResult{Policy: name, NewHours: -1, PageFetches: make([]int, len(w.rates))}
	end := float64(cfg.Days) * day
	tick := cfg.Tick.Seconds()
	targetAt := cfg.TargetAt.Seconds()
	target := cfg.Pages
	added := false
	perTick := cfg.Budget * tick / day
	allowance := 0.0
	seen := make([]int, len(w.rates)) // tick+1 of the last fetch: no page twice in a tick
	for n := 0; ; n++ {
		t := float64(n) * tick
		if t >= end {
			break
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if !added && t >= targetAt {
			added = true
			s.exists = len(w.rates)
			pol.added(s, target, targetAt)
		}
		allowance += perTick
		k := int(allowance)
		allowance -= float64(k)
		if k == 0 {
			continue
		}
		list, err := pol.next(ctx, s, t, k)
		if err != nil {
			return res, err
		}
		if len(list) > k {
			return res, fmt.Errorf("asked for %d pages, returned %d", k, len(list))
		}
		at := cfg.Start.Add(secondsDuration(t))
		for _, i := range list {
			if i < 0 || i >= s.exists || seen[i] == n+1 {
				return res, fmt.Errorf("returned page %d twice or out of range at tick %d", i, n)
			}
			seen[i] = n + 1
			changed := s.fetch(i, t)
			content := w.names[i] + " v" + strconv.FormatInt(s.pages[i].version, 10)
			if err := store.Deliver(ctx, w.names[i], content, at); err != nil {
				return res, err
			}
			pol.fetched(s, i, t, changed)
			res.Fetches++
			if t >= float64(cfg.MeasureFrom)*day {
				res.PageFetches[i]++
			}
			if i == target && res.NewHours < 0 {
				res.NewHours = (t - targetAt) / 3600
			}
		}
	}
	s.finish(end)
	res.PageFreshness = make([]float64, len(s.pageFresh))
	for i, f := range s.pageFresh {
		res.PageFreshness[i] = f / (day * float64(cfg.Days-cfg.MeasureFrom))
	}
	res.Daily = make([]float64, cfg.Days)
	var sum float64
	for d, f := range s.fresh {
		res.Daily[d] = f / (day * float64(cfg.Pages))
		if d >= cfg.MeasureFrom {
			sum += f
		}
	}
	res.Freshness = sum / (day * float64(cfg.Pages) * float64(cfg.Days-cfg.MeasureFrom))
	return res, nil
}

// uniformPolicy fetches the pages round-robin in a fixed order; a new page
// joins the end of the cycle.
type uniformPolicy struct{ cursor int }

func (u *uniformPolicy) next(_ context.Context, s *sim, _ float64, k int) ([]int, error) {
	if k > s.exists {
		k = s.exists
	}
	list := make([]int, k)
	for j := range list {
		if u.cursor >= s.exists {
			u.cursor = 0
		}
		list[j] = u.cursor
		u.cursor++
	}
	return list, nil
}

func (u *uniformPolicy) start(*sim)                       {}
func (u *uniformPolicy) fetched(*sim, int, float64, bool) {}
func (u *uniformPolicy) added(*sim, int, float64)         {}

// advisorPolicy asks Advise each tick, with what the store kept: the
// records it returns and the targets it has no record of.
type advisorPolicy struct {
	store  Store
	w      *world
	index  map[string]int
	fill   bool
	budget float64
	origin time.Time
	prior  *Prior
	fitted float64
}

func newAdvisorPolicy(store Store, w *world, fill bool) *advisorPolicy {
	a := &advisorPolicy{store: store, w: w, fill: fill, budget: w.cfg.Budget, origin: w.cfg.Start, index: make(map[string]int, len(w.names))}
	for i, n := range w.names {
		a.index[n] = i
	}
	return a
}

func (a *advisorPolicy) next(ctx context.Context, s *sim, t float64, k int) ([]int, error) {
	recs, err := a.store.Stats(ctx)
	if err != nil {
		return nil, err
	}
	have := make([]bool, s.exists)
	for _, r := range recs {
		i, ok := a.index[r.Name]
		if !ok {
			return nil, fmt.Errorf("the store returned a page the simulation never delivered: %q", r.Name)
		}
		if i < len(have) {
			have[i] = true
		}
	}
	var targets []string
	for i := 0; i < s.exists && len(targets) < k; i++ {
		if !have[i] {
			targets = append(targets, a.w.names[i])
		}
	}
	a.refit(recs, t)
	plan, err := Advise(Request{
		Prior:   a.prior,
		Records: recs,
		Targets: targets,
		Budget:  a.budget,
		Now:     a.origin.Add(secondsDuration(t)),
		Limit:   k,
		Fill:    a.fill,
	})
	if err != nil {
		return nil, err
	}
	list := make([]int, len(plan.Items))
	for j, it := range plan.Items {
		list[j] = a.index[it.Name]
	}
	return list, nil
}

// refit fits the prior to recs at t if a day has passed since the last
// fit: a caller ranking a source every hour refits its prior now and
// then, not on every call.
func (a *advisorPolicy) refit(recs []Record, t float64) {
	if a.prior == nil || t-a.fitted >= day {
		p := FitPriorRecords(recs)
		a.prior, a.fitted = &p, t
	}
}

func (a *advisorPolicy) start(*sim)                       {}
func (a *advisorPolicy) fetched(*sim, int, float64, bool) {}
func (a *advisorPolicy) added(*sim, int, float64)         {}
