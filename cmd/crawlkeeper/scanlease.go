package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// scanLeaseProgress is how often `scan --once --wait` says whom it waits
// for.
const scanLeaseProgress = 10 * time.Second

// scanLeasePoll is how often it tries to take the lease.
const scanLeasePoll = time.Second

// runPassLeased runs one pass of `scan --once` under the scan lease, the
// one serve's continuous passes hold, so that a pass by hand and serve's
// passes never run at once (they would process the same records twice and
// move the one checkpoint both resume from).
//
// When another process holds the lease, scan --once refuses at once, naming
// the holder: a running serve keeps the lease for as long as it runs, and
// its passes already reprocess every record each period, so waiting for it
// would usually mean waiting for ever. --wait D waits up to D instead,
// saying every few seconds whom it waits for; that is for a holder that
// was killed (its lease expires within the lease TTL) or that is about to
// be stopped.
func runPassLeased(ctx context.Context, a *app, env *env, eng *pipeline.Engine, wait time.Duration) (*pipeline.PassReport, error) {
	ttl := eng.LeaseTTL
	if ttl <= 0 {
		ttl = pipeline.DefaultLeaseTTL
	}
	h, _ := os.Hostname()
	holder := &crawlkeeper.LeaseHolder{Store: env.store, Name: pipeline.ScanLease, Owner: fmt.Sprintf("%s-%d", h, os.Getpid()),
		TTL: ttl, Now: eng.Clock.Now, After: eng.Clock.After}
	var timeout <-chan time.Time
	if wait > 0 {
		timeout = eng.Clock.After(wait)
	}
	var lastSaid time.Time
	for {
		var rep *pipeline.PassReport
		held, err := holder.Run(ctx, func(ctx context.Context) error {
			var err error
			rep, err = eng.RunPass(ctx)
			return err
		})
		if held || err != nil {
			return rep, err
		}
		who := "another process"
		if lr, ok := env.store.(crawlkeeper.LeaseReader); ok {
			if owner, until, err := lr.LeaseOwner(ctx, pipeline.ScanLease, eng.Clock.Now()); err == nil && owner != "" {
				who = fmt.Sprintf("%s (host-pid; its lease runs until %s unless renewed)", owner, until.Format(time.RFC3339))
			}
		}
		if wait <= 0 {
			return nil, crawlkeeper.Errorf(crawlkeeper.ECONFLICT,
				"the scan lease is held by %s, which runs the passes over this store (a running `crawlkeeper serve` does, and its passes reprocess every record each period): stop it to run a pass by hand, or wait for its lease with --wait 5m", who)
		}
		if now := time.Now(); now.Sub(lastSaid) >= scanLeaseProgress {
			lastSaid = now
			fmt.Fprintf(a.stderr, "waiting for the scan lease held by %s\n", who)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			return nil, crawlkeeper.Errorf(crawlkeeper.ECONFLICT,
				"the scan lease is still held by %s after waiting %s: stop the process that holds it (a running `crawlkeeper serve` keeps it while it runs), or wait longer", who, wait)
		case <-eng.Clock.After(scanLeasePoll):
		}
	}
}
