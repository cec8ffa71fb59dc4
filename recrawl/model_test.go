package recrawl

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestExpNegAccuracy(t *testing.T) {
	worst := 0.0
	for d := -pruneBelow; d <= 0; d += 0.0007 {
		worst = math.Max(worst, math.Abs(expNeg(d)/math.Exp(d)-1))
	}
	if worst > 1e-9 {
		t.Errorf("expNeg's relative error reaches %g", worst)
	}
}

func TestFastLogAccuracy(t *testing.T) {
	worst := 0.0
	for x := 1.0; x < 1e10; x *= 1.0013 {
		worst = math.Max(worst, math.Abs(fastLog(x)-math.Log(x)))
	}
	if worst > 1e-9 {
		t.Errorf("fastLog's error reaches %g", worst)
	}
}

// exactLoglik is the paper's log-likelihood of each grid rate.
func exactLoglik(changed, unchanged []float64) []float64 {
	tb := tables()
	out := make([]float64, gridSize)
	for g, l := range tb.rate {
		for _, c := range changed {
			out[g] += math.Log(-math.Expm1(-l * c))
		}
		for _, u := range unchanged {
			out[g] -= l * u
		}
	}
	return out
}

func TestLoglikTwoPoints(t *testing.T) {
	tb := tables()
	record := func(changed, unchanged []float64, logs bool) *FetchStats {
		s := &FetchStats{Known: true, Refetches: int64(len(changed) + len(unchanged)), Changes: int64(len(changed))}
		for _, c := range changed {
			s.ChangedSeconds += c
			if logs {
				s.ChangedLogSeconds += math.Log(c)
			}
		}
		for _, u := range unchanged {
			s.UnchangedSeconds += u
		}
		return s
	}
	near := func(got, want []float64) bool {
		for g := range got {
			if math.Abs(got[g]-want[g]) > 2e-3*math.Max(1, math.Abs(want[g])) {
				return false
			}
		}
		return true
	}
	ll := make([]float64, gridSize)
	// A record refetched at long intervals and probed at short ones:
	// the two points are exact, up to the tables' interpolation.
	changed := []float64{3600, 3600, 8 * day, 8 * day}
	unchanged := []float64{day, 20000}
	if static := tb.loglik(record(changed, unchanged, true), ll); static {
		t.Fatal("a record that changed cannot be static")
	}
	if want := exactLoglik(changed, unchanged); !near(ll, want) {
		t.Errorf("two-valued intervals:\n got %v\nwant %v", ll, want)
	}
	// Without the logarithms the changed intervals are taken at their
	// mean, and the probes an hour after a fetch are lost.
	tb.loglik(record(changed, unchanged, false), ll)
	mean := (2*3600 + 16*day) / 4
	if want := exactLoglik([]float64{mean, mean, mean, mean}, unchanged); !near(ll, want) {
		t.Errorf("without logarithms:\n got %v\nwant %v", ll, want)
	}
	// Spread intervals: the two points are closer to the exact
	// likelihood than the mean is, at every rate.
	changed = []float64{1800, 4 * 3600, day, 3 * day, 10 * day}
	exact := exactLoglik(changed, unchanged)
	two := make([]float64, gridSize)
	tb.loglik(record(changed, unchanged, true), two)
	one := make([]float64, gridSize)
	tb.loglik(record(changed, unchanged, false), one)
	for g := range exact {
		if d2, d1 := math.Abs(two[g]-exact[g]), math.Abs(one[g]-exact[g]); d2 > d1+1e-3 {
			t.Errorf("rate %d: two points off by %v, the mean by %v", g, d2, d1)
		}
	}
	// A record without counters carries no information.
	if !tb.loglik(&FetchStats{Refetches: 3}, ll) {
		t.Error("unknown counters must allow the static atom")
	}
	for _, v := range ll {
		if v != 0 {
			t.Fatalf("unknown counters: %v", ll)
		}
	}
}

func TestPosteriorOfARecordSeenTwice(t *testing.T) {
	p := DefaultPrior()
	once := FetchStats{}.Observe(t0, false)
	// Seen twice, unchanged after a day: not declared static.
	unchanged := once.Observe(t0.Add(24*time.Hour), false)
	e := p.Estimate(unchanged)
	if e.Static >= 0.5 || e.Rate <= 0 || e.FromPrior {
		t.Errorf("unchanged after a day: %+v", e)
	}
	// Seen twice, changed after a day: fast, but not infinitely.
	changed := once.Observe(t0.Add(24*time.Hour), true)
	e = p.Estimate(changed)
	if e.Static != 0 || e.Rate <= 1/day || e.Rate >= 1/gridFastest {
		t.Errorf("changed after a day: %+v", e)
	}
	// Seen once: the prior.
	if e := p.Estimate(once); !e.FromPrior {
		t.Errorf("seen once: %+v", e)
	}
	// Counters not kept: the prior, whatever they say.
	old := changed
	old.Known = false
	if e := p.Estimate(old); !e.FromPrior || math.Abs(e.Static-p.Static) > 1e-12 {
		t.Errorf("counters not kept: %+v", e)
	}
}

func TestPosteriorConvergesOnALongHistory(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	p := DefaultPrior()
	for _, rate := range []float64{1 / 3600.0, 1 / day, 1 / (20 * day)} {
		ivs := make([]float64, 300)
		for i := range ivs {
			ivs[i] = (0.5 + rng.Float64()) / rate
		}
		s, _, _ := fetchSequence(rng, rate, ivs)
		if e := p.Estimate(s); math.Abs(e.Rate/rate-1) > 0.15 || e.Static > 1e-6 {
			t.Errorf("rate 1/%.0fs after 300 fetches: 1/%.0fs, static %v", 1/rate, 1/e.Rate, e.Static)
		}
	}
	// Never changed in 300 days of daily fetches: static.
	s := FetchStats{}.Observe(t0, false)
	for i := 1; i <= 300; i++ {
		s = s.Observe(t0.Add(time.Duration(float64(i)*day*1e9)), false)
	}
	if e := p.Estimate(s); e.Static < 0.5 {
		t.Errorf("300 unchanged days: static %v", e.Static)
	}
}

// The fitted prior finds a source's shape: a third of the records never
// change, a third change about hourly, a third about every ten days, each
// fetched daily for 20 days.
func TestFitPriorFindsTheShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var stats []FetchStats
	var truth []int // 0 static, 1 hourly, 2 ten-daily
	for i := 0; i < 3000; i++ {
		kind := i % 3
		rate := []float64{0, 1 / (3600 * math.Exp(rng.NormFloat64()*0.3)), 1 / (10 * day * math.Exp(rng.NormFloat64()*0.3))}[kind]
		ivs := make([]float64, 20)
		for k := range ivs {
			ivs[k] = day
		}
		s, _, _ := fetchSequence(rng, rate, ivs)
		stats = append(stats, s)
		truth = append(truth, kind)
	}
	p := FitPrior(stats)
	recs := make([]Record, len(stats))
	for i := range stats {
		recs[i].Stats = stats[i]
	}
	if q := FitPriorRecords(recs); !slices.Equal(q.Weights, p.Weights) || q.Static != p.Static || q.Records != p.Records {
		t.Errorf("FitPriorRecords = %+v, FitPrior = %+v over the same counters", q, p)
	}
	rates := GridRates()
	var fast, mid, slow float64
	for g, w := range p.Weights {
		switch iv := 1 / rates[g]; {
		case iv < 0.25*day:
			fast += w
		case iv < 60*day:
			mid += w
		default:
			slow += w
		}
	}
	t.Logf("fitted: static %.3f, slower than 60 days %.3f, 6 h to 60 days %.3f, faster than 6 h %.3f", p.Static, slow, mid, fast)
	// Never changing and changing less than every 60 days look alike in
	// 20 days; together they are the static third.
	if math.Abs(fast-1.0/3) > 0.03 || math.Abs(mid-1.0/3) > 0.05 || math.Abs(p.Static+slow-1.0/3) > 0.05 {
		t.Errorf("the fitted prior misses the shape")
	}
	if p.Records != fitSample || p.Default {
		t.Errorf("fitted from %d records, default %v", p.Records, p.Default)
	}
	// The posterior then classifies each record.
	wrong := 0
	for i, s := range stats {
		e := p.Estimate(s)
		// Twenty days cannot tell a page that never changes from one
		// that changes yearly: both are "static or slow".
		guess := 2
		switch {
		case e.Static > 0.5 || e.Rate < 1/(60*day):
			guess = 0
		case e.Rate > 1/(0.25*day):
			guess = 1
		}
		if guess != truth[i] && !(truth[i] == 2 && guess == 0 && s.Changes == 0) {
			wrong++
		}
	}
	if wrong > len(stats)/50 {
		t.Errorf("%d of %d records misclassified", wrong, len(stats))
	}
	if d := FitPrior(nil); !d.Default {
		t.Error("no records: want the default prior")
	}
}

// The posterior's typical rate against the MLE on simulated pages (one
// change an hour to one in 42 days) fetched a few times about daily, as a
// crawler that does not know their rates would: the prior fitted to the
// same pages helps most where a record says least (an MLE of 0 when no
// change was seen, a capped one when every fetch found a change). (With
// intervals set from the true rate, which no crawler knows, the interval
// itself carries the rate and the MLE does better.)
func TestEstimateBeatsTheMLEOnShortHistories(t *testing.T) {
	for _, fetches := range []int{2, 5, 20} {
		rng := rand.New(rand.NewPCG(15, 16))
		var stats []FetchStats
		var rates []float64
		for i := 0; i < 3000; i++ {
			rate := 1 / (3600 * math.Exp(rng.Float64()*math.Log(1000)))
			ivs := make([]float64, fetches)
			for k := range ivs {
				ivs[k] = (0.5 + rng.Float64()) * day
			}
			s, _, _ := fetchSequence(rng, rate, ivs)
			stats = append(stats, s)
			rates = append(rates, rate)
		}
		p := FitPrior(stats)
		var errPost, errMLE []float64
		for i, s := range stats {
			m, _ := MLE(s)
			errMLE = append(errMLE, math.Abs(math.Log(m/rates[i])))
			errPost = append(errPost, math.Abs(math.Log(p.Estimate(s).Rate/rates[i])))
		}
		for _, q := range []float64{0.5, 0.9} {
			qp, qm := quantile(errPost, q), quantile(errMLE, q)
			t.Logf("%d fetches: %.0f%% within a factor %.2f of the true rate (posterior), %.2f (MLE)", fetches, 100*q, math.Exp(qp), math.Exp(qm))
			if qp >= qm {
				t.Errorf("%d fetches, %.0f%%: posterior %.3f, MLE %.3f (|ln(estimate/rate)|)", fetches, 100*q, qp, qm)
			}
		}
	}
}

// TestFitPriorLeansOnDefaultWithFewRecords fits priors to records that
// all changed within three minutes of their first fetch: three such
// records must not make the whole source look fast, five hundred must.
func TestFitPriorLeansOnDefaultWithFewRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	fastMass := func(n int) float64 {
		var stats []FetchStats
		for len(stats) < n {
			s, changed, _ := fetchSequence(rng, 1/60.0, []float64{180})
			if len(changed) == 1 {
				stats = append(stats, s)
			}
		}
		p := FitPrior(stats)
		m := 0.0
		for g, r := range GridRates() {
			if r > 1.0/3600 {
				m += p.Weights[g]
			}
		}
		return m
	}
	def := DefaultPrior()
	defFast := 0.0
	for g, r := range GridRates() {
		if r > 1.0/3600 {
			defFast += def.Weights[g]
		}
	}
	if few := fastMass(3); few > defFast+0.35 {
		t.Errorf("3 fast records put %.2f of the prior on rates above one an hour (DefaultPrior %.2f): too little data to move it that far", few, defFast)
	}
	if many := fastMass(500); many < 0.8 {
		t.Errorf("500 fast records put only %.2f of the prior on rates above one an hour", many)
	}
}
