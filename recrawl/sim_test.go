package recrawl

import (
	"context"
	"encoding/xml"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func mustRates(t testing.TB, spec string) *Rates {
	t.Helper()
	r, err := ParseRates(spec)
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

func TestParseRates(t *testing.T) {
	for _, name := range PresetNames() {
		r := mustRates(t, name)
		if r.String() != name {
			t.Errorf("preset %s prints as %q", name, r.String())
		}
	}
	r := mustRates(t, "3*loguniform(1h,2d) + 1*static")
	rates := r.Sample(20000, newRand(1))
	static := 0
	for _, l := range rates {
		switch {
		case l == 0:
			static++
		case l > 1/3600.0*1.0000001 || l < 1/(2*day)*0.9999999:
			t.Fatalf("rate 1/%.0fs outside [1h, 2d]", 1/l)
		}
	}
	if share := float64(static) / 20000; math.Abs(share-0.25) > 0.015 {
		t.Errorf("static share %.3f, want 0.25", share)
	}
	every := mustRates(t, "every(6h)").Sample(3, newRand(1))
	if every[0] != 1/(6*3600.0) {
		t.Errorf("every(6h): %v", every)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "rates.txt")
	if err := os.WriteFile(path, []byte("# one page a line\n6h\n2\nstatic\n\n1.5d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := mustRates(t, "file:"+path).Sample(5, newRand(1))
	want := []float64{1 / (6 * 3600.0), 2 / day, 0, 1 / (1.5 * day), 1 / (6 * 3600.0)}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("file rate %d: %v, want %v", i, got[i], want[i])
		}
	}

	for _, tc := range []struct{ spec, says string }{
		{"loguniform(2d,1h)", "above its maximum"},
		{"gaussian(1h,2h)", "unknown part"},
		{"loguniform(1h)", "takes 2 arguments"},
		{"-1*static", "not a positive number"},
		{"loguniform(1h,fortnight)", "not a positive duration"},
		{"lognormal(1h,-1)", "sigma"},
		{"every(3h", "closing parenthesis"},
		{"file:" + filepath.Join(dir, "missing"), "no such file"},
	} {
		if _, err := ParseRates(tc.spec); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%q: %v, want an error saying %q", tc.spec, err, tc.says)
		}
	}
	if err := os.WriteFile(path, []byte("6h\nsoon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseRates("file:" + path); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: %v", err)
	}
}

func TestSimulateRejectsBadConfig(t *testing.T) {
	for _, cfg := range []SimConfig{
		{Pages: -1},
		{Policies: []string{"advisor", "lru"}},
		{MeasureFrom: 70},
		{Budget: -3},
		{Tick: -time.Second},
	} {
		if _, err := Simulate(context.Background(), cfg); err == nil {
			t.Errorf("%+v: want an error", cfg)
		}
	}
}

// Uniform round-robin fetches each page every N/B days exactly, so its
// measured freshness must be the paper's F(λ, B/N), averaged over the
// pages, to within the randomness of 30 days of changes.
func TestSimulateFreshnessIsExact(t *testing.T) {
	rep, err := Simulate(context.Background(), SimConfig{Pages: 2000, Rates: mustRates(t, "0.8*loguniform(6h,60d)+0.2*static"), Seed: 3, Policies: []string{PolicyUniform}})
	if err != nil {
		t.Fatal(err)
	}
	f := rep.Config.Budget / float64(rep.Config.Pages) / day
	var want float64
	for _, l := range rep.Rates[:rep.Config.Pages] {
		want += Freshness(l, f)
	}
	want /= float64(rep.Config.Pages)
	t.Logf("uniform: measured %.4f, theory %.4f", rep.Results[0].Freshness, want)
	if got := rep.Results[0].Freshness; math.Abs(got-want) > 0.01 {
		t.Errorf("uniform: measured %.4f, theory %.4f", got, want)
	}
	// Pages that never change are fresh from their first fetch on.
	rep, err = Simulate(context.Background(), SimConfig{Pages: 500, Rates: mustRates(t, "static"), Policies: []string{PolicyUniform, PolicyAdvisor, PolicyOracle}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Freshness != 1 || r.Daily[0] <= 0 || r.Daily[0] >= 0.1 {
			t.Errorf("%s on static pages: freshness %v, day 1 %v", r.Policy, r.Freshness, r.Daily[0])
		}
	}
}

func TestSimulateOracleReachesTheAllocation(t *testing.T) {
	rep, err := Simulate(context.Background(), SimConfig{Pages: 2000, Rates: mustRates(t, "default"), Seed: 4, Policies: []string{PolicyOracle, PolicyIndex}})
	if err != nil {
		t.Fatal(err)
	}
	n := rep.Config.Pages
	freqs, _ := Allocate(rep.Rates[:n], rep.Config.Budget/day)
	var want float64
	for i, l := range rep.Rates[:n] {
		if l == 0 {
			want++ // fetched once, fresh for good
			continue
		}
		want += Freshness(l, freqs[i])
	}
	want /= float64(n)
	oracle, _ := rep.Result(PolicyOracle)
	index, _ := rep.Result(PolicyIndex)
	t.Logf("oracle: measured %.4f, allocation %.4f; index %.4f", oracle.Freshness, want, index.Freshness)
	if math.Abs(oracle.Freshness-want) > 0.015 {
		t.Errorf("oracle: measured %.4f, allocation %.4f", oracle.Freshness, want)
	}
	// The advisor's ranking with the true rates is as good.
	if index.Freshness < 0.98*oracle.Freshness {
		t.Errorf("index policy %.4f, oracle %.4f", index.Freshness, oracle.Freshness)
	}
}

func TestSimulateIsDeterministic(t *testing.T) {
	cfg := SimConfig{Pages: 400, Rates: mustRates(t, "two-humped"), Seed: 5, Policies: []string{PolicyAdvisor, PolicyNutch}, Tick: 3 * time.Hour}
	a, err := Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Simulate(context.Background(), cfg)
	for i := range a.Results {
		if a.Results[i].Freshness != b.Results[i].Freshness || a.Results[i].Fetches != b.Results[i].Fetches {
			t.Errorf("%s: %v then %v", a.Results[i].Policy, a.Results[i].Freshness, b.Results[i].Freshness)
		}
	}
}

// recordingStore is a MemStore that counts deliveries and can lie about
// changes, to show that the advisor sees the store and nothing else.
type recordingStore struct {
	*MemStore
	deliveries int
	blind      bool // store every delivery as unchanged
}

func (s *recordingStore) Deliver(ctx context.Context, page, content string, at time.Time) error {
	s.deliveries++
	if s.blind {
		content = page
	}
	return s.MemStore.Deliver(ctx, page, content, at)
}

func TestSimulateAdvisorSeesOnlyTheStore(t *testing.T) {
	run := func(blind bool) (PolicyResult, *recordingStore) {
		st := &recordingStore{MemStore: NewMemStore(), blind: blind}
		rep, err := Simulate(context.Background(), SimConfig{Pages: 1000, Rates: mustRates(t, "default"), Seed: 6, Policies: []string{PolicyAdvisor}, Tick: 3 * time.Hour,
			NewStore: func(string) (Store, error) { return st, nil }})
		if err != nil {
			t.Fatal(err)
		}
		return rep.Results[0], st
	}
	honest, st := run(false)
	if st.deliveries != honest.Fetches {
		t.Errorf("%d fetches, %d deliveries", honest.Fetches, st.deliveries)
	}
	recs, _ := st.Stats(context.Background())
	if len(recs) != 1001 {
		t.Errorf("%d records stored, want every page and the new target", len(recs))
	}
	// A store that never records a change leaves the advisor unable to
	// tell pages apart: it does worse.
	blind, _ := run(true)
	t.Logf("honest store %.4f, blind store %.4f", honest.Freshness, blind.Freshness)
	if blind.Freshness >= honest.Freshness-0.02 {
		t.Errorf("blind store %.4f, honest %.4f", blind.Freshness, honest.Freshness)
	}
}

// The targets at a small scale, with the in-memory store: the advisor
// beats uniform and Nutch, gets close to the oracle and fetches a new
// target at the next tick. The bounds are below the measured values
// (docs/RECRAWL.md has them at 10,000 pages). Three-hour ticks give the
// same figures as hourly ones here at a third of the cost, which the race
// detector multiplies.
func TestSimulateAdvisorTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("a 60-day simulation of 2,000 pages: skipped with -short")
	}
	for _, tc := range []struct {
		rates    string
		vsOracle float64
	}{
		{"default", 0.92},
		{"mostly-fast", 0.87},
	} {
		rep, err := Simulate(context.Background(), SimConfig{Pages: 2000, Rates: mustRates(t, tc.rates), Seed: 7, Tick: 3 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]float64{}
		for _, r := range rep.Rows() {
			rows[r.Name] = r.Value
		}
		t.Logf("%s: %v", tc.rates, rows)
		if rows["recrawl_freshness"] < tc.vsOracle || rows["recrawl_vs_nutch"] <= 1 || rows["recrawl_vs_uniform"] <= 1 {
			t.Errorf("%s: %v", tc.rates, rows)
		}
		if h := rows["recrawl_new_hours"]; h < 0 || h > 3 {
			t.Errorf("%s: the new target waited %v hours", tc.rates, h)
		}
	}
}

func TestNutchAdaptiveSchedule(t *testing.T) {
	c := DefaultNutchConfig()
	var p nutchPage
	// Injected and fetched at 0: state unknown, interval unchanged.
	c.schedule(&p, 0, -1, nutchUnknown)
	if p.interval != 30*day || p.fetchTime != 30*day {
		t.Fatalf("first fetch: %+v", p)
	}
	// Changed: interval × (1 - 0.2).
	c.schedule(&p, 30*day, -1, nutchModified)
	if p.interval != 24*day || p.fetchTime != 54*day {
		t.Fatalf("modified: %+v", p)
	}
	// Unchanged, no Last-Modified: interval × 1.4, no shift.
	c.schedule(&p, 54*day, -1, nutchNotModified)
	if math.Abs(p.interval-33.6*day) > 1e-6 || math.Abs(p.fetchTime-(54+33.6)*day) > 1e-6 {
		t.Fatalf("not modified: %+v", p)
	}
	// Unchanged with a Last-Modified 10 days before the fetch: the next
	// fetch moves 0.3 × 10 days earlier.
	q := nutchPage{interval: 10 * day}
	c.schedule(&q, 100*day, 90*day, nutchNotModified)
	if math.Abs(q.interval-14*day) > 1e-6 || math.Abs(q.fetchTime-(100-3+14)*day) > 1 {
		t.Fatalf("sync delta: %+v", q)
	}
	// A delta longer than the interval becomes the interval.
	r := nutchPage{interval: 2 * day}
	c.schedule(&r, 100*day, 80*day, nutchNotModified)
	if r.interval != 20*day {
		t.Fatalf("delta above the interval: %+v", r)
	}
	// Bounds: 60 s and 365 days, and db.fetch.interval.max pulls a page
	// scheduled further than 90 days ahead back to the next generation.
	s := nutchPage{interval: 70}
	c.schedule(&s, 0, -1, nutchModified)
	if s.interval != 60 {
		t.Fatalf("min interval: %+v", s)
	}
	u := nutchPage{interval: 300 * day}
	c.schedule(&u, 0, -1, nutchNotModified)
	if u.interval != math.Round(0.9*90*day) || u.fetchTime != 0 {
		t.Fatalf("beyond db.fetch.interval.max: %+v", u)
	}
}

func TestNutchGeneratorTakesOnlyDuePages(t *testing.T) {
	rep, err := Simulate(context.Background(), SimConfig{Pages: 500, Rates: mustRates(t, "default"), Seed: 8, Policies: []string{PolicyNutch}})
	if err != nil {
		t.Fatal(err)
	}
	nutch := rep.Results[0]
	// 500 pages injected on day 0 with a 30-day interval: the first
	// crawl takes 10 days, then nothing is due until day 30.
	budget := int(rep.Config.Budget * float64(rep.Config.Days))
	if nutch.Fetches >= budget {
		t.Errorf("%d fetches of a budget of %d: the generator should not fill", nutch.Fetches, budget)
	}
	idle := nutch.Daily[25] < nutch.Daily[10]
	if !idle {
		t.Errorf("freshness should decay between the first and second rounds: day 11 %.3f, day 26 %.3f", nutch.Daily[10], nutch.Daily[25])
	}
	fill := DefaultNutchConfig()
	fill.Fill = true
	rep, _ = Simulate(context.Background(), SimConfig{Pages: 500, Rates: mustRates(t, "default"), Seed: 8, Policies: []string{PolicyNutch}, Nutch: &fill})
	if f := rep.Results[0].Fetches; f != budget {
		t.Errorf("with Fill: %d fetches, want the budget %d", f, budget)
	}
}

func TestChart(t *testing.T) {
	rep, err := Simulate(context.Background(), SimConfig{Pages: 200, Days: 20, MeasureFrom: 10, Rates: mustRates(t, "default"), Policies: []string{PolicyUniform, PolicyOracle}})
	if err != nil {
		t.Fatal(err)
	}
	svg := Chart(rep, "a <test> chart")
	var doc struct {
		XMLName   xml.Name `xml:"svg"`
		Polylines []struct {
			Points string `xml:"points,attr"`
		} `xml:"polyline"`
		Texts []string `xml:"text"`
	}
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, svg)
	}
	if len(doc.Polylines) != 2 {
		t.Fatalf("%d lines, want one per policy", len(doc.Polylines))
	}
	for _, p := range doc.Polylines {
		if n := len(strings.Fields(p.Points)); n != 20 {
			t.Errorf("%d points, want one per day", n)
		}
	}
	joined := strings.Join(doc.Texts, "|")
	for _, want := range []string{"a <test> chart", "uniform", "oracle", "days 11–20"} {
		if !strings.Contains(joined, want) {
			t.Errorf("chart lacks %q: %s", want, joined)
		}
	}
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 99)) }

// The known-after bound: told every rate from the first fetch on, it is
// the index policy, fetch for fetch; told them later, it learns as the
// advisor does first.
func TestSimulateKnownAfter(t *testing.T) {
	cfg := SimConfig{Pages: 1500, Rates: mustRates(t, "mostly-fast"), Seed: 6, Days: 30, MeasureFrom: 15,
		Policies: []string{PolicyIndex, PolicyKnownAfter + "1", PolicyKnownAfter + "3", PolicyAdvisor}}
	rep, err := Simulate(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	index, _ := rep.Result(PolicyIndex)
	k1, _ := rep.Result(PolicyKnownAfter + "1")
	k3, _ := rep.Result(PolicyKnownAfter + "3")
	adv, _ := rep.Result(PolicyAdvisor)
	t.Logf("index %.4f, known-after-1 %.4f, known-after-3 %.4f, advisor %.4f", index.Freshness, k1.Freshness, k3.Freshness, adv.Freshness)
	if !slices.Equal(k1.PageFetches, index.PageFetches) || k1.Freshness != index.Freshness {
		t.Errorf("known-after-1 made other fetches than the index policy: freshness %v against %v", k1.Freshness, index.Freshness)
	}
	if slices.Equal(k3.PageFetches, index.PageFetches) || slices.Equal(k3.PageFetches, adv.PageFetches) {
		t.Error("known-after-3 fetched as the index policy or as the advisor: the two rankings were not merged")
	}
	for _, bad := range []string{PolicyKnownAfter + "0", PolicyKnownAfter, PolicyKnownAfter + "x"} {
		if _, err := Simulate(context.Background(), SimConfig{Pages: 10, Policies: []string{bad}}); err == nil || !strings.Contains(err.Error(), "known-after-K") {
			t.Errorf("policy %q: got %v, want an error naming known-after-K", bad, err)
		}
	}
}
