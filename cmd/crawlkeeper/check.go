package main

import (
	"context"
	"fmt"
)

func init() {
	register(&command{name: "check", summary: "verify the store's invariants", run: runCheck})
}

func runCheck(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("check", "check")
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
	rep, err := st.Check(ctx)
	if err != nil {
		return err
	}
	if a.json {
		if err := a.printJSON(rep); err != nil {
			return err
		}
	} else if rep.OK {
		fmt.Fprintln(a.stdout, "ok: every invariant holds")
	} else {
		for _, v := range rep.Violations {
			fmt.Fprintf(a.stdout, "%s: %s\n", v.Kind, v.Message)
		}
		fmt.Fprintf(a.stdout, "%s found\n", plural(len(rep.Violations), "violation"))
	}
	if !rep.OK {
		return &exitError{code: 1}
	}
	return nil
}
