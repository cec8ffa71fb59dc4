package main

import (
	"context"
	"fmt"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func init() {
	register(&command{name: "target", summary: "one crawl target's state in every round", run: runTarget})
}

func runTarget(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("target", "target NAME")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("target needs exactly one target NAME, got %d arguments", len(pos))
	}
	return withMonitor(ctx, a, func(m crawlkeeper.Monitor) error {
		ts, err := m.Target(ctx, pos[0])
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(ts)
		}
		fmt.Fprintf(a.stdout, "target %s (id %d)\n", ts.Target, ts.ID)
		for _, r := range ts.Rounds {
			state := "queued"
			switch {
			case r.Done:
				state = "done"
				if r.DoneAt != nil {
					state += " in the bucket of " + r.DoneAt.Format(time.RFC3339)
				}
			case r.Failed && r.Reason != "":
				state = "failed: " + r.Reason
			case r.Failed:
				state = "failed"
			}
			fmt.Fprintf(a.stdout, "  round %s: %s\n", r.Round, state)
		}
		return nil
	})
}
