package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func init() {
	register(&command{name: "stats", summary: "count records, archive and history by source", run: runStats})
}

func runStats(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("stats", "stats")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("stats takes no arguments")
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := st.Stats(ctx)
	if err != nil {
		return err
	}
	extra, err := st.ArchiveStats(ctx, a.now())
	if err != nil {
		return err
	}
	s.Merge(extra)
	if err := crawlkeeper.SampleDateErrors(ctx, st, a.cfg, s, 3); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(s)
	}
	fmt.Fprintf(a.stdout, "active %d  archived %d  history %d  date errors %d\n", s.Active, s.Archived, s.History, s.DateErrors)
	fmt.Fprintf(a.stdout, "deliveries %d  duplicates merged %d (%s)\n", s.Deliveries, s.DuplicateDeliveries, percent(s.DuplicateRate))
	if s.ArchiveRawBytes > 0 {
		fmt.Fprintf(a.stdout, "archive payloads: %d bytes raw, %d stored\n", s.ArchiveRawBytes, s.ArchiveStoredBytes)
	}
	names := make([]string, 0, len(s.Sources))
	for n := range s.Sources {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) > 0 {
		fmt.Fprintf(a.stdout, "\n%-24s %10s %10s %12s %14s %14s %12s %10s\n", "SOURCE", "ACTIVE", "ARCHIVED", "DATE ERRORS", "MEDIAN LIFE", "CHANGES/WEEK", "DELIVERIES", "DUPLICATES")
	}
	for _, n := range names {
		ss := s.Sources[n]
		label := n
		if label == "" {
			label = "(none)"
		}
		life, changes := "-", "-"
		if ss.MedianLifetimeS != nil {
			life = (time.Duration(*ss.MedianLifetimeS) * time.Second).Round(time.Minute).String()
		}
		if ss.ChangesPerWeek != nil {
			changes = fmt.Sprintf("%.1f", *ss.ChangesPerWeek)
		}
		fmt.Fprintf(a.stdout, "%-24s %10d %10d %12d %14s %14s %12d %10s\n", label, ss.Active, ss.Archived, ss.DateErrors, life, changes, ss.Deliveries, percent(ss.DuplicateRate))
		for _, msg := range ss.DateErrorSamples {
			fmt.Fprintf(a.stdout, "    %s\n", msg)
		}
	}
	return nil
}

// percent writes a rate from 0 to 1 as a percentage.
func percent(rate float64) string { return fmt.Sprintf("%.1f%%", 100*rate) }
