package main

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

func init() {
	register(&command{name: "deadletters", summary: "list records that keep failing processing, or retry them", run: runDeadLetters})
}

func runDeadLetters(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("deadletters", "deadletters [--json] | deadletters retry [ID...]")
	var pf pipelineFlags
	pf.register(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 && pos[0] == "retry" {
		return retryDeadLetters(ctx, a, pf, pos[1:])
	}
	if len(pos) > 0 {
		return usagef("deadletters takes no arguments besides retry [ID...], got %q", pos)
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	dls, err := st.DeadLetters(ctx, 1<<30)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(dls)
	}
	if len(dls) == 0 {
		fmt.Fprintln(a.stdout, "no dead letters")
		return nil
	}
	fmt.Fprintf(a.stdout, "%-10s %-8s %-14s %-20s %s\n", "ID", "VERSION", "PROCESSOR", "AT", "ERROR")
	for _, d := range dls {
		fmt.Fprintf(a.stdout, "%-10d %-8d %-14s %-20s %s\n", d.ID, d.Version, d.Processor, d.At.Format(time.RFC3339), d.Error)
	}
	fmt.Fprintf(a.stdout, "%s; retry with `crawlkeeper deadletters retry [ID...]` once the cause is fixed\n", plural(len(dls), "dead letter"))
	return nil
}

// retryJSON is what `deadletters retry --json` prints.
type retryJSON struct {
	Retried   int   `json:"retried"`
	Processed int64 `json:"processed"`
	Skipped   int64 `json:"skipped"`
	Failed    int64 `json:"failed"`
}

func retryDeadLetters(ctx context.Context, a *app, pf pipelineFlags, args []string) error {
	var ids []int64
	for _, s := range args {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return usagef("deadletters retry: %q is not a record id", s)
		}
		ids = append(ids, id)
	}
	env, err := a.openEnv(ctx)
	if err != nil {
		return err
	}
	defer env.Close()
	eng, release, err := env.engine(pf, nil)
	if err != nil {
		return err
	}
	defer release()
	out, removed, err := eng.RetryDeadLetters(ctx, ids)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(retryJSON{Retried: len(removed), Processed: out.Processed, Skipped: out.Skipped, Failed: out.Failed})
	}
	fmt.Fprintf(a.stdout, "retried %s: %d processed, %d failed again, %d gone or changing\n", plural(len(removed), "record"), out.Processed, out.Failed, out.Skipped)
	if len(ids) > len(removed) {
		fmt.Fprintf(a.stdout, "%d of the ids given had no dead letter\n", len(ids)-len(removed))
	}
	return nil
}
