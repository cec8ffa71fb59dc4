package recrawl

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fetchSequence simulates fetching a Poisson page of the given rate (per
// second) at the given intervals (seconds) and returns its counters and
// the intervals that ended changed and unchanged.
func fetchSequence(rng *rand.Rand, rate float64, intervals []float64) (s FetchStats, changed, unchanged []float64) {
	at := t0
	s = s.Observe(at, false)
	for _, iv := range intervals {
		at = at.Add(time.Duration(iv * 1e9))
		// The number of changes in the interval is Poisson; the fetch
		// sees whether it is at least one.
		ch := rng.Float64() < -math.Expm1(-rate*iv)
		s = s.Observe(at, ch)
		if ch {
			changed = append(changed, iv)
		} else {
			unchanged = append(unchanged, iv)
		}
	}
	return s, changed, unchanged
}

// exactMLE maximises the paper's log-likelihood for irregular intervals,
// Σ_changed ln(1-e^{-λ t_i}) - λ Σ_unchanged u_j, by bisection on its
// derivative Σ t_i/(e^{λ t_i}-1) - Σ u_j (decreasing in λ).
func exactMLE(changed, unchanged []float64) float64 {
	var u float64
	for _, v := range unchanged {
		u += v
	}
	score := func(l float64) float64 {
		var s float64
		for _, t := range changed {
			s += t / math.Expm1(l*t)
		}
		return s - u
	}
	lo, hi := 1e-12, 1.0
	for score(hi) > 0 {
		hi *= 2
	}
	for i := 0; i < 200; i++ {
		mid := math.Sqrt(lo * hi)
		if score(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}

func TestObserveKeepsTheCounters(t *testing.T) {
	var s FetchStats
	s = s.Observe(t0, true) // the first delivery creates the record
	if !s.Known || s.Refetches != 0 || !s.FirstFetch.Equal(t0) || !s.LastFetch.Equal(t0) {
		t.Fatalf("first delivery: %+v", s)
	}
	s = s.Observe(t0.Add(time.Hour), false)
	s = s.Observe(t0.Add(3*time.Hour), true)
	s = s.Observe(t0.Add(7*time.Hour), true)
	if s.Refetches != 3 || s.Changes != 2 {
		t.Fatalf("counts: %+v", s)
	}
	if s.UnchangedSeconds != 3600 || s.ChangedSeconds != 6*3600 {
		t.Fatalf("sums: unchanged %v changed %v", s.UnchangedSeconds, s.ChangedSeconds)
	}
	if want := math.Log(2*3600) + math.Log(4*3600); math.Abs(s.ChangedLogSeconds-want) > 1e-9 {
		t.Fatalf("log sum %v, want %v", s.ChangedLogSeconds, want)
	}
	if !s.LastChange.Equal(t0.Add(7 * time.Hour)) {
		t.Fatalf("last change %v", s.LastChange)
	}
	// A delivery older than the last one closes an empty interval and
	// leaves last_updated_at where it was.
	back := s.Observe(t0.Add(5*time.Hour), false)
	if back.Refetches != 4 || back.UnchangedSeconds != s.UnchangedSeconds || !back.LastFetch.Equal(s.LastFetch) {
		t.Fatalf("delivery from the past: %+v", back)
	}
}

func TestRegularRateIsThePapersEstimator(t *testing.T) {
	const iv = 86400.0
	for _, tc := range []struct {
		n, x int64
		want float64 // -ln((n-x+0.5)/(n+0.5)), worked by hand
	}{
		{10, 0, 0},
		{10, 5, math.Log(10.5 / 5.5)},
		{10, 10, math.Log(21)},
		{1, 1, math.Log(3)},
		{50, 20, math.Log(50.5 / 30.5)},
	} {
		if got := RegularRate(tc.n, tc.x, iv) * iv; math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("n=%d x=%d: %v, want %v", tc.n, tc.x, got, tc.want)
		}
	}
	if RegularRate(0, 0, iv) != 0 || RegularRate(5, 1, 0) != 0 {
		t.Error("no fetch or no interval must give 0")
	}
}

// The paper's claim for its estimator: nearly unbiased while the interval
// is up to about twice the mean change interval, where the naive X/(nI)
// is far below the truth.
func TestRegularRateIsNearlyUnbiased(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, pages = 50, 4000
	for _, ratio := range []float64{0.5, 1, 2} { // I·λ
		var sum, naive float64
		for p := 0; p < pages; p++ {
			var x int64
			for i := 0; i < n; i++ {
				if rng.Float64() < -math.Expm1(-ratio) {
					x++
				}
			}
			sum += RegularRate(n, x, 1)
			naive += float64(x) / n
		}
		bias := sum/pages/ratio - 1
		if math.Abs(bias) > 0.03 {
			t.Errorf("I·λ=%v: mean estimate off by %.1f%%", ratio, 100*bias)
		}
		if naiveBias := naive/pages/ratio - 1; naiveBias > -0.1 {
			t.Errorf("I·λ=%v: the naive estimate should miss changes, off by only %.1f%%", ratio, 100*naiveBias)
		}
	}
}

func TestMLEReducesToThePapersEstimators(t *testing.T) {
	// Regular intervals: the closed form is RegularRate exactly.
	for _, tc := range []struct{ n, x int64 }{{10, 3}, {10, 10}, {30, 1}, {7, 6}} {
		iv := 3600.0
		s := FetchStats{Known: true, Refetches: tc.n, Changes: tc.x,
			ChangedSeconds: float64(tc.x) * iv, UnchangedSeconds: float64(tc.n-tc.x) * iv}
		got, ok := MLE(s)
		if want := RegularRate(tc.n, tc.x, iv); !ok || math.Abs(got-want) > 1e-12*want+1e-18 {
			t.Errorf("n=%d x=%d: %v, want %v", tc.n, tc.x, got, want)
		}
	}
	// Equal changed intervals, irregular unchanged ones: without the
	// bias reduction, the closed form is the exact maximum-likelihood
	// estimate.
	changed := []float64{7200, 7200, 7200}
	unchanged := []float64{600, 9000, 20000, 1200}
	var u float64
	for _, v := range unchanged {
		u += v
	}
	got := mle(3, 3*7200, u, 0)
	if want := exactMLE(changed, unchanged); math.Abs(got-want) > 1e-9*want {
		t.Errorf("equal changed intervals: %v, exact %v", got, want)
	}
}

func TestMLEEdgeCases(t *testing.T) {
	if _, ok := MLE(FetchStats{Known: true}); ok {
		t.Error("one fetch has no interval: want ok false")
	}
	if r, ok := MLE(FetchStats{Known: true, Refetches: 4, UnchangedSeconds: 4 * 3600}); !ok || r != 0 {
		t.Errorf("never changed: %v %v, want 0", r, ok)
	}
	// Every fetch changed: finite, ln(2n+1)/I.
	r, ok := MLE(FetchStats{Known: true, Refetches: 4, Changes: 4, ChangedSeconds: 4 * 3600})
	if want := math.Log(9) / 3600; !ok || math.IsInf(r, 0) || math.Abs(r-want) > 1e-15 {
		t.Errorf("every fetch changed: %v, want %v", r, want)
	}
}

// How far the closed form strays from the exact MLE when the changed
// intervals differ: intervals drawn uniformly from [0.5, 1.5]/λ, and from
// a spread of a factor of ten.
func TestMLEClosedFormAgainstExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		lo, hi float64 // interval range in units of 1/λ
		bound  float64 // measured: 95th percentile of |closed/exact - 1|
	}{
		{0.5, 1.5, 0.02},
		{0.2, 2, 0.05},
	} {
		var errs []float64
		for p := 0; p < 2000; p++ {
			ivs := make([]float64, 30)
			for i := range ivs {
				ivs[i] = tc.lo + rng.Float64()*(tc.hi-tc.lo)
			}
			s, changed, unchanged := fetchSequence(rng, 1, ivs)
			if len(changed) == 0 || len(unchanged) == 0 {
				continue
			}
			closed := mle(float64(s.Changes), s.ChangedSeconds, s.UnchangedSeconds, 0)
			errs = append(errs, math.Abs(closed/exactMLE(changed, unchanged)-1))
		}
		q := quantile(errs, 0.95)
		t.Logf("intervals in [%v, %v]/λ: 95%% of closed forms within %.2f%% of the exact MLE", tc.lo, tc.hi, 100*q)
		if q > tc.bound {
			t.Errorf("intervals in [%v, %v]/λ: 95%% of closed forms within %.3f of the exact MLE, want %.3f", tc.lo, tc.hi, q, tc.bound)
		}
	}
}

// The estimator's error on simulated pages with known rates (one change
// an hour to one in 42 days), fetched 20 and 100 times at intervals near
// 1/λ (uniform in [0.5, 1.5]/λ). The bounds are the measured 90th
// percentiles of |estimate/λ - 1|, rounded up: after 20 fetches 90% of
// the estimates are within 47% of the true rate (63% within 25%), after
// 100 within 22% (95% within 25%). Yes/no observations carry little
// information each.
func TestMLEOnSimulatedPages(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		fetches int
		bound   float64
	}{
		{20, 0.50},
		{100, 0.23},
	} {
		var errs []float64
		for p := 0; p < 3000; p++ {
			rate := 1 / (3600 * math.Exp(rng.Float64()*math.Log(1000))) // 1 h to 42 days
			ivs := make([]float64, tc.fetches)
			for i := range ivs {
				ivs[i] = (0.5 + rng.Float64()) / rate
			}
			s, _, _ := fetchSequence(rng, rate, ivs)
			est, _ := MLE(s)
			errs = append(errs, math.Abs(est/rate-1))
		}
		q := quantile(errs, 0.9)
		within := 0
		for _, e := range errs {
			if e <= 0.25 {
				within++
			}
		}
		t.Logf("%d fetches: 90%% of estimates within %.1f%% of the true rate; %.0f%% within 25%%", tc.fetches, 100*q, 100*float64(within)/float64(len(errs)))
		if q > tc.bound {
			t.Errorf("%d fetches: 90%% within %.3f, want %.3f", tc.fetches, q, tc.bound)
		}
	}
}

func quantile(v []float64, q float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[int(q*float64(len(s)-1))]
}
