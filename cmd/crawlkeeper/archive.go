package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/jsonlz"
	"github.com/schollz/progressbar/v3"
)

func init() {
	register(&command{name: "archive", summary: "move expired records to the archive (also: archive purge)", run: runArchive, subs: []string{"purge"}})
	register(&command{name: "restore", summary: "move archived records back to active", run: runRestore})
}

func (e *env) archiver() *crawlkeeper.Archiver {
	return &crawlkeeper.Archiver{Store: e.store, Config: e.a.cfg, Dates: e.dates, Now: e.a.now}
}

func runArchive(ctx context.Context, a *app, args []string) (err error) {
	if len(args) > 0 && args[0] == "purge" {
		return runPurge(ctx, a, args[1:])
	}
	fs := a.newFlags("archive", "archive [--dry-run] [--force] [--source S] [--batch N]\n       crawlkeeper archive --manual (--id N... | --source S --older-than DURATION)\n       crawlkeeper archive purge [--export FILE.jsonl.zst | --no-export]")
	dry := fs.Bool("dry-run", false, "report what would move, with samples; move nothing")
	force := fs.Bool("force", false, "re-read event fields of every active record with the current parser first")
	source := fs.String("source", "", "only records of this `source`")
	batch := fs.Int("batch", 0, "records moved per batch (default: archive.batch, 1000)")
	samples := fs.Int("samples", 20, "samples a dry run lists")
	manual := fs.Bool("manual", false, "archive the given records by hand (reason manual)")
	var ids idList
	fs.Var(&ids, "id", "record `id` to archive with --manual (repeatable, or comma-separated)")
	olderThan := fs.String("older-than", "", "with --manual --source: records first seen more than `DURATION` ago (e.g. 90d)")
	wait := fs.String("wait", "10m", "wait up to this `duration` for an archive pass or purge another process runs (serve's scheduled pass)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if *manual {
		// `--manual --id 1 2 3` reads naturally: take trailing ids too.
		for _, p := range pos {
			if err := ids.Set(p); err != nil {
				return usagef("%v", err)
			}
		}
	} else if len(pos) > 0 {
		return usagef("archive takes no arguments, got %q", pos[0])
	}
	if !*manual && (len(ids) > 0 || *olderThan != "") {
		return usagef("--id and --older-than need --manual")
	}
	env, err := a.openEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	arch := env.archiver()
	if isTerminal(a.stderr) {
		bar := progressbar.NewOptions(-1, progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription("archive"),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		defer bar.Finish()
		arch.Progress = func(scanned, archived int) { bar.Set(scanned) }
	}

	waitFor, perr := crawlkeeper.ParseDuration(*wait)
	if perr != nil {
		return usagef("--wait %q: use a duration such as 10m, or 0 to refuse at once", *wait)
	}
	var rep *crawlkeeper.ArchiveReport
	var work func(ctx context.Context) error
	if *manual {
		if *dry || *force {
			return usagef("--manual cannot be combined with --dry-run or --force")
		}
		switch {
		case len(ids) > 0 && (*olderThan != "" || *source != ""):
			return usagef("--manual takes either --id or --source with --older-than, not both")
		case len(ids) == 0 && (*olderThan == "" || *source == ""):
			return usagef("--manual needs --id N... or --source S --older-than DURATION")
		case len(ids) == 0:
			d, perr := crawlkeeper.ParseDuration(*olderThan)
			if perr != nil || d == 0 {
				return usagef("--older-than %q: use a duration such as 90d or 36h", *olderThan)
			}
			work = func(ctx context.Context) (err error) {
				rep, err = arch.ArchiveOlderThan(ctx, *source, d.D())
				return err
			}
		default:
			work = func(ctx context.Context) (err error) { rep, err = arch.ArchiveManual(ctx, ids); return err }
		}
	} else {
		work = func(ctx context.Context) (err error) {
			rep, err = arch.Run(ctx, crawlkeeper.ArchiveOptions{DryRun: *dry, Force: *force, Source: *source, Batch: *batch, Samples: *samples})
			return err
		}
	}
	if *dry {
		// A dry run moves nothing: it needs no lease.
		err = work(ctx)
	} else {
		err = runArchiveLeased(ctx, a, env, waitFor.D(), work)
	}
	// A pass whose journal entry failed did all its moves: show its
	// report, then fail, so the missing history entry is not missed.
	var journalErr error
	if errors.Is(err, crawlkeeper.ErrJournal) {
		journalErr, err = err, nil
	}
	if err != nil {
		if rep != nil && rep.Archived > 0 {
			return fmt.Errorf("archive stopped after moving %d records (run it again to continue): %w", rep.Archived, err)
		}
		return err
	}
	if journalErr != nil {
		defer func() {
			fmt.Fprintf(a.stderr, "crawlkeeper: the pass is done but missing from `archive` run history: %v\n", journalErr)
		}()
		defer func() { err = &exitError{code: 1} }()
	}
	if a.json {
		return a.printJSON(rep)
	}
	verb := "archived"
	if rep.DryRun {
		verb = "would archive"
	}
	fmt.Fprintf(a.stdout, "%s %d of %d selected records (event %d, stale %d, age %d, manual %d)",
		verb, rep.Archived, rep.Scanned, rep.ByReason[crawlkeeper.ReasonEvent], rep.ByReason[crawlkeeper.ReasonStale],
		rep.ByReason[crawlkeeper.ReasonAge], rep.ByReason[crawlkeeper.ReasonManual])
	fmt.Fprintf(a.stdout, " in %.2fs\n", rep.DurationS)
	if rep.Skipped > 0 {
		fmt.Fprintf(a.stdout, "%d records changed during the pass and were left for the next one\n", rep.Skipped)
	}
	if len(rep.NotActive) > 0 {
		unknown, archived, _, err := classifyIDs(ctx, env.store, rep.NotActive)
		if err != nil {
			return err
		}
		if n := len(archived); n > 0 {
			fmt.Fprintf(a.stdout, "%s archived already (nothing to do): %s\n", plural(n, "record"), joinIDs(archived, 20))
		}
		if n := len(unknown); n > 0 {
			fmt.Fprintf(a.stdout, "%s %s: %s\n", plural(n, "id"), doNotExist(n), joinIDs(unknown, 20))
			if rep.Archived == 0 {
				return errors.New("no record was archived")
			}
		}
	}
	if rep.Reparsed > 0 {
		fmt.Fprintf(a.stdout, "re-read event fields of %d records, %d changed\n", rep.Reparsed, rep.ReparseChanged)
	}
	if rep.DateErrors > 0 {
		fmt.Fprintf(a.stdout, "%d active records have unreadable event dates and never archive by the event rule\n", rep.DateErrors)
	}
	for _, s := range rep.Samples {
		fmt.Fprintf(a.stdout, "  %-6s id %d  %s  %s\n", s.Reason, s.ID, s.Source, s.Title)
	}
	return nil
}

func runPurge(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("archive purge", "archive purge [--export FILE.jsonl.zst | --no-export]")
	exportPath := fs.String("export", "", "write purged records and their history to this new `file` first (.zst compresses)")
	noExport := fs.Bool("no-export", false, "purge without exporting (the records are gone for good)")
	wait := fs.String("wait", "10m", "wait up to this `duration` for an archive pass or purge another process runs")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("archive purge takes no arguments")
	}
	waitFor, err := crawlkeeper.ParseDuration(*wait)
	if err != nil {
		return usagef("--wait %q: use a duration such as 10m, or 0 to refuse at once", *wait)
	}
	if *exportPath == "" && !*noExport {
		return usagef("archive purge deletes records for good: give --export FILE.jsonl.zst to keep a copy, or --no-export")
	}
	if *exportPath != "" && *noExport {
		return usagef("give either --export or --no-export")
	}
	env, err := a.openEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	// The export is created once the lease is held (a refused purge
	// leaves no file behind) and written under its final name, synced
	// before each page of records is deleted: whatever happens next,
	// every purged record is in it.
	var w *jsonlz.Writer
	var rep *crawlkeeper.PurgeReport
	err = runArchiveLeased(ctx, a, env, waitFor.D(), func(ctx context.Context) (err error) {
		var export crawlkeeper.PurgeExport
		if *exportPath != "" {
			if w, err = jsonlz.CreateDurable(*exportPath); err != nil {
				if errors.Is(err, os.ErrExist) {
					return usagef("export file %s exists; choose a new name so no earlier export is overwritten", *exportPath)
				}
				return err
			}
			export = w
		}
		rep, err = env.archiver().Purge(ctx, export)
		return err
	})
	if err != nil {
		if w != nil {
			w.Abort()
		}
		if rep != nil && rep.Purged > 0 {
			return fmt.Errorf("%w (the %d records purged before the failure are in %s)", err, rep.Purged, *exportPath)
		}
		return err
	}
	if w != nil {
		if err := w.Close(); err != nil {
			return fmt.Errorf("%w (the %d purged records were synced to it before they were deleted)", err, rep.Purged)
		}
	}
	if a.json {
		return a.printJSON(rep)
	}
	fmt.Fprintf(a.stdout, "purged %d archived records", rep.Purged)
	if w != nil {
		fmt.Fprintf(a.stdout, " after exporting them to %s", *exportPath)
	}
	fmt.Fprintln(a.stdout)
	if rep.Changed > 0 {
		fmt.Fprintf(a.stdout, "%d records were re-crawled after their export and stay archived until the next purge\n", rep.Changed)
	}
	return nil
}

func runRestore(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("restore", "restore ID...")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("restore needs at least one record id")
	}
	var ids idList
	for _, p := range pos {
		if err := ids.Set(p); err != nil {
			return usagef("%v", err)
		}
	}
	env, err := a.openEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	rep, err := env.archiver().Restore(ctx, ids)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(rep)
	}
	fmt.Fprintf(a.stdout, "restored %s to active", plural(len(rep.Restored), "record"))
	if len(rep.Restored) > 0 {
		fmt.Fprintf(a.stdout, ": %v", rep.Restored)
	}
	fmt.Fprintln(a.stdout)
	if len(rep.NotArchived) > 0 {
		unknown, _, active, err := classifyIDs(ctx, env.store, rep.NotArchived)
		if err != nil {
			return err
		}
		if n := len(active); n > 0 {
			fmt.Fprintf(a.stdout, "%s active already (nothing to do): %s\n", plural(n, "record"), joinIDs(active, 20))
		}
		if n := len(unknown); n > 0 {
			fmt.Fprintf(a.stdout, "%s %s: %s\n", plural(n, "id"), doNotExist(n), joinIDs(unknown, 20))
		}
	}
	for _, d := range rep.StillDue {
		fmt.Fprintf(a.stdout, "note: record %d is still due by the %s rule; the next archive pass will move it again unless the configuration changes\n", d.ID, d.Reason)
	}
	if len(rep.Restored) == 0 {
		return errors.New("no record was restored")
	}
	return nil
}

// classifyIDs sorts ids a command could not act on into the ones no
// record has, the archived records and the active ones, so that a typo
// in an id is not reported as "nothing to do".
func classifyIDs(ctx context.Context, st crawlkeeper.Store, ids []int64) (unknown, archived, active []int64, err error) {
	for _, id := range ids {
		r, err := st.Get(ctx, id)
		switch {
		case crawlkeeper.ErrorCode(err) == crawlkeeper.ENOTFOUND:
			unknown = append(unknown, id)
		case err != nil:
			return nil, nil, nil, err
		case r.ArchivedAt != nil:
			archived = append(archived, id)
		default:
			active = append(active, id)
		}
	}
	return unknown, archived, active, nil
}

func doNotExist(n int) string {
	if n == 1 {
		return "does not exist"
	}
	return "do not exist"
}

// idList collects record ids from repeated or comma-separated flags.
type idList []int64

func (l *idList) String() string { return fmt.Sprint([]int64(*l)) }

func (l *idList) Set(s string) error {
	for _, part := range splitComma(s) {
		id, err := strconv.ParseInt(part, 10, 64)
		if err != nil || id <= 0 {
			return fmt.Errorf("%q is not a record id", part)
		}
		*l = append(*l, id)
	}
	return nil
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// joinIDs lists up to max ids, then how many more there are.
func joinIDs(ids []int64, max int) string {
	var b strings.Builder
	for i, id := range ids {
		if i == max {
			fmt.Fprintf(&b, " and %d more", len(ids)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}
