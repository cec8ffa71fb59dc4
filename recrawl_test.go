package crawlkeeper

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper/recrawl"
)

func TestParseBudget(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{
		{"1000", 1000}, {"1000/day", 1000}, {"1,000/day", 1000}, {" 40/hour ", 960}, {"40/h", 960},
		{"7000/week", 1000}, {"300/12h", 600}, {"2/minute", 2880}, {"0.5/day", 0.5}, {"10/2d", 5},
	} {
		got, err := ParseBudget(c.in)
		if err != nil || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("ParseBudget(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "0", "-5/day", "abc", "10/fortnight", "10/0s", "NaN", "Inf/day", "5/"} {
		if _, err := ParseBudget(in); ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), "1000/day") {
			t.Errorf("ParseBudget(%q) = %v, want EINVALID saying how to write one", in, err)
		}
	}
}

// fakeRec is one record of fakeRecrawl.
type fakeRec struct {
	name          RecrawlName
	lastUpdatedAt time.Time
	fetches       *FetchCounts
}

// fakeRecrawl is a RecrawlStore over slices.
type fakeRecrawl struct {
	bySource map[string][]fakeRec
}

func (f *fakeRecrawl) RecrawlRecords(_ context.Context, source string) ([]recrawl.Record, error) {
	var out []recrawl.Record
	for _, r := range f.bySource[source] {
		out = append(out, recrawl.Record{ID: r.name.ID, Stats: RecrawlStats(r.lastUpdatedAt, nil, r.fetches)})
	}
	return out, nil
}

func (f *fakeRecrawl) RecrawlNames(_ context.Context, source string, ids []int64) ([]RecrawlName, error) {
	var out []RecrawlName
	for _, r := range f.bySource[source] {
		if ids == nil || slices.Contains(ids, r.name.ID) {
			out = append(out, r.name)
		}
	}
	return out, nil
}

// remaining is a Monitor that only answers Remaining, from one round.
type remaining struct {
	Monitor
	round string
	names []string
}

func (m remaining) Remaining(_ context.Context, round, after string, limit int) ([]string, error) {
	if round != m.round {
		return nil, Errorf(ENOTFOUND, "round %q not found", round)
	}
	i := 0
	if after != "" {
		for i < len(m.names) && m.names[i] != after {
			i++
		}
		i++
	}
	return m.names[min(i, len(m.names)):min(i+limit, len(m.names))], nil
}

// crawled returns a record delivered daily from now-days to now-1d; it
// changed at every other delivery (fast) or never.
func crawled(id int64, now time.Time, days int, fast bool) fakeRec {
	first := now.Add(-time.Duration(days) * 24 * time.Hour)
	r := fakeRec{name: RecrawlName{ID: id, URL: fmt.Sprintf("https://site.test/%d", id)}, fetches: &FetchCounts{}}
	last := first
	for d := days - 1; d >= 1; d-- {
		at := now.Add(-time.Duration(d) * 24 * time.Hour)
		r.fetches.Add(at.Sub(last), fast && d%2 == 0)
		last = at
	}
	r.lastUpdatedAt = last
	return r
}

func TestAdvisorNext(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	store := &fakeRecrawl{bySource: map[string][]fakeRec{}}
	fast := map[int64]bool{}
	for i := int64(1); i <= 200; i++ {
		r := crawled(i, now, 21, i%2 == 0)
		fast[i] = i%2 == 0
		if i == 7 {
			r.name.Target = "target-7" // the crawler's own name for it
		}
		store.bySource["jobs"] = append(store.bySource["jobs"], r)
	}
	// A record stored before the counters were kept.
	old := crawled(201, now, 21, false)
	old.fetches = nil
	store.bySource["jobs"] = append(store.bySource["jobs"], old)
	adv := &Advisor{Store: store, Now: func() time.Time { return now },
		Monitor: remaining{round: "r1", names: []string{"https://site.test/3", "https://site.test/new-a", "target-7", "https://site.test/new-b"}}}
	ctx := context.Background()

	plan, err := adv.Next(ctx, NextQuery{Source: "jobs", Budget: 100, Limit: 30, Round: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Records != 201 || plan.FromPrior != 1 || plan.Budget != 100 || plan.BudgetFrom != "request" || plan.Targets != 2 {
		t.Fatalf("plan = %+v, want 201 records, 1 from the prior, budget 100 from the request, 2 targets", plan)
	}
	// The round's targets that no record names come first, in its order.
	if len(plan.Items) < 3 || plan.Items[0].Name != "https://site.test/new-a" || plan.Items[1].Name != "https://site.test/new-b" ||
		plan.Items[0].Reason != "never_fetched" || plan.Items[0].ID != 0 {
		t.Fatalf("first items = %+v, want the two targets never fetched", plan.Items[:min(3, len(plan.Items))])
	}
	// Then records: the counters say which pages change; the static ones
	// are not worth a fetch a day after the last.
	due := 0
	for _, it := range plan.Items[2:] {
		if it.ID == 0 || it.URL != fmt.Sprintf("https://site.test/%d", it.ID) || it.Name != it.URL && it.ID != 7 {
			t.Fatalf("item %+v does not carry its record's id, URL and name", it)
		}
		if it.Due {
			due++
			if !fast[it.ID] {
				t.Errorf("static record %d proposed as due: %+v", it.ID, it)
			}
		}
		if it.SinceFetch.D() != 24*time.Hour {
			t.Errorf("record %d: since fetch %v, want 24h", it.ID, it.SinceFetch.D())
		}
	}
	if due == 0 || plan.Due < due {
		t.Fatalf("%d items due of %d listed, plan.Due %d: want the fast records due", due, len(plan.Items), plan.Due)
	}
	if !(plan.FreshNow > 0 && plan.FreshNow < 1) || !(plan.Optimal > 0 && plan.Optimal <= 1) {
		t.Errorf("fresh now %v, optimal %v: want shares in (0,1)", plan.FreshNow, plan.Optimal)
	}

	// The limit caps the list; without a budget the source's pace (every
	// record was delivered within the last 24 hours) is the budget.
	plan, err = adv.Next(ctx, NextQuery{Source: "jobs", Limit: 5, Fill: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Items) != 5 || plan.Budget != 201 || plan.BudgetFrom != "last_day" || plan.Targets != 0 {
		t.Fatalf("plan = %d items, budget %v from %q, %d targets; want 5 items at the pace of 201 a day, no targets", len(plan.Items), plan.Budget, plan.BudgetFrom, plan.Targets)
	}

	// Errors say what to do.
	later := &Advisor{Store: store, Now: func() time.Time { return now.Add(72 * time.Hour) }}
	if _, err := later.Next(ctx, NextQuery{Source: "jobs"}); ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), "--budget") {
		t.Errorf("an idle source without a budget: %v, want EINVALID asking for a budget", err)
	}
	if _, err := adv.Next(ctx, NextQuery{Source: "jobs", Budget: 10, Limit: MaxNextLimit + 1}); ErrorCode(err) != EINVALID {
		t.Errorf("limit over the maximum: %v, want EINVALID", err)
	}
	if _, err := adv.Next(ctx, NextQuery{Source: "jobs", Budget: 10, Round: "nope"}); ErrorCode(err) != ENOTFOUND {
		t.Errorf("an unknown round: %v, want ENOTFOUND", err)
	}
	if _, err := (&Advisor{Store: store}).Next(ctx, NextQuery{Source: "jobs", Budget: 10, Round: "r1"}); ErrorCode(err) != EINVALID {
		t.Errorf("a round without a monitor: %v, want EINVALID", err)
	}
	// An empty source is a source like any other: no records, nothing due.
	plan, err = adv.Next(ctx, NextQuery{Source: "", Budget: 10})
	if err != nil || plan.Records != 0 || len(plan.Items) != 0 {
		t.Fatalf("the empty source: %+v, %v; want an empty plan", plan, err)
	}
}

func TestAdvisorFreshness(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	store := &fakeRecrawl{bySource: map[string][]fakeRec{}}
	for i := int64(1); i <= 300; i++ {
		store.bySource["jobs"] = append(store.bySource["jobs"], crawled(i, now, 15, i%3 == 0))
		store.bySource["idle"] = append(store.bySource["idle"], crawled(1000+i, now.Add(-30*24*time.Hour), 15, i%3 == 0))
	}
	adv := &Advisor{Store: store, Now: func() time.Time { return now }}
	got, err := adv.FreshnessAll(context.Background(), []string{"jobs", "idle"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Source != "idle" || got[1].Source != "jobs" {
		t.Fatalf("FreshnessAll = %+v, want idle then jobs", got)
	}
	jobs, idle := got[1], got[0]
	if jobs.Budget != 300 || jobs.BudgetFrom != "last_day" || len(jobs.Curve) != len(curveFactors) {
		t.Fatalf("jobs = %+v, want its pace of 300 a day and a curve of %d points", jobs, len(curveFactors))
	}
	for i := 1; i < len(jobs.Curve); i++ {
		if jobs.Curve[i].Budget <= jobs.Curve[i-1].Budget || jobs.Curve[i].Freshness < jobs.Curve[i-1].Freshness-1e-9 {
			t.Fatalf("curve %+v: budgets must rise and freshness never fall", jobs.Curve)
		}
	}
	if jobs.Optimal <= 0 || jobs.Optimal > 1 || jobs.FreshNow <= 0 || jobs.FreshNow > 1 {
		t.Errorf("jobs: fresh now %v, optimal %v", jobs.FreshNow, jobs.Optimal)
	}
	// An idle source is shown all the same, over budgets from a recrawl
	// every 60 days to every day, and its copies have aged: less fresh.
	if idle.BudgetFrom != "idle" || idle.Budget != 0 || idle.Optimal != 0 || len(idle.Curve) == 0 || idle.Curve[len(idle.Curve)-1].Budget != 300 {
		t.Fatalf("idle = %+v, want an idle source with a curve up to a fetch a day per record", idle)
	}
	if idle.FreshNow >= jobs.FreshNow {
		t.Errorf("idle source fresh now %v ≥ the crawled one's %v", idle.FreshNow, jobs.FreshNow)
	}
}
