package main

import (
	"context"
	"flag"
	"fmt"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func init() {
	register(&command{name: "next", summary: "what to crawl next: a source's pages ranked by the freshness a fetch buys", run: runNext})
}

// nextFlags are the advisor's flags, shared by next and round queue --next.
type nextFlags struct {
	source *string
	budget *string
	fill   *bool
	fs     *flag.FlagSet
}

func addNextFlags(fs *flag.FlagSet) *nextFlags {
	return &nextFlags{
		fs:     fs,
		source: fs.String("source", "", "the `source` whose records to rank (required; '' is the empty source name)"),
		budget: fs.String("budget", "", "the crawl's `budget`: fetches per day, like 1000/day, 40/hour or 5000/week (default: the source's deliveries in the last 24 hours)"),
		fill:   fs.Bool("fill", false, "top the list up to the limit with the records closest to due when fewer are due"),
	}
}

// query checks the flags and returns the advisor's query.
func (n *nextFlags) query(limit int) (crawlkeeper.NextQuery, error) {
	set := false
	n.fs.Visit(func(f *flag.Flag) { set = set || f.Name == "source" })
	if !set {
		return crawlkeeper.NextQuery{}, usagef("--source is required: the advisor ranks one source's records")
	}
	q := crawlkeeper.NextQuery{Source: *n.source, Limit: limit, Fill: *n.fill}
	if *n.budget != "" {
		b, err := crawlkeeper.ParseBudget(*n.budget)
		if err != nil {
			return q, usagef("--budget: %s", crawlkeeper.ErrorMessage(err))
		}
		q.Budget = b
	}
	if limit < 1 || limit > crawlkeeper.MaxNextLimit {
		return q, usagef("the limit must be 1 to %d (got %d)", crawlkeeper.MaxNextLimit, limit)
	}
	return q, nil
}

// advisor returns the recrawl advisor on the environment's store; with a
// round it opens the monitor too, which a plain ranking does without.
func (e *env) advisor(ctx context.Context, round string) (*crawlkeeper.Advisor, error) {
	adv := &crawlkeeper.Advisor{Store: e.store, Now: e.a.now}
	if round != "" {
		m, err := e.monitor(ctx)
		if err != nil {
			return nil, err
		}
		adv.Monitor = m
	}
	return adv, nil
}

func runNext(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("next", "next --source S [--budget N/day] [--limit K] [--round R] [--fill]")
	nf := addNextFlags(fs)
	limit := fs.Int("limit", crawlkeeper.DefaultNextLimit, "list at most `K` pages")
	round := fs.String("round", "", "put this `round`'s remaining targets that no record names first: pages never fetched")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("next takes no arguments (got %q)", pos[0])
	}
	q, err := nf.query(*limit)
	if err != nil {
		return err
	}
	if q.Round = *round; q.Round != "" {
		if err := crawlkeeper.ValidateRound(q.Round); err != nil {
			return usagef("--round: %s", crawlkeeper.ErrorMessage(err))
		}
	}
	// The command's heap is the source's records, read at once and live
	// until it exits: collecting while they are read frees nothing. Four
	// times the live heap between collections took 100,000 records from
	// 98 to 90 ms, for 7 MB more at the peak.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	env, err := a.openEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	plan, err := env.next(ctx, q)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(plan)
	}
	printPlan(a, plan)
	return nil
}

// next answers q with the advisor; a source with nothing to rank is an
// error, as a mistyped source name would otherwise print an empty plan
// that reads as "all fresh".
func (e *env) next(ctx context.Context, q crawlkeeper.NextQuery) (*crawlkeeper.NextPlan, error) {
	adv, err := e.advisor(ctx, q.Round)
	if err != nil {
		return nil, err
	}
	plan, err := adv.Next(ctx, q)
	if err != nil {
		return nil, err
	}
	if plan.Records == 0 && plan.Targets == 0 {
		return nil, unknownSource(ctx, e.store, q.Source)
	}
	return plan, nil
}

// unknownSource is the error for a source without active records: it
// names the sources that have some (the first 10, by name).
func unknownSource(ctx context.Context, st crawlkeeper.Store, source string) error {
	msg := fmt.Sprintf("source %q has no active records to rank", source)
	if stats, err := st.Stats(ctx); err == nil {
		names := make([]string, 0, len(stats.Sources))
		for n, ss := range stats.Sources {
			if ss.Active > 0 {
				names = append(names, strconv.Quote(n))
			}
		}
		sort.Strings(names)
		if len(names) > 10 {
			names = append(names[:10], "...")
		}
		if len(names) > 0 {
			msg += "; sources with records: " + strings.Join(names, ", ")
		}
	}
	return crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "%s (names are exact; give --round R to rank a round's targets never fetched)", msg)
}

// printPlan writes the advisor's plan as a summary line and a table.
func printPlan(a *app, p *crawlkeeper.NextPlan) {
	from := "given"
	if p.BudgetFrom == "last_day" {
		from = "its pace over the last 24 hours"
	}
	fmt.Fprintf(a.stdout, "source %q: %s (%d estimated from the source alone), %d due now, budget %.0f/day (%s)\n",
		p.Source, plural(p.Records, "active record"), p.FromPrior, p.Due, p.Budget, from)
	fmt.Fprintf(a.stdout, "fresh now about %s; the budget keeps at best %s\n", percent(p.FreshNow), percent(p.Optimal))
	if len(p.Items) == 0 {
		fmt.Fprintln(a.stdout, "nothing to fetch now (--fill lists the records closest to due)")
		return
	}
	fmt.Fprintf(a.stdout, "\n%-16s %12s %12s %6s  %s\n", "REASON", "CHANGES", "SINCE FETCH", "STALE", "NAME")
	for _, it := range p.Items {
		reason := it.Reason
		if it.Probe {
			reason += "*"
		}
		if !it.Due {
			reason += " (fill)"
		}
		name := it.Name
		if it.URL != "" && it.URL != it.Name {
			// The target a crawler named, then the page it fetched.
			name += "  " + it.URL
		}
		fmt.Fprintf(a.stdout, "%-16s %12s %12s %6s  %s\n", reason, every(it.ChangeInterval), since(it.SinceFetch, it.ID), percent0(it.Stale), name)
	}
	if hasProbe(p.Items) {
		fmt.Fprintln(a.stdout, "\n* a probe: every fetch so far found a change, and this one tells whether the page changes too fast to keep fresh")
	}
}

func hasProbe(items []crawlkeeper.NextItem) bool {
	for _, it := range items {
		if it.Probe {
			return true
		}
	}
	return false
}

// every writes an estimated change interval; a page estimated never to
// change, or never fetched, has none.
func every(d crawlkeeper.Duration) string {
	if d <= 0 {
		return "-"
	}
	return "every " + shortDuration(d.D())
}

func since(d crawlkeeper.Duration, id int64) string {
	if id == 0 {
		return "never"
	}
	return shortDuration(d.D())
}

// shortDuration writes d in its largest unit with one decimal at most:
// 3.5d, 12h, 40m, 20s.
func shortDuration(d time.Duration) string {
	units := []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}}
	for _, u := range units {
		if d >= u.d {
			v := float64(d) / float64(u.d)
			if v >= 10 {
				return fmt.Sprintf("%.0f%s", v, u.name)
			}
			return fmt.Sprintf("%.1f%s", v, u.name)
		}
	}
	return fmt.Sprintf("%.0fs", d.Seconds())
}

func percent0(rate float64) string { return fmt.Sprintf("%.0f%%", 100*rate) }

// queueNext queues in round r the pages the advisor ranks first: the
// round's own targets never fetched lead (they are queued already and
// count towards the limit), then the source's records by the freshness a
// fetch buys. The round's done, failed and remaining then apply as to any
// round.
func queueNext(ctx context.Context, a *app, r string, bucket time.Duration, q crawlkeeper.NextQuery) error {
	env, err := a.openEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	m, err := env.monitor(ctx)
	if err != nil {
		return err
	}
	if _, err := m.Status(ctx, r); err == nil {
		q.Round = r
	} else if crawlkeeper.ErrorCode(err) != crawlkeeper.ENOTFOUND {
		return err
	}
	plan, err := env.next(ctx, q)
	if err != nil {
		return err
	}
	// Records that share a target (a listing page's items) queue it once.
	names := make([]string, 0, len(plan.Items))
	seen := make(map[string]bool, len(plan.Items))
	for _, it := range plan.Items {
		if !seen[it.Name] {
			seen[it.Name] = true
			names = append(names, it.Name)
		}
	}
	res := &crawlkeeper.QueueResult{}
	if len(names) > 0 {
		if res, err = m.Queue(ctx, crawlkeeper.QueueRequest{Round: r, Targets: names, Bucket: bucket, At: a.now()}); err != nil {
			return err
		}
	}
	if a.json {
		return a.printJSON(struct {
			*crawlkeeper.QueueResult
			Plan *crawlkeeper.NextPlan `json:"plan"`
		}{res, plan})
	}
	fmt.Fprintf(a.stdout, "queued %s from the advisor in round %s (%d never fetched, %d due of %s of source %q; %d queued in all)\n",
		plural(res.Queued, "target"), r, plan.Targets, plan.Due, plural(plan.Records, "record"), plan.Source, res.Total)
	return nil
}
