package recrawl

import (
	"math"
	"math/rand/v2"
	"sync"
)

// The rate grid the posteriors live on: gridSize change rates, evenly
// spaced in log scale from one change in three years to one every two
// minutes (a factor of 1.55 between neighbours), plus an atom at 0 for
// records that never change. The simulator found no difference between
// 32 and 44 rates, and a loss at 24.
const (
	gridSize    = 32
	gridSlowest = 3 * 365 * day // seconds between changes
	gridFastest = 120.0
	// The tables hold tableSub steps per grid step and cover z = ln(λt)
	// for every grid rate and every interval or age from 1 second to
	// 10^10 seconds (inputs are clamped there).
	tableSub      = 8
	tableLo       = -20.0
	tableHi       = 20.0
	minLogSeconds = 0.0
	maxLogSeconds = 23.0
	// Posterior weights below e^-pruneBelow of the largest are 0.
	pruneBelow = 25.0
	// The prior is fitted from at most fitSample records, in at most
	// fitIterations EM steps, each followed by smoothPasses passes of a
	// (1/3, 1/3, 1/3) smoothing; fitFloor of its mass stays spread evenly.
	fitSample     = 2000
	fitIterations = 60
	smoothPasses  = 4
	fitFloor      = 1e-3
	// fitPseudo is how many records' worth of weight DefaultPrior keeps
	// in a fit (a Dirichlet prior on the mixing weights, centred on it):
	// a source with three refetched records is mostly DefaultPrior, not
	// whatever those three happened to show; one with thousands is its
	// own.
	fitPseudo = 10
	// defaultStatic is the default prior's mass on never changing.
	defaultStatic = 0.1
)

// gridTables holds the grid and the tables the posteriors are computed
// with: φ(z) = ln(1-e^{-e^z}) (the log-likelihood of a change in an
// interval t at rate λ, z = ln λt) and γ(z) = gx(e^z) (Marginal's shape),
// tabulated at tableSub steps per grid step, so that one fractional
// offset serves every grid rate of a record.
type gridTables struct {
	rate    [gridSize]float64
	invRate [gridSize]float64
	logRate [gridSize]float64
	h       float64 // table step in z
	// phi and gamma hold, for each table step k, the value at k and the
	// difference to k+1, side by side: an interpolation reads two
	// neighbouring numbers.
	phi   []float64
	gamma []float64
}

// tables are built on first use, not in init: most commands never rank.
var tables = sync.OnceValue(func() *gridTables {
	t := &gridTables{}
	lo, hi := math.Log(1/gridSlowest), math.Log(1/gridFastest)
	step := (hi - lo) / (gridSize - 1)
	for g := range t.rate {
		t.logRate[g] = lo + float64(g)*step
		t.rate[g] = math.Exp(t.logRate[g])
		t.invRate[g] = 1 / t.rate[g]
	}
	t.h = step / tableSub
	n := int(math.Ceil((tableHi-tableLo)/t.h)) + 2
	phi := make([]float64, n+1)
	gamma := make([]float64, n+1)
	for k := range phi {
		x := math.Exp(tableLo + float64(k)*t.h)
		phi[k] = math.Log(-math.Expm1(-x))
		gamma[k] = gx(x)
	}
	t.phi = make([]float64, 2*n)
	t.gamma = make([]float64, 2*n)
	for k := 0; k < n; k++ {
		t.phi[2*k], t.phi[2*k+1] = phi[k], phi[k+1]-phi[k]
		t.gamma[2*k], t.gamma[2*k+1] = gamma[k], gamma[k+1]-gamma[k]
	}
	return t
})

// lookup returns the table position of z = ln(seconds) + ln λ_0, the
// seconds clamped to [1, 10^10]: the index and the fraction for linear
// interpolation. Grid rate g sits tableSub·g steps further, always inside
// the tables.
func (t *gridTables) lookup(logSeconds float64) (int, float64) {
	logSeconds = min(max(logSeconds, minLogSeconds), maxLogSeconds)
	pos := (logSeconds + t.logRate[0] - tableLo) / t.h
	k := int(pos) // pos > 0: truncation is the floor, without a call
	return k, pos - float64(k)
}

// Prior is a source's distribution of change rates: the share of its
// records that change at each rate of a fixed logarithmic grid, and the
// share that never change. Each record's posterior is this prior times
// the likelihood of its own counters, so a record with little history
// looks like its source and one with a long history like itself.
type Prior struct {
	// Weights is the mass on each rate of GridRates (changes per
	// second); Static is the mass on records that never change. They sum
	// to 1.
	Weights []float64
	Static  float64
	// Records is how many records with at least one refetch the prior was
	// fitted from (at most 2,000, sampled at random with a fixed seed).
	Records int
	// Default is true when no record had a refetch: the prior is then
	// DefaultPrior.
	Default bool
}

// GridRates returns the rates (changes per second) the Prior's Weights
// refer to, slowest first.
func GridRates() []float64 {
	t := tables()
	return append([]float64(nil), t.rate[:]...)
}

// DefaultPrior is the prior of a source none of whose records has been
// refetched: every grid rate equally likely (log-uniform between one
// change in three years and one every two minutes) and a tenth of the
// records static. Under it every record has the same posterior, and the
// ranking is by time since the last fetch.
func DefaultPrior() Prior {
	w := make([]float64, gridSize)
	for g := range w {
		w[g] = (1 - defaultStatic) / gridSize
	}
	return Prior{Weights: w, Static: defaultStatic, Default: true}
}

// FitPrior fits a source's prior to its records' counters: the
// nonparametric maximum-likelihood mixing distribution on the grid
// (Kiefer and Wolfowitz; Laird's EM algorithm), smoothed after each EM
// step (the EMS algorithm of Silverman, Jones, Wilson and Nychka, 1990),
// the empirical-Bayes choice that lets a source's records tell how their
// rates are spread (a share that never changes, two humps, mostly fast)
// instead of assuming a shape. The smoothing matters: the raw NPMLE is a
// few spikes with holes between them, and a hole next to the budget's
// cutoff rate made the simulated advisor misjudge the pages there.
// Records without a refetch carry no information and are left out; at
// most 2,000 records, sampled at random with a fixed seed, are used. A
// small share of the mass (0.1%) stays spread over the whole grid, so
// that no rate is ruled out by the prior alone, and DefaultPrior weighs
// as much as ten records (a maximum a posteriori fit under a Dirichlet
// prior centred on it), so that a source with few refetched records
// leans on it.
func FitPrior(stats []FetchStats) Prior {
	return fitPrior(len(stats), func(i int) *FetchStats { return &stats[i] })
}

// FitPriorRecords is FitPrior over the counters of records, without
// copying them out.
func FitPriorRecords(recs []Record) Prior {
	return fitPrior(len(recs), func(i int) *FetchStats { return &recs[i].Stats })
}

func fitPrior(count int, stats func(int) *FetchStats) Prior {
	var use []int
	for i := 0; i < count; i++ {
		if informative(stats(i)) {
			use = append(use, i)
		}
	}
	if len(use) == 0 {
		return DefaultPrior()
	}
	if len(use) > fitSample {
		// A fixed-seed shuffle, not a stride, so that a periodic order
		// of the records (a round-robin crawl) cannot alias with it.
		rng := rand.New(rand.NewPCG(1, 2))
		for j := 0; j < fitSample; j++ {
			k := j + rng.IntN(len(use)-j)
			use[j], use[k] = use[k], use[j]
		}
		use = use[:fitSample]
	}
	t := tables()
	n := len(use)
	const cols = gridSize + 1 // the grid, then the static atom
	// lik holds each record's likelihoods scaled by their maximum.
	lik := make([]float64, n*cols)
	var ll [gridSize]float64
	for j, i := range use {
		static := t.loglik(stats(i), ll[:])
		row := lik[j*cols : (j+1)*cols]
		mx := math.Inf(-1)
		if static {
			mx = 0 // the static atom's log-likelihood
		}
		for _, v := range ll {
			mx = math.Max(mx, v)
		}
		for g, v := range ll {
			row[g] = math.Exp(v - mx)
		}
		if static {
			row[gridSize] = math.Exp(-mx)
		}
	}
	p := DefaultPrior()
	pi := make([]float64, cols)
	copy(pi, p.Weights)
	pi[gridSize] = p.Static
	def := append([]float64(nil), pi...)
	acc := make([]float64, cols)
	var scratch [gridSize]float64
	for it := 0; it < fitIterations; it++ {
		clear(acc)
		for j := 0; j < n; j++ {
			row := lik[j*cols : (j+1)*cols]
			var den float64
			for g, l := range row {
				den += pi[g] * l
			}
			if den <= 0 {
				continue
			}
			inv := 1 / den
			for g, l := range row {
				acc[g] += pi[g] * l * inv
			}
		}
		for g := range acc {
			acc[g] = (acc[g] + fitPseudo*def[g]) / (float64(n) + fitPseudo)
		}
		for k := 0; k < smoothPasses; k++ {
			smooth(acc[:gridSize], scratch[:])
		}
		change := 0.0
		for g := range pi {
			v := (1-fitFloor)*acc[g] + fitFloor/cols
			change = math.Max(change, math.Abs(v-pi[g]))
			pi[g] = v
		}
		if change < 1e-5 {
			break
		}
	}
	return Prior{Weights: pi[:gridSize], Static: pi[gridSize], Records: n}
}

// smooth replaces each mass by the mean of itself and its two neighbours,
// the ends reflecting, which keeps the total.
func smooth(m, scratch []float64) {
	copy(scratch, m)
	last := len(m) - 1
	for g := range m {
		m[g] = (scratch[max(g-1, 0)] + scratch[g] + scratch[min(g+1, last)]) / 3
	}
}

// informative reports whether s has an observed interval.
func informative(s *FetchStats) bool {
	return s.Known && s.Refetches > 0 && s.ChangedSeconds+s.UnchangedSeconds > 0
}

// loglik fills ll with the log-likelihood of each grid rate given the
// counters of s (0 everywhere when s carries no information) and reports
// whether the static atom is possible (no change was ever seen).
//
// The exact log-likelihood is Σ_changed ln(1-e^{-λ t_i}) - λ Σ_unchanged
// u_j. The counters keep the unchanged intervals' sum, which is all that
// term needs, but of the changed ones only their count X, the sum of
// their lengths and the sum of their logarithms (ChangedLogSeconds). The
// changed intervals are therefore replaced by the two points e^{m±d},
// half the changes each, that have the same arithmetic and geometric mean
// (m is their mean logarithm and cosh d = mean / geometric mean): exact
// when the intervals take two values equally often, as a record's do when
// it is refetched at long intervals and probed at short ones. Two points
// carry what one mean loses: a short interval that ended in a change (a
// probe) is strong evidence of a fast page, which averaging it with long
// ones would hide. When ChangedLogSeconds is not kept (0), the changed
// intervals are taken at their mean.
func (t *gridTables) loglik(s *FetchStats, ll []float64) (static bool) {
	if !informative(s) {
		clear(ll)
		return true
	}
	x := float64(s.Changes)
	u := s.UnchangedSeconds
	for g := range ll {
		ll[g] = -t.rate[g] * u
	}
	if x <= 0 {
		return true
	}
	mean := math.Max(s.ChangedSeconds/x, 1)
	lm := fastLog(mean)
	la, lb := lm, lm
	if s.ChangedLogSeconds != 0 {
		// Two points e^{m±d}, half the changes each, have the geometric
		// mean e^m and the arithmetic mean e^m·cosh(d).
		m := s.ChangedLogSeconds / x
		// d = acosh(e^q) = q + ln(1 + √(1 - e^{-2q})), q = ln(mean/gm) ≥ 0.
		q := max(lm-m, 0)
		d := q + fastLog(1+math.Sqrt(1-expNeg(max(-2*q, -pruneBelow))))
		la, lb = m-d, m+d
	}
	ka, fa := t.lookup(la)
	pa := t.phi[2*ka : 2*(ka+tableSub*(gridSize-1))+2]
	if la == lb {
		for g := range ll {
			j := 2 * tableSub * g
			ll[g] += x * (pa[j] + fa*pa[j+1])
		}
		return false
	}
	kb, fb := t.lookup(lb)
	pb := t.phi[2*kb : 2*(kb+tableSub*(gridSize-1))+2]
	half := x / 2
	for g := range ll {
		j := 2 * tableSub * g
		ll[g] += half * (pa[j] + fa*pa[j+1] + pb[j] + fb*pb[j+1])
	}
	return false
}

// posterior fills w with the record's posterior over the grid and returns
// its mass on never changing; w and the static mass sum to 1. Grid rates
// whose likelihood is below e^-25 of the best one get weight 0: their
// prior weight is at most 1, so they change a sum that is 1 by less than
// 1e-10, and skipping their exponentials is much of the advisor's speed.
func (p *Prior) posterior(t *gridTables, s *FetchStats, w *[gridSize]float64) (static float64) {
	if !informative(s) {
		copy(w[:], p.Weights)
		return p.Static
	}
	var ll [gridSize]float64
	possible := t.loglik(s, ll[:])
	mx := ll[0]
	for _, v := range ll[1:] {
		if v > mx {
			mx = v
		}
	}
	var sum float64
	for g, v := range ll {
		d := v - mx
		if d < -pruneBelow {
			w[g] = 0
			continue
		}
		w[g] = p.Weights[g] * expNeg(d)
		sum += w[g]
	}
	if possible && -mx < pruneBelow {
		static = p.Static * expNeg(-mx)
		sum += static
	}
	if !(sum > 0) || math.IsInf(sum, 1) {
		copy(w[:], p.Weights)
		return p.Static
	}
	inv := 1 / sum
	for g := range w {
		w[g] *= inv
	}
	return static * inv
}

// expNeg is e^d for d in [-pruneBelow, 0] to a relative error under
// 1e-9, a few times faster than math.Exp: with y = 64·d·log2(e) = k + r
// (k an integer, 0 ≤ r < 1), e^d = 2^{k>>6}·2^{(k&63)/64}·2^{r/64}, the
// middle factor from a table and the last from its Taylor series to the
// cube (the next term is below 6e-10). Posterior weights need no more.
func expNeg(d float64) float64 {
	y := d * (64 * math.Log2E)
	k := int64(y)
	if float64(k) > y {
		k-- // the floor of a negative number
	}
	x := (y - float64(k)) * (math.Ln2 / 64)
	p := 1 + x*(1+x*(0.5+x*(1.0/6)))
	return p * exp2Table[k&63] * math.Float64frombits(uint64(k>>6+1023)<<52)
}

// exp2Table holds 2^{i/64}.
var exp2Table = func() (t [64]float64) {
	for i := range t {
		t[i] = math.Exp2(float64(i) / 64)
	}
	return t
}()

// expectedMarginal is Σ_g w_g·Marginal(λ_g, age): the posterior expected
// value of fetching the record now.
func (t *gridTables) expectedMarginal(w *[gridSize]float64, age float64) float64 {
	if age <= 0 {
		return 0
	}
	k, f := t.lookup(fastLog(max(age, 1)))
	gm := t.gamma[2*k : 2*(k+tableSub*(gridSize-1))+2]
	var v float64
	for g, wg := range w {
		if wg < 1e-12 {
			continue
		}
		j := 2 * tableSub * g
		v += wg * (gm[j] + f*gm[j+1]) * t.invRate[g]
	}
	return v
}

// evaluation is what the ranking needs of a record's posterior.
type evaluation struct {
	value  float64 // E[Marginal(λ, age)]
	static float64 // P(never changes)
	fast   float64 // P(λ ≥ the rate at grid index fast)
}

// evaluate computes a record's posterior summaries in one pass over the
// grid, without storing the posterior: the advisor's inner loop.
func (p *Prior) evaluate(t *gridTables, s *FetchStats, age float64, fast int) evaluation {
	k, f := t.lookup(fastLog(max(age, 1)))
	gm := t.gamma[2*k : 2*(k+tableSub*(gridSize-1))+2]
	if !informative(s) {
		var e evaluation
		for g, wg := range p.Weights {
			j := 2 * tableSub * g
			e.value += wg * (gm[j] + f*gm[j+1]) * t.invRate[g]
			if g >= fast {
				e.fast += wg
			}
		}
		e.static = p.Static
		return e
	}
	var ll [gridSize]float64
	possible := t.loglik(s, ll[:])
	mx := ll[0]
	for _, v := range ll[1:] {
		if v > mx {
			mx = v
		}
	}
	var sum, value, fastSum, static float64
	for g, v := range ll {
		d := v - mx
		if d < -pruneBelow {
			continue
		}
		wg := p.Weights[g] * expNeg(d)
		sum += wg
		j := 2 * tableSub * g
		value += wg * (gm[j] + f*gm[j+1]) * t.invRate[g]
		if g >= fast {
			fastSum += wg
		}
	}
	if possible && -mx < pruneBelow {
		static = p.Static * expNeg(-mx)
		sum += static
	}
	if !(sum > 0) || math.IsInf(sum, 1) {
		return p.evaluate(t, &FetchStats{}, age, fast)
	}
	inv := 1 / sum
	return evaluation{value: value * inv, static: static * inv, fast: fastSum * inv}
}

// fastLog is ln x for x ≥ 1 to an absolute error under 1e-9, several
// times faster than math.Log: x = 2^e·m with m in [1, 2), m = c·(1+u)
// where c is m cut to its top 7 bits (a table holds ln c and 1/c) and
// 0 ≤ u < 2^-7, and ln(1+u) from its series to the 4th power. It
// positions table lookups.
func fastLog(x float64) float64 {
	b := math.Float64bits(x)
	e := float64(int64(b>>52&0x7ff) - 1023)
	i := b >> (52 - logBits) & (1<<logBits - 1)
	m := math.Float64frombits(b&(1<<52-1) | 1023<<52) // in [1, 2)
	u := (m - logTable[i].c) * logTable[i].inv
	return e*math.Ln2 + logTable[i].ln + u*(1-u*(0.5-u*(1.0/3-u*0.25)))
}

const logBits = 7

// logTable holds, for each c = 1 + i/2^logBits, ln c and 1/c.
var logTable = func() (t [1 << logBits]struct{ c, inv, ln float64 }) {
	for i := range t {
		c := 1 + float64(i)/(1<<logBits)
		t[i].c, t[i].inv, t[i].ln = c, 1/c, math.Log(c)
	}
	return t
}()

// Estimate is one record's estimated change rate.
type Estimate struct {
	// Rate is the typical rate of the record if it changes at all, in
	// changes per second: the posterior geometric mean, exp E[ln λ | λ >
	// 0], which is the right summary of a posterior that spans orders of
	// magnitude (the arithmetic mean follows its fast tail).
	Rate float64
	// Static is the posterior probability that the record never changes.
	Static float64
	// FromPrior is true when the record has no observed interval of its
	// own (counters not kept, or never refetched): its estimate is its
	// source's prior.
	FromPrior bool
}

// Estimate is the record's posterior change rate under the prior.
func (p Prior) Estimate(s FetchStats) Estimate {
	t := tables()
	var w [gridSize]float64
	static := p.posterior(t, &s, &w)
	return Estimate{Rate: typicalRate(t, &w), Static: static, FromPrior: !informative(&s)}
}

// typicalRate is exp E[ln λ] over the changing part of a posterior.
func typicalRate(t *gridTables, w *[gridSize]float64) float64 {
	var lsum, sum float64
	for g, wg := range w {
		lsum += wg * t.logRate[g]
		sum += wg
	}
	if sum <= 0 {
		return 0
	}
	return math.Exp(lsum / sum)
}

// threshold is the allocation's μ (seconds) for n records distributed as
// the prior and a budget per second: Σ_g n·π_g·Frequency(λ_g, μ) = budget.
func (p *Prior) threshold(t *gridTables, n int, budget float64) float64 {
	return solveMu(budget, func(mu float64) float64 {
		var sum float64
		for g, l := range t.rate {
			sum += p.Weights[g] * Frequency(l, mu)
		}
		return sum * float64(n)
	}, t.rate[:])
}

// freshnessAt is the mean freshness of records distributed as the prior,
// each fetched at the optimal frequency for threshold mu.
func (p *Prior) freshnessAt(t *gridTables, mu float64) float64 {
	f := p.Static
	if mu > 0 {
		for g, l := range t.rate {
			f += p.Weights[g] * Freshness(l, Frequency(l, mu))
		}
	}
	return f
}

// Freshness is the mean freshness the optimal allocation of budget
// fetches per day over n records distributed as the prior would keep them
// at (every record fetched at least once): the curve of freshness against
// budget, what doubling a crawl would buy.
func (p Prior) Freshness(n int, budgetPerDay float64) float64 {
	if n <= 0 || len(p.Weights) != gridSize {
		return 0
	}
	t := tables()
	return p.freshnessAt(t, p.threshold(t, n, budgetPerDay/day))
}
