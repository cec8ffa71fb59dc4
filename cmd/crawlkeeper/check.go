package main

import (
	"context"
	"fmt"

	"github.com/crawlkeeper/crawlkeeper"
)

func init() {
	register(&command{name: "check", summary: "verify the store's invariants", run: runCheck})
}

func runCheck(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("check", "check [--recount]")
	recount := fs.Bool("recount", false, "first rebuild the per-source counts of active records with date errors from the records (stop every process that writes to the store first)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("check takes no arguments")
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if *recount {
		c, ok := st.(crawlkeeper.DateErrorCounter)
		if !ok {
			return crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "check --recount: this store keeps no date error counts")
		}
		if err := c.RecountDateErrors(ctx); err != nil {
			return err
		}
	}
	rep, err := st.Check(ctx)
	if err != nil {
		return err
	}
	// What acknowledged writes survive is not an invariant, but check is
	// where an operator looks for what the store promises.
	var dur *crawlkeeper.DurabilityStatus
	if dr, ok := st.(crawlkeeper.DurabilityReporter); ok {
		if dur, err = dr.DurabilityStatus(ctx); err != nil {
			return err
		}
	}
	if a.json {
		if err := a.printJSON(struct {
			*crawlkeeper.CheckReport
			Durability *crawlkeeper.DurabilityStatus `json:"durability,omitempty"`
		}{rep, dur}); err != nil {
			return err
		}
	} else {
		if rep.OK {
			fmt.Fprintln(a.stdout, "ok: every invariant holds")
		} else {
			for _, v := range rep.Violations {
				fmt.Fprintf(a.stdout, "%s: %s\n", v.Kind, v.Message)
			}
			fmt.Fprintf(a.stdout, "%s found\n", plural(len(rep.Violations), "violation"))
		}
		if dur != nil {
			warn := ""
			if dur.Setting == crawlkeeper.DurabilityFull && !dur.PowerLossSafe {
				warn = "warning: durability full is not kept: "
			}
			fmt.Fprintf(a.stdout, "durability %s: %s%s\n", dur.Setting, warn, dur.Detail)
		}
	}
	if !rep.OK {
		return &exitError{code: 1}
	}
	return nil
}
