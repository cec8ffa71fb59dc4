package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// CommandSetup is what the whole-path results need: they run crawlkeeper's
// commands as a user runs them, each in a fresh process, against a
// minimal program that does the same store work with the engine's driver
// alone, also in a fresh process. The command provides them.
type CommandSetup struct {
	// Crawlkeeper is the crawlkeeper executable the results run.
	Crawlkeeper string
	// Scratch creates an empty scratch store and returns its URL and a
	// function that removes it.
	Scratch func(ctx context.Context, name string) (url string, drop func(), err error)
	// OpenStore opens the store at url in this process, to fill it.
	OpenStore func(ctx context.Context, url string) (crawlkeeper.Store, error)
	// Minimal returns the minimal program for the engine of the store at
	// url (built for it), or an error saying why there is none; the
	// results are then reported as not measured, with that error.
	Minimal func(ctx context.Context, url string) (string, error)
}

// Commands is the measurement of the whole-path results:
//   - cli_start_ms: the wall time of `crawlkeeper version`;
//   - cli_stats_ms: the wall time of `crawlkeeper stats` on a store of
//     1,000 records;
//   - search_cli_ms: the wall time of `crawlkeeper search` on the search
//     corpus at the benchmark's scale, against the minimal program
//     running the raw full-text query of search_p50;
//   - archive_pass_ms, archive_pass_dry_ms and archive_pass_rss_mb: a
//     whole `crawlkeeper archive` pass, real and dry, at the benchmark's
//     scale with 2% due, against the raw indexed selection and move, and
//     the pass's peak memory (see archivepass.go);
//   - next_cli_ms: the wall time of `crawlkeeper next` ranking a source of
//     the benchmark's scale, against the raw read and the same ranking
//     (see nextcli.go).
//
// The first two are compared with the minimal program opening the same
// store and printing its count. Each is the median of fresh processes,
// the command and its baseline run in turn.
func Commands(setup CommandSetup) Measurement {
	return Measurement{Names: append([]string{"cli_start_ms", "cli_stats_ms", "search_cli_ms", nextCLIName}, ArchivePassNames...), Run: func(ctx context.Context, env *Env) ([]Result, error) {
		return runCommands(ctx, env, setup)
	}}
}

// cliRuns is how many times each command is timed, after cliWarmups runs
// that fill the page cache.
const (
	cliRuns    = 21
	cliWarmups = 3
	// cliStoreRecords is the size of the small store of cli_stats_ms.
	cliStoreRecords = 1000
	// cliQueries is how many searches search_cli_ms times.
	cliQueries = 40
)

func runCommands(ctx context.Context, env *Env, setup CommandSetup) ([]Result, error) {
	opts := &env.Options
	var results []Result
	if opts.want("cli_start_ms", "cli_stats_ms") {
		rs, err := runCLIStart(ctx, opts, setup)
		if err != nil {
			return nil, err
		}
		results = append(results, rs...)
	}
	if opts.want("search_cli_ms") {
		r, err := runSearchCLI(ctx, opts, setup)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	if opts.want(nextCLIName) {
		r, err := runNextCLI(ctx, opts, setup)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	if opts.want(ArchivePassNames...) {
		rs, err := runArchivePass(ctx, opts, setup)
		if err != nil {
			return nil, err
		}
		results = append(results, rs...)
	}
	return results, nil
}

// notMeasured is a whole-path result that could not run, saying why.
func notMeasured(name string, err error) Result {
	return noTarget(Result{Name: name, Unit: "ms (p50)"}, "not measured: "+err.Error())
}

// wallTime runs a program in a fresh process and returns its standard
// output and the time from its start to its exit.
func wallTime(ctx context.Context, path string, args ...string) ([]byte, time.Duration, error) {
	return runTimed(exec.CommandContext(ctx, path, args...))
}

// runTimed runs cmd and returns its standard output and its wall time.
func runTimed(cmd *exec.Cmd) ([]byte, time.Duration, error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return nil, d, fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, bytes.TrimSpace(errb.Bytes()))
	}
	return out.Bytes(), d, nil
}

func runCLIStart(ctx context.Context, opts *Options, setup CommandSetup) ([]Result, error) {
	url, drop, err := setup.Scratch(ctx, "cli")
	if err != nil {
		return nil, err
	}
	defer drop()
	minimal, err := setup.Minimal(ctx, url)
	if err != nil {
		return []Result{notMeasured("cli_start_ms", err), notMeasured("cli_stats_ms", err)}, nil
	}
	st, err := setup.OpenStore(ctx, url)
	if err != nil {
		return nil, err
	}
	g := &crawlkeeper.Ingester{Store: st, Config: &crawlkeeper.Config{}, Dates: opts.Dates, Now: func() time.Time { return Now }}
	_, err = g.Ingest(ctx, bytesReader(NDJSON(0, cliStoreRecords, 0)), crawlkeeper.Meta{})
	st.Close()
	if err != nil {
		return nil, fmt.Errorf("cli_stats_ms (load): %w", err)
	}
	wantCount := strconv.Itoa(cliStoreRecords)
	steps := []struct {
		args  []string
		check func(out string) bool
		times []time.Duration
	}{
		{args: []string{"version"}, check: func(out string) bool { return strings.HasPrefix(out, "crawlkeeper ") }},
		{args: []string{"stats", "--store", url}, check: func(out string) bool { return strings.HasPrefix(out, "active "+wantCount+" ") }},
		{args: []string{"count", url}, check: func(out string) bool { return strings.TrimSpace(out) == wantCount }},
	}
	for round := 0; round < cliWarmups+cliRuns; round++ {
		opts.progress("cli_start_ms", round, cliWarmups+cliRuns)
		// Each round starts with another step, so that no step always
		// follows the same one.
		for k := range steps {
			s := &steps[(round+k)%len(steps)]
			path := setup.Crawlkeeper
			if s.args[0] == "count" {
				path = minimal
			}
			out, d, err := wallTime(ctx, path, s.args...)
			if err != nil {
				return nil, fmt.Errorf("cli_start_ms: %w", err)
			}
			if !s.check(string(out)) {
				return nil, fmt.Errorf("cli_start_ms: %s %s printed %q, not what it should on a store of %d records", path, strings.Join(s.args, " "), firstLine(out), cliStoreRecords)
			}
			if round >= cliWarmups {
				s.times = append(s.times, d)
			}
		}
	}
	base := p50(steps[2].times)
	target := "baseline/value >= 0.5; value <= 30 ms"
	var results []Result
	for i, name := range []string{"cli_start_ms", "cli_stats_ms"} {
		r := Result{Name: name, Unit: "ms (p50)", Value: p50(steps[i].times), Baseline: base, N: cliRuns, Target: target}
		if r.Value > 0 {
			r.Ratio = r.Baseline / r.Value
		}
		r.Met = r.Ratio >= 0.5 && r.Value <= 30
		results = append(results, r)
	}
	return results, nil
}

func runSearchCLI(ctx context.Context, opts *Options, setup CommandSetup) (Result, error) {
	active := opts.Scale
	url, drop, err := setup.Scratch(ctx, "search-cli")
	if err != nil {
		return Result{}, err
	}
	defer drop()
	minimal, err := setup.Minimal(ctx, url)
	if err != nil {
		return notMeasured("search_cli_ms", err), nil
	}
	st, err := setup.OpenStore(ctx, url)
	if err != nil {
		return Result{}, err
	}
	if r, ok := st.(crawlkeeper.SearchIndexReporter); ok && r.SearchWithoutIndex() != "" {
		st.Close()
		return notMeasured("search_cli_ms", fmt.Errorf("%s", r.SearchWithoutIndex())), nil
	}
	_, isSQLite := st.(interface{ Path() string })
	raw, err := opts.raw(st)
	if err == nil {
		err = loadSearchCorpus(ctx, opts, raw, active, 0)
	}
	st.Close()
	if err != nil {
		return Result{}, fmt.Errorf("search_cli_ms (load): %w", err)
	}
	queries := searchQueries(cliQueries, active)
	var value, baseline []time.Duration
	for i := -cliWarmups; i < len(queries); i++ {
		opts.progress("search_cli_ms", max(i, 0), len(queries))
		q := queries[max(i, 0)]
		args := []string{"search", "--store", url, "--limit", strconv.Itoa(q.Limit)}
		rawArgs := []string{"search", url, "-limit", strconv.Itoa(q.Limit)}
		if q.Source != "" {
			args = append(args, "--source", q.Source)
			rawArgs = append(rawArgs, "-source", q.Source)
		}
		if q.Phrase {
			rawArgs = append(rawArgs, "-phrase")
		}
		args = append(append(args, "--"), q.text())
		rawArgs = append(append(rawArgs, "--"), q.Words...)
		out, d, err := wallTime(ctx, setup.Crawlkeeper, args...)
		if err != nil {
			return Result{}, fmt.Errorf("search_cli_ms: %w", err)
		}
		rawOut, b, err := wallTime(ctx, minimal, rawArgs...)
		if err != nil {
			return Result{}, fmt.Errorf("search_cli_ms baseline: %w", err)
		}
		// crawlkeeper prints a line per hit and its snippet on the next,
		// indented; the minimal program a line per hit.
		if n, m := hitLines(out), hitLines(rawOut); n != m {
			return Result{}, fmt.Errorf("search_cli_ms %q: crawlkeeper printed %d hits, the raw query %d", q.text(), n, m)
		}
		if i >= 0 {
			value, baseline = append(value, d), append(baseline, b)
		}
	}
	r := Result{Name: "search_cli_ms", Unit: "ms (p50)", Value: p50(value), Baseline: p50(baseline), N: len(value),
		Target: "baseline/value >= 0.5; value <= 100 ms on SQLite"}
	if r.Value > 0 {
		r.Ratio = r.Baseline / r.Value
	}
	r.Met = r.Ratio >= 0.5 && (!isSQLite || r.Value <= 100)
	return r, nil
}

// hitLines counts the lines of out that do not start with a tab.
func hitLines(out []byte) int {
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if line != "" && !strings.HasPrefix(line, "\t") {
			n++
		}
	}
	return n
}

func firstLine(out []byte) string {
	s, _, _ := strings.Cut(string(out), "\n")
	return s
}
