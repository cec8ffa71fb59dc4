package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// The archive pass as a user runs it: `crawlkeeper archive` in a fresh
// process on a store of the benchmark's scale where 2% of the records are
// due, against the minimal program doing the same work with the engine's
// driver alone: the indexed selection of the age rule, and (for a real
// pass) the move of the selected records in batches.
//
// Due records: the generated items were first crawled up to 600 minutes
// before Now, and one in a hundred two months before. An age rule of 594
// minutes finds those and the tenth of a percent of each minute's share:
// about 2%.
const archivePassMaxAge = 594 * time.Minute

// archivePassRuns is how many times each pass is timed.
const archivePassRuns = 7

// ArchivePassNames are the results of the archive pass measurement.
var ArchivePassNames = []string{"archive_pass_ms", "archive_pass_dry_ms", "archive_pass_rss_mb"}

func runArchivePass(ctx context.Context, opts *Options, setup CommandSetup) ([]Result, error) {
	url, drop, err := setup.Scratch(ctx, "archive-pass")
	if err != nil {
		return nil, err
	}
	defer drop()
	minimal, err := setup.Minimal(ctx, url)
	if err != nil {
		var out []Result
		for _, name := range ArchivePassNames {
			out = append(out, notMeasured(name, err))
		}
		return out, nil
	}
	st, err := setup.OpenStore(ctx, url)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	g := &crawlkeeper.Ingester{Store: st, Config: &crawlkeeper.Config{}, Dates: opts.Dates, Now: func() time.Time { return Now }}
	for from := 0; from < opts.Scale; from += chunk {
		opts.progress("archive_pass_ms (load)", from, opts.Scale)
		if _, err := g.Ingest(ctx, bytesReader(NDJSON(from, min(from+chunk, opts.Scale), 0)), crawlkeeper.Meta{}); err != nil {
			return nil, fmt.Errorf("archive_pass_ms (load): %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "crawlkeeper-bench-archive")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf("defaults:\n  max_age: %dm\n", int(archivePassMaxAge.Minutes()))), 0o644); err != nil {
		return nil, err
	}
	cutoff := strconv.FormatInt(Now.Add(-archivePassMaxAge).UnixMicro(), 10)
	now := strconv.FormatInt(Now.UnixMicro(), 10)
	rssFile := filepath.Join(dir, "rss")
	ck := func(dry, measureRSS bool) (int, time.Duration, int64, error) {
		args := []string{"archive", "--store", url, "--config", config, "--now", Now.Format(time.RFC3339), "--json"}
		if dry {
			args = append(args, "--dry-run")
		}
		// Memory is taken on runs of their own, through the minimal
		// program (rawcli rss), which starts the command from a small
		// process: a process forked from this one is charged this one's
		// memory until it execs. Those runs are not timed.
		var out []byte
		var d time.Duration
		var err error
		var rss int64
		if measureRSS {
			out, _, err = wallTime(ctx, minimal, append([]string{"rss", rssFile, setup.Crawlkeeper}, args...)...)
			if err == nil {
				var b []byte
				if b, err = os.ReadFile(rssFile); err == nil {
					rss, err = strconv.ParseInt(string(b), 10, 64)
				}
			}
		} else {
			out, d, err = wallTime(ctx, setup.Crawlkeeper, args...)
		}
		if err != nil {
			return 0, d, rss, err
		}
		var rep crawlkeeper.ArchiveReport
		if err := json.Unmarshal(out, &rep); err != nil {
			return 0, d, rss, fmt.Errorf("archive --json printed %q: %w", firstLine(out), err)
		}
		return rep.Archived, d, rss, nil
	}
	raw := func(dry bool) (int, time.Duration, error) {
		args := []string{"archive", url}
		if dry {
			args = append(args, "-dry")
		}
		out, d, err := wallTime(ctx, minimal, append(args, cutoff, now)...)
		if err != nil {
			return 0, d, err
		}
		n, err := strconv.Atoi(string(trimSpace(out)))
		return n, d, err
	}
	// restore brings every archived record back, so the next pass finds
	// the same records due. Not timed.
	restore := func() error {
		for {
			page, err := st.List(ctx, crawlkeeper.RecordQuery{Archived: true, Limit: 5000})
			if err != nil || len(page.Records) == 0 {
				return err
			}
			ids := make([]int64, len(page.Records))
			for i, r := range page.Records {
				ids[i] = r.ID
			}
			if _, err := st.Restore(ctx, ids); err != nil {
				return err
			}
		}
	}
	var passes, dries, rawPasses, rawDries []time.Duration
	var peak int64
	due := -1
	for round := 0; round < archivePassRuns+1; round++ {
		opts.progress("archive_pass_ms", round, archivePassRuns+1)
		steps := []func() error{
			func() error {
				n, d, _, err := ck(true, false)
				if err == nil && due >= 0 && n != due {
					err = fmt.Errorf("archive_pass_dry_ms: the dry run counts %d records, the raw selection %d", n, due)
				}
				dries = append(dries, d)
				return err
			},
			func() error {
				n, d, err := raw(true)
				due = n
				rawDries = append(rawDries, d)
				return err
			},
			func() error {
				n, d, _, err := ck(false, false)
				if err == nil && n != due {
					err = fmt.Errorf("archive_pass_ms: the pass moved %d records, the raw selection finds %d", n, due)
				}
				passes = append(passes, d)
				if err == nil {
					err = restore()
				}
				return err
			},
			func() error {
				n, d, err := raw(false)
				if err == nil && n != due {
					err = fmt.Errorf("archive_pass_ms: the raw move moved %d records, its selection %d", n, due)
				}
				rawPasses = append(rawPasses, d)
				if err == nil {
					err = restore()
				}
				return err
			},
		}
		// The raw selection goes first in the first round (it says how
		// many are due); then each round starts with another step.
		order := []int{1, 0, 2, 3}
		if round > 0 {
			order = []int{round % 4, (round + 1) % 4, (round + 2) % 4, (round + 3) % 4}
		}
		for _, i := range order {
			if err := steps[i](); err != nil {
				return nil, err
			}
		}
	}
	// Peak memory of a real pass and of a dry run.
	for _, dry := range []bool{false, true} {
		_, _, rss, err := ck(dry, true)
		if err != nil {
			return nil, err
		}
		peak = max(peak, rss)
		if err := restore(); err != nil {
			return nil, err
		}
	}
	// The first round warms the caches and is not counted.
	drop1 := func(ds []time.Duration) []time.Duration { return ds[1:] }
	mk := func(name string, value, base []time.Duration, limit float64, limitNote string) Result {
		r := Result{Name: name, Unit: "ms (p50)", Value: p50(drop1(value)), Baseline: p50(drop1(base)), N: due,
			Target: "baseline/value >= 0.5" + limitNote}
		if r.Value > 0 {
			r.Ratio = r.Baseline / r.Value
		}
		r.Met = r.Ratio >= 0.5 && (limit == 0 || r.Value <= limit)
		return r
	}
	limit, note := 0.0, ""
	if _, isSQLite := st.(interface{ Path() string }); isSQLite && opts.Scale <= 50000 {
		limit, note = 120, "; value <= 120 ms on SQLite at 50,000 records"
	}
	rss := Result{Name: "archive_pass_rss_mb", Unit: "MB (peak)", Value: float64(peak) / 1024, N: archivePassRuns, Target: "value <= 150"}
	rss.Met = rss.Value > 0 && rss.Value <= 150
	return []Result{
		mk("archive_pass_ms", passes, rawPasses, limit, note),
		mk("archive_pass_dry_ms", dries, rawDries, limit, note),
		rss,
	}, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
