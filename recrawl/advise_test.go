package recrawl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// history returns the counters of a record of the given rate fetched n
// times at the interval iv (seconds), the last fetch age seconds before
// now.
func history(rng *rand.Rand, rate, iv float64, n int, now time.Time, age float64) FetchStats {
	ivs := make([]float64, n)
	for i := range ivs {
		ivs[i] = iv
	}
	s, _, _ := fetchSequence(rng, rate, ivs)
	// Shift the record so that its last fetch was age ago.
	shift := now.Add(-time.Duration(age * 1e9)).Sub(s.LastFetch)
	s.FirstFetch = s.FirstFetch.Add(shift)
	s.LastFetch = s.LastFetch.Add(shift)
	s.LastChange = s.LastChange.Add(shift)
	return s
}

func TestAdviseRejectsBadInput(t *testing.T) {
	for _, b := range []float64{0, -5, math.NaN(), math.Inf(1)} {
		_, err := Advise(Request{Budget: b, Now: t0})
		if !errors.Is(err, ErrBudget) {
			t.Errorf("budget %v: %v", b, err)
		}
	}
	if _, err := Advise(Request{Budget: 10, Limit: -1, Now: t0}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("negative limit: %v", err)
	}
	bad := Prior{Weights: []float64{1}}
	if _, err := Advise(Request{Budget: 10, Now: t0, Prior: &bad}); err == nil || !strings.Contains(err.Error(), "FitPrior") {
		t.Errorf("malformed prior: %v", err)
	}
}

func TestAdviseTargetsFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	now := t0.Add(90 * 24 * time.Hour)
	var recs []Record
	for i := 0; i < 50; i++ {
		recs = append(recs, Record{ID: int64(i + 1), Name: fmt.Sprint("r", i), Stats: history(rng, 1/(2*day), day, 20, now, 10*day)})
	}
	plan, err := Advise(Request{Records: recs, Targets: []string{"t1", "t2", "t3"}, Budget: 5, Now: now, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Items) != 5 {
		t.Fatalf("%d items, want the limit 5", len(plan.Items))
	}
	for i, name := range []string{"t1", "t2", "t3"} {
		if it := plan.Items[i]; it.Name != name || it.Reason != NeverFetched || !it.Due || it.Stale != 1 {
			t.Errorf("item %d: %+v", i, it)
		}
	}
	if plan.Items[3].Reason == NeverFetched {
		t.Errorf("records after the targets: %+v", plan.Items[3])
	}
	plan, _ = Advise(Request{Records: recs, Targets: []string{"t1", "t2", "t3"}, Budget: 5, Now: now, Limit: 2})
	if len(plan.Items) != 2 || plan.Items[1].Name != "t2" {
		t.Errorf("a limit below the targets: %+v", plan.Items)
	}
}

// Records with long histories have concentrated posteriors: the advisor
// then behaves as the optimal schedule for their rates.
func TestAdviseFollowsTheOptimalSchedule(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	now := t0.Add(400 * 24 * time.Hour)
	var recs []Record
	rates := []float64{1 / (3600.0 * 2), 1 / day, 1 / (4 * day), 1 / (15 * day), 1 / (60 * day)}
	for i := 0; i < 500; i++ {
		rate := rates[i%len(rates)]
		age := rng.Float64() * 40 * day
		recs = append(recs, Record{ID: int64(i + 1), Name: fmt.Sprint("r", i), Stats: history(rng, rate, 1/rate, 200, now, age)})
	}
	plan, err := Advise(Request{Records: recs, Budget: 100, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	mu := plan.Threshold
	if mu <= 0 {
		t.Fatalf("threshold %v", mu)
	}
	prev := math.Inf(1)
	listed := map[string]bool{}
	for _, it := range plan.Items {
		listed[it.Name] = true
		if !it.Due || it.Gain < mu {
			t.Errorf("%s listed with gain %v below μ %v", it.Name, it.Gain, mu)
		}
		if it.Gain > prev {
			t.Errorf("%s out of order: gain %v after %v", it.Name, it.Gain, prev)
		}
		prev = it.Gain
	}
	if plan.Due != len(plan.Items) {
		t.Errorf("due %d, listed %d", plan.Due, len(plan.Items))
	}
	for i, r := range recs {
		rate := rates[i%len(rates)]
		e := plan.Prior.Estimate(r.Stats)
		if math.Abs(e.Rate/rate-1) > 0.3 {
			t.Fatalf("record %d: estimated 1/%.2fd, true 1/%.2fd", i, 1/(e.Rate*day), 1/(rate*day))
		}
		// Listed exactly when a fetch now is worth μ at the estimated
		// rate; the posterior is concentrated but not a point, so the
		// records right at the threshold may go either way.
		age := now.Sub(r.Stats.LastFetch).Seconds()
		v := Marginal(e.Rate, age) / day / mu
		if listed[r.Name] != (v >= 1) && math.Abs(v-1) > 0.1 {
			t.Errorf("record of rate 1/%.2fd (estimated 1/%.2fd), age %.1fd: listed %v, Marginal/μ %.2f", 1/(rate*day), 1/(e.Rate*day), age/day, listed[r.Name], v)
		}
		if rate*mu*day >= 1 && listed[r.Name] {
			t.Errorf("a page changing every %.1f h is beyond the threshold and listed", 1/(rate*3600))
		}
	}
	// The optimal interval of a listed record matches the allocation's.
	for _, it := range plan.Items {
		var i int
		fmt.Sscanf(it.Name, "r%d", &i)
		f := Frequency(rates[i%len(rates)], mu*day)
		if want := 1 / f; math.Abs(it.OptimalInterval.Seconds()/want-1) > 0.25 {
			t.Errorf("%s: optimal interval %v, allocation %v", it.Name, it.OptimalInterval, time.Duration(want*1e9))
		}
	}
}

func TestAdviseMaxValuePerAge(t *testing.T) {
	peak := 0.0
	for x := 0.01; x < 50; x *= 1.001 {
		peak = math.Max(peak, Marginal(x, 1)) // Marginal(λ, a)/a at a = 1
	}
	if peak > maxValuePerAge || peak < maxValuePerAge-2e-5 {
		t.Errorf("Marginal(λ, a)/a peaks at %v, the advisor assumes %v", peak, maxValuePerAge)
	}
}

func TestAdviseEventNear(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	now := t0.Add(90 * 24 * time.Hour)
	// Static-looking records fetched an hour ago: never due by their rate.
	var recs []Record
	for i := 0; i < 20; i++ {
		recs = append(recs, Record{ID: int64(i + 1), Name: fmt.Sprint("r", i), Stats: history(rng, 0, day, 60, now, 3600)})
	}
	soon, later, past, far := now.Add(30*time.Minute), now.Add(6*time.Hour), now.Add(-30*time.Minute), now.Add(72*time.Hour)
	recs[3].Stats.EventAt = &soon   // nearer than the last fetch is old
	recs[12].Stats.EventAt = &later // in the window, but the copy is younger than the wait
	recs[7].Stats.EventAt = &past   // after the last fetch, before now
	recs[9].Stats.EventAt = &far
	plan, err := Advise(Request{Records: recs, Budget: 2, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Reason{}
	for _, it := range plan.Items {
		got[it.Name] = it.Reason
	}
	if len(got) != 2 || got["r3"] != EventNear || got["r7"] != EventNear {
		t.Errorf("items %+v, want r3 and r7 for their event dates (not r12, fetched an hour ago for an event in six)", plan.Items)
	}
	if plan, _ := Advise(Request{Records: recs, Budget: 2, Now: now, EventWindow: -1}); len(plan.Items) != 0 {
		t.Errorf("events off: %+v", plan.Items)
	}
}

func TestAdviseLearns(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	now := t0.Add(60 * 24 * time.Hour)
	p := DefaultPrior()
	mu := p.threshold(tables(), 3, 1/day) // the threshold Advise will use
	// Changed at its only refetch, ten days apart: its rate is known
	// only from below. Fetched again after a probe interval, it is
	// probed.
	saturated := history(rng, 1/60.0, 10*day, 1, now, 0.6*mu)
	// Fetched once, long ago: its first refetch comes before merely due
	// records.
	once := FetchStats{}.Observe(now.Add(-time.Duration(5*mu*1e9)), false)
	// Counters not kept: the source prior.
	unknown := history(rng, 1/day, day, 5, now, 5*mu)
	unknown.Known = false
	recs := []Record{{ID: 1, Name: "saturated", Stats: saturated}, {ID: 2, Name: "once", Stats: once}, {ID: 3, Name: "unknown", Stats: unknown}}
	plan, err := Advise(Request{Records: recs, Budget: 1, Now: now, Prior: &p})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Items) < 2 {
		t.Fatalf("items %+v", plan.Items)
	}
	if it := plan.Items[0]; it.Name != "saturated" || !it.Probe || it.Reason != LikelyChanged {
		t.Errorf("first item %+v, want the probe", it)
	}
	if it := plan.Items[1]; it.Name != "once" || it.Probe || it.Reason != SourcePrior {
		t.Errorf("second item %+v, want the first refetch", it)
	}
	for _, it := range plan.Items {
		if it.Name == "unknown" && it.Reason != SourcePrior {
			t.Errorf("counters not kept: %+v", it)
		}
	}
	if plan.FromPrior != 2 {
		t.Errorf("%d records on the prior, want 2", plan.FromPrior)
	}
	// A store without ChangedLogSeconds cannot tell what a probe found:
	// its records are not probed.
	noLog := saturated
	noLog.ChangedLogSeconds = 0
	plan, _ = Advise(Request{Records: []Record{{Name: "nolog", Stats: noLog}}, Budget: 1, Now: now, Prior: &p})
	for _, it := range plan.Items {
		if it.Probe {
			t.Errorf("a probe without the log counter: %+v", it)
		}
	}
	// Out of its probe window, the saturated record is ranked as any.
	late := history(rng, 1/60.0, 10*day, 1, now, 4*mu)
	plan, _ = Advise(Request{Records: []Record{{Name: "late", Stats: late}}, Budget: 1, Now: now, Prior: &p})
	for _, it := range plan.Items {
		if it.Probe {
			t.Errorf("a probe long after the fetch: %+v", it)
		}
	}
}

func TestAdviseFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 30))
	now := t0.Add(90 * 24 * time.Hour)
	var recs []Record
	for i := 0; i < 30; i++ {
		recs = append(recs, Record{ID: int64(i + 1), Name: fmt.Sprint("r", i), Stats: history(rng, 1/(5*day), 5*day, 30, now, 3600*float64(i+1))})
	}
	strict, _ := Advise(Request{Records: recs, Budget: 6, Now: now, Limit: 10})
	filled, _ := Advise(Request{Records: recs, Budget: 6, Now: now, Limit: 10, Fill: true})
	if len(strict.Items) >= 10 || len(filled.Items) != 10 {
		t.Fatalf("strict %d items, filled %d, want fewer than 10 and 10", len(strict.Items), len(filled.Items))
	}
	for i, it := range filled.Items {
		if i < len(strict.Items) {
			if it.Name != strict.Items[i].Name || !it.Due {
				t.Errorf("item %d: %+v, strict %+v", i, it, strict.Items[i])
			}
		} else if it.Due {
			t.Errorf("filled item %d is marked due: %+v", i, it)
		}
	}
	// The oldest of the records not yet due are worth the most.
	last := filled.Items[len(strict.Items)]
	if last.Name != fmt.Sprint("r", 29-len(strict.Items)) {
		t.Errorf("first fill %s, want the oldest record not due", last.Name)
	}
}

func TestAdviseReportsFreshness(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	now := t0.Add(200 * 24 * time.Hour)
	var recs []Record
	var want float64
	for i := 0; i < 3000; i++ {
		rate := 1 / (day * math.Exp(rng.Float64()*math.Log(30)))
		age := rng.Float64() * 5 * day
		recs = append(recs, Record{ID: int64(i + 1), Stats: history(rng, rate, 1/rate, 100, now, age)})
		want += math.Exp(-rate * age)
	}
	want /= float64(len(recs))
	plan, err := Advise(Request{Records: recs, Budget: 300, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(plan.FreshNow-want) > 0.03 {
		t.Errorf("expected fresh share %.3f, true %.3f", plan.FreshNow, want)
	}
	// More budget never buys less freshness.
	prev := 0.0
	for _, b := range []float64{30, 100, 300, 1000, 3000} {
		f := plan.Prior.Freshness(len(recs), b)
		if f < prev {
			t.Errorf("budget %v: freshness %v below %v", b, f, prev)
		}
		prev = f
	}
	if math.Abs(plan.Optimal-plan.Prior.Freshness(len(recs), 300)) > 1e-9 {
		t.Errorf("Plan.Optimal %v", plan.Optimal)
	}
}

// benchRecords are n records of a source with rates from the default
// distribution, histories of 0 to 30 fetches at intervals around a day,
// and last fetches up to 20 days old.
func benchRecords(n int) []Record {
	rng := rand.New(rand.NewPCG(33, 34))
	r, _ := ParseRates("default")
	rates := r.Sample(n, rng)
	now := t0.Add(400 * 24 * time.Hour)
	recs := make([]Record, n)
	for i := range recs {
		fetches := rng.IntN(31)
		ivs := make([]float64, fetches)
		for k := range ivs {
			ivs[k] = (0.2 + 2*rng.Float64()) * day
		}
		s, _, _ := fetchSequence(rng, rates[i], ivs)
		shift := now.Add(-time.Duration(rng.Float64() * 20 * day * 1e9)).Sub(s.LastFetch)
		s.FirstFetch, s.LastFetch, s.LastChange = s.FirstFetch.Add(shift), s.LastFetch.Add(shift), s.LastChange.Add(shift)
		recs[i] = Record{ID: int64(i + 1), Name: fmt.Sprint("https://example.com/", i), Stats: s}
	}
	return recs
}

// BenchmarkAdvise ranks 100,000 records for a budget of 10,000 fetches a
// day, returning 1,000: with the prior fitted beforehand (as a caller
// ranking often would) and fitted in the call.
func BenchmarkAdvise(b *testing.B) {
	recs := benchRecords(100000)
	now := t0.Add(400 * 24 * time.Hour)
	stats := make([]FetchStats, len(recs))
	for i := range recs {
		stats[i] = recs[i].Stats
	}
	p := FitPrior(stats)
	for _, fill := range []bool{false, true} {
		b.Run(fmt.Sprintf("prior given/fill=%v", fill), func(b *testing.B) {
			c := cpuTime()
			for b.Loop() {
				if _, err := Advise(Request{Records: recs, Budget: 10000, Now: now, Limit: 1000, Prior: &p, Fill: fill}); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, c)
		})
	}
	b.Run("prior fitted", func(b *testing.B) {
		c := cpuTime()
		for b.Loop() {
			if _, err := Advise(Request{Records: recs, Budget: 10000, Now: now, Limit: 1000}); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, c)
	})
	b.Run("FitPrior", func(b *testing.B) {
		c := cpuTime()
		for b.Loop() {
			FitPrior(stats)
		}
		reportCPU(b, c)
	})
}

// reportCPU adds the CPU milliseconds per operation since c (run with
// GOMAXPROCS=1 so that they are the operation's own).
func reportCPU(b *testing.B, c int64) {
	if now := cpuTime(); now > 0 {
		b.ReportMetric(float64(now-c)/float64(b.N)/1e6, "cpu-ms/op")
	}
}
