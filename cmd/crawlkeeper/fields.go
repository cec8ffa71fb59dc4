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
	env, err := a.openEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	m, err := env.monitor(ctx)
	if err != nil {
		return err
	}
	reps, err := m.Fields(ctx, *source)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(reps)
	}
	if len(reps) == 0 {
		return explainNoFields(ctx, a, env.store)
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
}

// explainNoFields says why fields lists nothing: no items yet, or no
// field rare enough to be watched, and how to watch one anyway.
func explainNoFields(ctx context.Context, a *app, st crawlkeeper.Store) error {
	stats, err := st.Stats(ctx)
	if err != nil {
		return err
	}
	if stats.Active+stats.Archived == 0 {
		fmt.Fprintln(a.stdout, "no items ingested yet: fields are sampled as items arrive")
		return nil
	}
	below := a.cfg.MonitorOptions().WithDefaults().RareBelow
	fmt.Fprintf(a.stdout, "no rare fields: every field of the ingested items is filled in at least %.0f%% of the items that have it (monitor.rare_below), and no field is watched; list fields in sources.NAME.watch_fields to follow them anyway\n", 100*below)
	return nil
}
