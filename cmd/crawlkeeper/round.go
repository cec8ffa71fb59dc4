package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func init() {
	register(&command{name: "round", summary: "crawl rounds: queue, done, fail, status, remaining, failed, diff, list, merge", run: runRound,
		subs: []string{"queue", "done", "fail", "status", "remaining", "failed", "diff", "list", "merge"}})
}

const roundUsage = `round SUBCOMMAND --round R [flags]

Subcommands:
  queue --round R [--bucket 30m] [FILE|-]      queue target names (one per line)
  queue --round R --next K --source S [--budget N/day] [--fill]
                                               queue what the recrawl advisor ranks first
  done --round R [--file F | NAME...]          mark targets done
  fail --round R [--reason T] [--file F | NAME...]
                                               mark targets failed, with a reason
  status --round R                             progress and throughput per bucket
  remaining --round R [--limit N] [--after T]  names not done or failed, paged
  failed --round R [--also S | --done-later] [--reasons] [--limit N] [--after T | --all]
                                               names that failed (and why), paged
  diff --round A --vs B [--limit N] [--after T] targets done in one round only
  list                                         every round with its counts
  merge                                        fold finished buckets now (serve does this)`

var roundSubs = map[string]func(ctx context.Context, a *app, args []string) error{
	"queue":     runRoundQueue,
	"done":      func(ctx context.Context, a *app, args []string) error { return runRoundMark(ctx, a, "done", args) },
	"fail":      func(ctx context.Context, a *app, args []string) error { return runRoundMark(ctx, a, "fail", args) },
	"status":    runRoundStatus,
	"remaining": runRoundRemaining,
	"failed":    runRoundFailed,
	"diff":      runRoundDiff,
	"list":      runRoundList,
	"merge":     runRoundMerge,
}

func runRound(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		fmt.Fprintf(a.stderr, "Usage: crawlkeeper %s\n", roundUsage)
		return usagef("round needs a subcommand")
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(a.stdout, "Usage: crawlkeeper %s\n", roundUsage)
		return nil
	}
	sub, ok := roundSubs[args[0]]
	if !ok {
		return usagef("unknown round subcommand %q: use queue, done, fail, status, remaining, failed, diff, list or merge", args[0])
	}
	return sub(ctx, a, args[1:])
}

// roundFlag registers --round and returns a function that checks it.
func roundFlag(fs interface {
	String(name, value, usage string) *string
}, name string) func() (string, error) {
	v := fs.String(name, "", "crawl `round`")
	return func() (string, error) {
		if *v == "" {
			return "", usagef("--%s is required", name)
		}
		if err := crawlkeeper.ValidateRound(*v); err != nil {
			return "", usagef("--%s: %s", name, crawlkeeper.ErrorMessage(err))
		}
		return *v, nil
	}
}

// withMonitor opens the environment and the monitor for one command that
// reads or works on what the store holds: the store must exist.
func withMonitor(ctx context.Context, a *app, fn func(m crawlkeeper.Monitor) error) error {
	return withMonitorOf(ctx, a.openEnv, fn)
}

// withNewMonitor is withMonitor for the commands that bring targets in
// (round queue, done and fail): it creates the store when there is none.
func withNewMonitor(ctx context.Context, a *app, fn func(m crawlkeeper.Monitor) error) error {
	return withMonitorOf(ctx, a.createEnv, fn)
}

func withMonitorOf(ctx context.Context, open func(context.Context) (*env, error), fn func(m crawlkeeper.Monitor) error) error {
	env, err := open(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	m, err := env.monitor(ctx)
	if err != nil {
		return err
	}
	return fn(m)
}

// readNames reads target names, one per line; blank lines are skipped and
// surrounding white space is trimmed. fn gets them in batches of size.
func readNames(r io.Reader, size int, fn func([]string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	batch := make([]string, 0, size)
	line := 0
	for sc.Scan() {
		line++
		n := strings.TrimSpace(sc.Text())
		if n == "" {
			continue
		}
		if err := crawlkeeper.ValidateTarget(n); err != nil {
			return crawlkeeper.Errorf(crawlkeeper.EINVALID, "line %d: %s", line, crawlkeeper.ErrorMessage(err))
		}
		batch = append(batch, n)
		if len(batch) == size {
			if err := fn(batch); err != nil {
				return err
			}
			batch = make([]string, 0, size)
		}
	}
	if err := sc.Err(); err != nil {
		return crawlkeeper.Errorf(crawlkeeper.EINVALID, "read target names: %v", err)
	}
	if len(batch) > 0 {
		return fn(batch)
	}
	return nil
}

// openInput opens a FILE argument; "-" or none is standard input.
func (a *app) openInput(name string) (io.Reader, func(), error) {
	if name == "" || name == "-" {
		return a.stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "open %s: %v", name, err)
	}
	return f, func() { f.Close() }, nil
}

func runRoundQueue(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("round queue", "round queue --round R [--bucket 30m] [FILE|-]\n       round queue --round R --next K --source S [--budget N/day] [--fill] [--bucket 30m]")
	round := roundFlag(fs, "round")
	bucketText := fs.String("bucket", "", "bucket `length` of a new round (default: monitor.bucket, 10m)")
	next := fs.Int("next", 0, "queue the `K` pages the recrawl advisor ranks first for --source (see next) instead of names read")
	nf := addNextFlags(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	r, err := round()
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("round queue takes one FILE (or - for standard input), got %d arguments", len(pos))
	}
	var bucket time.Duration
	if *bucketText != "" {
		d, err := crawlkeeper.ParseDuration(*bucketText)
		if err != nil {
			return usagef("--bucket: %v", err)
		}
		if err := crawlkeeper.ValidateBucket(d.D()); err != nil {
			return usagef("--bucket: %s", crawlkeeper.ErrorMessage(err))
		}
		bucket = d.D()
	}
	if *next != 0 {
		if len(pos) > 0 {
			return usagef("round queue --next queues what the advisor ranks: give no FILE")
		}
		q, err := nf.query(*next)
		if err != nil {
			return err
		}
		return queueNext(ctx, a, r, bucket, q)
	}
	in, closeIn, err := a.openInput(first(pos))
	if err != nil {
		return err
	}
	defer closeIn()
	var names []string
	if err := readNames(in, 100000, func(b []string) error { names = append(names, b...); return nil }); err != nil {
		return err
	}
	return withNewMonitor(ctx, a, func(m crawlkeeper.Monitor) error {
		res, err := m.Queue(ctx, crawlkeeper.QueueRequest{Round: r, Targets: names, Bucket: bucket, At: a.now()})
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(res)
		}
		fmt.Fprintf(a.stdout, "queued %s in round %s (%d new to the dictionary, %d queued in all)\n", plural(res.Queued, "target"), r, res.NewTargets, res.Total)
		return nil
	})
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// markResult is what round done and round fail print.
type markResult struct {
	Round  string `json:"round"`
	Kind   string `json:"kind"`
	Marked int    `json:"marked"`
}

func runRoundMark(ctx context.Context, a *app, verb string, args []string) error {
	usage := "round " + verb + " --round R [--file F | NAME...]"
	if verb == "fail" {
		usage = "round fail --round R [--reason TEXT] [--file F | NAME...]"
	}
	fs := a.newFlags("round "+verb, usage)
	round := roundFlag(fs, "round")
	var reason *string
	if verb == "fail" {
		reason = fs.String("reason", "", "why the targets failed (\"HTTP 503\"), kept with each and listed by round failed")
	}
	file := fs.String("file", "", "read target names from `file`, one per line (- for standard input)")
	batch := fs.Int("batch", 10000, "marks per write")
	progress := fs.Bool("progress", false, "print a line after each acknowledged batch (marks already durable)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	r, err := round()
	if err != nil {
		return err
	}
	if (*file == "") == (len(pos) == 0) {
		return usagef("round %s needs target NAMEs or --file F, not both", verb)
	}
	if *batch <= 0 {
		return usagef("--batch must be positive")
	}
	kind := crawlkeeper.MarkDone
	why := ""
	if verb == "fail" {
		kind = crawlkeeper.MarkFailed
		why = crawlkeeper.CleanReason(*reason)
	}
	return withNewMonitor(ctx, a, func(m crawlkeeper.Monitor) error {
		res := markResult{Round: r, Kind: string(kind)}
		mark := func(names []string) error {
			at := a.now()
			marks := make([]crawlkeeper.Mark, len(names))
			for i, n := range names {
				marks[i] = crawlkeeper.Mark{Round: r, Target: n, Kind: kind, At: at, Reason: why}
			}
			n, err := m.Mark(ctx, marks)
			if err != nil {
				return fmt.Errorf("after %d acknowledged marks: %w", res.Marked, err)
			}
			res.Marked += n
			if *progress {
				fmt.Fprintf(a.stdout, "acknowledged %d\n", res.Marked)
			}
			return nil
		}
		if *file != "" {
			in, closeIn, err := a.openInput(*file)
			if err != nil {
				return err
			}
			defer closeIn()
			if err := readNames(in, *batch, mark); err != nil {
				return err
			}
		} else {
			for _, n := range pos {
				if err := crawlkeeper.ValidateTarget(n); err != nil {
					return usagef("%s", crawlkeeper.ErrorMessage(err))
				}
			}
			if err := mark(pos); err != nil {
				return err
			}
		}
		if a.json {
			return a.printJSON(res)
		}
		fmt.Fprintf(a.stdout, "marked %s %s in round %s\n", plural(res.Marked, "target"), kind, r)
		return nil
	})
}

func runRoundStatus(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("round status", "round status --round R")
	round := roundFlag(fs, "round")
	if _, err := a.parse(fs, args); err != nil {
		return err
	}
	r, err := round()
	if err != nil {
		return err
	}
	return withMonitor(ctx, a, func(m crawlkeeper.Monitor) error {
		st, err := m.Status(ctx, r)
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(st)
		}
		pct := 0.0
		if st.Queued > 0 {
			pct = 100 * float64(st.Queued-st.Remaining) / float64(st.Queued)
		}
		fmt.Fprintf(a.stdout, "round %s: %d queued, %d done, %d failed, %d remaining (%.1f%% finished)\n", st.Round, st.Queued, st.Done, st.Failed, st.Remaining, pct)
		fmt.Fprintf(a.stdout, "sets take %d bytes, kept bucket sets %d bytes; buckets of %s:\n", st.Bytes, st.BucketBytes, st.Bucket)
		for _, b := range st.Buckets {
			state := "open"
			if b.Dropped {
				state = "merged, set dropped"
			} else if b.Merged {
				state = "merged"
			}
			fmt.Fprintf(a.stdout, "  %s  %8d done  (%s)\n", b.Start.Format(time.RFC3339), b.Done, state)
		}
		return nil
	})
}

func runRoundRemaining(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("round remaining", "round remaining --round R [--limit N] [--after NAME]")
	round := roundFlag(fs, "round")
	limit := fs.Int("limit", crawlkeeper.DefaultRemainingLimit, "names per page (at most 100000)")
	after := fs.String("after", "", "start after the target `name` (the last one of the previous page)")
	if _, err := a.parse(fs, args); err != nil {
		return err
	}
	r, err := round()
	if err != nil {
		return err
	}
	return withMonitor(ctx, a, func(m crawlkeeper.Monitor) error {
		names, err := m.Remaining(ctx, r, *after, *limit)
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(map[string]any{"round": r, "names": names})
		}
		w := bufio.NewWriter(a.stdout)
		for _, n := range names {
			fmt.Fprintln(w, n)
		}
		return w.Flush()
	})
}

func runRoundFailed(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("round failed", "round failed --round R [--also S | --done-later] [--reasons] [--limit N] [--after NAME | --all]")
	round := roundFlag(fs, "round")
	also := fs.String("also", "", "only targets that failed in `round` S too")
	doneLater := fs.Bool("done-later", false, "only targets that a round created later did (failures since recovered)")
	reasons := fs.Bool("reasons", false, "print each name's reason after a tab (with --also, then the reason in S; with --done-later, then the round that did it)")
	limit := fs.Int("limit", crawlkeeper.DefaultRemainingLimit, "names per page (at most 100000)")
	after := fs.String("after", "", "start after the target `name` (the last one of the previous page)")
	all := fs.Bool("all", false, "every page, for piping into round queue")
	if _, err := a.parse(fs, args); err != nil {
		return err
	}
	r, err := round()
	if err != nil {
		return err
	}
	if *also != "" {
		if err := crawlkeeper.ValidateRound(*also); err != nil {
			return usagef("--also: %s", crawlkeeper.ErrorMessage(err))
		}
	}
	if *all && *after != "" {
		return usagef("--all starts at the first page: leave out --after")
	}
	if *limit <= 0 {
		return usagef("--limit must be positive")
	}
	return withMonitor(ctx, a, func(m crawlkeeper.Monitor) error {
		q := crawlkeeper.FailedQuery{Round: r, Also: *also, DoneLater: *doneLater, After: *after, Limit: *limit}
		w := bufio.NewWriter(a.stdout)
		defer w.Flush()
		var pages []*crawlkeeper.FailedPage
		for {
			page, err := m.Failed(ctx, q)
			if err != nil {
				return err
			}
			if a.json && !*all {
				return a.printJSON(page)
			}
			pages = append(pages, page)
			if !a.json {
				for _, t := range page.Targets {
					w.WriteString(t.Target)
					if *reasons {
						fmt.Fprintf(w, "\t%s", t.Reason)
						if *also != "" {
							fmt.Fprintf(w, "\t%s", t.AlsoReason)
						}
						if *doneLater {
							fmt.Fprintf(w, "\t%s", t.DoneIn)
						}
					}
					w.WriteByte('\n')
				}
				pages = pages[:0]
			}
			if !*all || page.Next == "" {
				break
			}
			q.After = page.Next
		}
		if a.json {
			// --all --json: one page holding every target.
			whole := *pages[0]
			whole.Next = ""
			for _, p := range pages[1:] {
				whole.Targets = append(whole.Targets, p.Targets...)
			}
			w.Flush()
			return a.printJSON(&whole)
		}
		return w.Flush()
	})
}

func runRoundDiff(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("round diff", "round diff --round A --vs B [--limit N] [--after NAME]")
	round := roundFlag(fs, "round")
	vs := roundFlag(fs, "vs")
	limit := fs.Int("limit", crawlkeeper.DefaultRemainingLimit, "names per side and page")
	after := fs.String("after", "", "list names after the target `name`")
	if _, err := a.parse(fs, args); err != nil {
		return err
	}
	ra, err := round()
	if err != nil {
		return err
	}
	rb, err := vs()
	if err != nil {
		return err
	}
	return withMonitor(ctx, a, func(m crawlkeeper.Monitor) error {
		d, err := m.Diff(ctx, ra, rb, *after, *limit)
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(d)
		}
		fmt.Fprintf(a.stdout, "done in %s but not in %s: %d\n", ra, rb, d.OnlyRound.Count)
		for _, n := range d.OnlyRound.Names {
			fmt.Fprintf(a.stdout, "  %s\n", n)
		}
		fmt.Fprintf(a.stdout, "done in %s but not in %s: %d\n", rb, ra, d.OnlyVs.Count)
		for _, n := range d.OnlyVs.Names {
			fmt.Fprintf(a.stdout, "  %s\n", n)
		}
		return nil
	})
}

func runRoundList(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("round list", "round list")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("round list takes no arguments")
	}
	return withMonitor(ctx, a, func(m crawlkeeper.Monitor) error {
		rounds, err := m.Rounds(ctx)
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(rounds)
		}
		if len(rounds) == 0 {
			fmt.Fprintln(a.stdout, "no rounds yet: queue one with `crawlkeeper round queue --round R FILE`")
			return nil
		}
		fmt.Fprintf(a.stdout, "%-20s %-20s %10s %10s %10s %10s\n", "ROUND", "CREATED", "QUEUED", "DONE", "FAILED", "REMAINING")
		for _, r := range rounds {
			fmt.Fprintf(a.stdout, "%-20s %-20s %10d %10d %10d %10d\n", r.Round, r.CreatedAt.Format(time.RFC3339), r.Queued, r.Done, r.Failed, r.Remaining)
		}
		return nil
	})
}

func runRoundMerge(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("round merge", "round merge")
	if _, err := a.parse(fs, args); err != nil {
		return err
	}
	return withMonitor(ctx, a, func(m crawlkeeper.Monitor) error {
		res, err := m.MergeBuckets(ctx, a.now())
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(res)
		}
		fmt.Fprintf(a.stdout, "merged %s, dropped %s\n", plural(res.Merged, "bucket"), plural(res.Dropped, "bucket set"))
		return nil
	})
}
