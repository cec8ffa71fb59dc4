package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/schollz/progressbar/v3"
)

func init() {
	register(&command{name: "rekey", summary: "rebuild every key under the current key rules, merging records that collide", run: runRekey})
}

func runRekey(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("rekey", "rekey [--source S] [--dry-run]")
	source := fs.String("source", "", "only records of this `source` (default: every source)")
	dry := fs.Bool("dry-run", false, "report what would be re-keyed and merged; write nothing")
	page := fs.Int("page", 500, "records read and re-keyed at once")
	samples := fs.Int("samples", 20, "merges listed in the report")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("rekey takes no arguments, got %q", pos[0])
	}
	if *page < 1 || *page > 10000 {
		return usagef("--page %d: use 1 to 10000", *page)
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	var merges []crawlkeeper.MergeJournalEntry
	nMerges := 0
	// --source '' is the empty source name, not every source: a key
	// belongs to its source, whatever its name.
	var sources []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "source" {
			sources = []string{*source}
		}
	})
	k := &crawlkeeper.Rekeyer{Store: st, Config: a.cfg, Sources: sources, DryRun: *dry, PageSize: *page, Now: a.now,
		OnMerge: func(e crawlkeeper.MergeJournalEntry) {
			nMerges++
			if len(merges) < *samples {
				merges = append(merges, e)
			}
		}}
	if isTerminal(a.stderr) {
		var bar *progressbar.ProgressBar
		defer func() {
			if bar != nil {
				bar.Finish()
			}
		}()
		k.Progress = func(r crawlkeeper.RekeyReport) {
			if bar == nil {
				bar = progressbar.NewOptions64(r.Total, progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription("rekey"),
					progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
			}
			bar.Set64(r.Scanned)
		}
	}
	rep, err := k.Run(ctx)
	if err != nil {
		if rep != nil && rep.Scanned > 0 && !*dry {
			return fmt.Errorf("rekey stopped after %d records (%d re-keyed, %d merged); run it again to continue: %w", rep.Scanned, rep.Rekeyed, rep.Merged, err)
		}
		return err
	}
	if a.json {
		return a.printJSON(struct {
			*crawlkeeper.RekeyReport
			Samples []crawlkeeper.MergeJournalEntry `json:"merges"`
		}{rep, merges})
	}
	verb := func(done, would string) string {
		if *dry {
			return would
		}
		return done
	}
	fmt.Fprintf(a.stdout, "%s in %s: %s %s with a new key, %s %s into records with the same new key\n",
		plural(int(rep.Scanned), "record"), sourcesText(rep.Sources), verb("re-keyed", "would re-key"), plural(int(rep.Rekeyed), "record"),
		verb("merged", "would merge"), plural(int(rep.Merged), "record"))
	for _, m := range merges {
		fmt.Fprintf(a.stdout, "  %s: record %v %s into %d (%s)\n", m.Source, m.Merged, verb("merged", "would merge"), m.Survivor, strings.Join(m.KeyParts, " "))
	}
	if nMerges > len(merges) {
		fmt.Fprintf(a.stdout, "  ... and %d more (each journaled as %s)\n", nMerges-len(merges), crawlkeeper.RekeyJournal)
	}
	if rep.Skipped > 0 {
		fmt.Fprintf(a.stdout, "%s changed during the run and kept their keys: run rekey again\n", plural(int(rep.Skipped), "record"))
	}
	if rep.Unreadable > 0 {
		fmt.Fprintf(a.stdout, "%s could not be read and kept their keys\n", plural(int(rep.Unreadable), "record"))
	}
	if !*dry {
		for _, src := range rep.Sources {
			if fp, ok := rep.Fingerprints[src]; ok {
				fmt.Fprintf(a.stdout, "source %q: keys built under rules %s\n", src, fp)
			}
		}
		if rep.Elapsed > 0 && rep.Scanned > 0 {
			fmt.Fprintf(a.stdout, "%.0f records/s\n", float64(rep.Scanned)/rep.Elapsed.Seconds())
		}
	}
	return nil
}

func sourcesText(sources []string) string {
	if len(sources) == 1 {
		return fmt.Sprintf("source %q", sources[0])
	}
	return plural(len(sources), "source")
}
