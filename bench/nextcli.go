package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// The recrawl advisor as a crawler's scheduler runs it: `crawlkeeper next`
// in a fresh process, ranking one source of the benchmark's scale, against
// the minimal program that reads the same columns through the same index
// with the engine's driver and ranks them with the same functions of
// package recrawl (rawcli next).

// nextCLIName is the result's name.
const nextCLIName = "next_cli_ms"

// nextSource is the source of the store next_cli_ms ranks.
const nextSource = "next-bench"

// nextBudget and nextLimit are the request timed: ten thousand fetches a
// day, the first hundred pages.
const (
	nextBudget = 10000
	nextLimit  = 100
)

// nextDeliveries are the times, before Now, of the crawls that fill the
// store: every record first, then all of them again and half of them once
// more, a share of each changed, so that the records carry counters of
// their own, as a store crawled for weeks does.
var nextDeliveries = []struct {
	before  time.Duration
	every   int // deliver items i with i%every == 0
	changed int // of those, change items i with i%changed == 0
}{
	{20 * 24 * time.Hour, 1, 0},
	{10 * 24 * time.Hour, 1, 3},
	{2 * 24 * time.Hour, 2, 5},
}

func runNextCLI(ctx context.Context, opts *Options, setup CommandSetup) (Result, error) {
	url, drop, err := setup.Scratch(ctx, "next")
	if err != nil {
		return Result{}, err
	}
	defer drop()
	minimal, err := setup.Minimal(ctx, url)
	if err != nil {
		return notMeasured(nextCLIName, err), nil
	}
	st, err := setup.OpenStore(ctx, url)
	if err != nil {
		return Result{}, err
	}
	var at time.Time
	g := &crawlkeeper.Ingester{Store: st, Config: &crawlkeeper.Config{}, Dates: opts.Dates, Now: func() time.Time { return at }}
	for k, d := range nextDeliveries {
		at = Now.Add(-d.before)
		for from := 0; from < opts.Scale; from += chunk {
			opts.progress(fmt.Sprintf("%s (load %d/%d)", nextCLIName, k+1, len(nextDeliveries)), from, opts.Scale)
			var items []map[string]any
			var metas []crawlkeeper.Meta
			for i := from; i < min(from+chunk, opts.Scale); i++ {
				if i%d.every != 0 {
					continue
				}
				rev := 0
				if d.changed > 0 && i%d.changed == 0 {
					rev = k
				}
				it := Item(i, rev)
				delete(it, "_source")
				delete(it, "_crawled_at")
				items = append(items, it)
				metas = append(metas, crawlkeeper.Meta{Source: nextSource})
			}
			if _, err := g.IngestItems(ctx, items, metas); err != nil {
				st.Close()
				return Result{}, fmt.Errorf("%s (load): %w", nextCLIName, err)
			}
		}
	}
	st.Close()
	now := strconv.FormatInt(Now.UnixMicro(), 10)
	ck := func() ([]string, time.Duration, error) {
		out, d, err := wallTime(ctx, setup.Crawlkeeper, "next", "--store", url, "--source", nextSource,
			"--budget", strconv.Itoa(nextBudget)+"/day", "--limit", strconv.Itoa(nextLimit), "--now", Now.Format(time.RFC3339Nano), "--json")
		if err != nil {
			return nil, d, err
		}
		var plan crawlkeeper.NextPlan
		if err := json.Unmarshal(out, &plan); err != nil {
			return nil, d, fmt.Errorf("next --json printed %q: %w", firstLine(out), err)
		}
		names := make([]string, len(plan.Items))
		for i, it := range plan.Items {
			names[i] = it.Name
		}
		return names, d, nil
	}
	raw := func() ([]string, time.Duration, error) {
		out, d, err := wallTime(ctx, minimal, "next", url, "-source", nextSource, "-budget", strconv.Itoa(nextBudget),
			"-limit", strconv.Itoa(nextLimit), "-now", now)
		if err != nil {
			return nil, d, err
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return lines[:len(lines)-1], d, nil // the last line is the summary
	}
	var times, base []time.Duration
	for round := 0; round < cliWarmups+cliRuns; round++ {
		opts.progress(nextCLIName, round, cliWarmups+cliRuns)
		got, d, err := ck()
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", nextCLIName, err)
		}
		want, db, err := raw()
		if err != nil {
			return Result{}, fmt.Errorf("%s (raw): %w", nextCLIName, err)
		}
		if len(got) != nextLimit || strings.Join(got, "\n") != strings.Join(want, "\n") {
			return Result{}, fmt.Errorf("%s: crawlkeeper next listed %d pages, the raw ranking %d, and they differ (first %q and %q)",
				nextCLIName, len(got), len(want), first(got), first(want))
		}
		if round >= cliWarmups {
			times, base = append(times, d), append(base, db)
		}
	}
	r := Result{Name: nextCLIName, Unit: "ms (p50)", Value: p50(times), Baseline: p50(base), N: cliRuns,
		Target: "baseline/value >= 0.5; value < 100 ms at 100,000 records (SQLite)"}
	if r.Value > 0 {
		r.Ratio = r.Baseline / r.Value
	}
	r.Met = r.Ratio >= 0.5 && r.Value < 100
	return r, nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
