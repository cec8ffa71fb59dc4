package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/crawlkeeper/crawlkeeper"
)

func init() {
	register(&command{name: "fields", summary: "rare fields: fill rates, sample records, whether enough samples exist", run: runFields})
}

func runFields(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("fields", "fields [--source S]")
	source := fs.String("source", "", "only this `source`")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("fields takes no arguments")
	}
	return withMonitor(ctx, a, func(m crawlkeeper.Monitor) error {
		reps, err := m.Fields(ctx, *source)
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(reps)
		}
		if len(reps) == 0 {
			fmt.Fprintln(a.stdout, "no watched or rare fields yet: set sources.NAME.watch_fields in the config, or ingest items")
			return nil
		}
		for _, r := range reps {
			enough := ""
			if r.Enough {
				enough = ", enough samples"
			}
			fmt.Fprintf(a.stdout, "%s/%s (%s): filled in %d of %d items (%.1f%%), %d targets, %d samples%s\n",
				r.Source, r.Field, r.Watch, r.Filled, r.Present, 100*r.FillRate, r.Targets, len(r.Samples), enough)
			rounds := make([]string, 0, len(r.FillRateByRound))
			for k := range r.FillRateByRound {
				rounds = append(rounds, k)
			}
			sort.Strings(rounds)
			for _, k := range rounds {
				fmt.Fprintf(a.stdout, "  round %s: %.1f%%\n", k, 100*r.FillRateByRound[k])
			}
		}
		return nil
	})
}
