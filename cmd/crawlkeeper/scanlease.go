package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/clock"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// leaseProgress is how often a command waiting for a lease says whom it
// waits for.
const leaseProgress = 10 * time.Second

// leasePoll is how often it tries to take the lease.
const leasePoll = time.Second

// leased describes a lease a command runs its work under.
type leased struct {
	name string
	// label names the lease in messages ("scan", "archiver").
	label string
	ttl   time.Duration
	// wait is how long to wait for a lease another process holds; 0
	// refuses at once.
	wait  time.Duration
	clock clock.Clock
	// refuse builds the error when the lease stays taken: who holds it
	// and how long the command waited (0: it did not wait).
	refuse func(who string, waited time.Duration) error
}

// runLeased runs work under the lease l names, renewed while work runs
// (crawlkeeper.LeaseHolder), so that a command and serve's own work never
// run at once. When another process holds the lease it waits up to l.wait,
// saying every few seconds whom it waits for, then refuses with l.refuse.
func runLeased(ctx context.Context, a *app, st crawlkeeper.Store, l leased, work func(ctx context.Context) error) error {
	if l.clock == nil {
		l.clock = clock.Real{}
	}
	// Lease times are wall-clock times whatever --now says: the lease is
	// shared with other processes, which read it on their own clocks.
	holder := &crawlkeeper.LeaseHolder{Store: st, Name: l.name, Owner: crawlkeeper.ProcessOwner(),
		TTL: l.ttl, Now: time.Now, After: l.clock.After}
	var timeout <-chan time.Time
	if l.wait > 0 {
		timeout = l.clock.After(l.wait)
	}
	var lastSaid time.Time
	for {
		held, err := holder.Run(ctx, work)
		if held || err != nil {
			return err
		}
		who := "another process"
		if lr, ok := st.(crawlkeeper.LeaseReader); ok {
			if owner, until, err := lr.LeaseOwner(ctx, l.name, time.Now()); err == nil && owner != "" {
				if deadHere(owner) {
					if err := releaseDead(ctx, st, l.name, owner); err != nil {
						return err
					}
					fmt.Fprintf(a.stderr, "took over the %s lease of %s, a process of this machine that no longer runs\n", l.label, owner)
					continue
				}
				who = fmt.Sprintf("%s (its lease runs until %s unless renewed)", owner, until.Format(time.RFC3339))
			}
		}
		if l.wait <= 0 {
			return l.refuse(who, 0)
		}
		if now := time.Now(); now.Sub(lastSaid) >= leaseProgress {
			lastSaid = now
			fmt.Fprintf(a.stderr, "waiting for the %s lease held by %s\n", l.label, who)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			return l.refuse(who, l.wait)
		case <-l.clock.After(leasePoll):
		}
	}
}

// releaseDead frees a lease whose owner, a process of this host, PID
// namespace and boot, was killed holding it (deadHere said so), rather than
// wait for it to expire. The release is conditioned on the owner: if the
// lease changed hands meanwhile, it does nothing.
func releaseDead(ctx context.Context, st crawlkeeper.Leaser, name, owner string) error {
	if err := st.ReleaseLease(ctx, name, owner); err != nil {
		return fmt.Errorf("free the %s lease of %s, which no longer runs: %w", name, owner, err)
	}
	return nil
}

// takeOverDeadLeases frees, at the start of a long-running process (serve,
// continuous scan), the leases it takes that a dead predecessor of the same
// host, PID namespace and boot still holds, so that a restart after a
// kill -9 resumes the work at once instead of waiting out the leases (two
// minutes for the scan, an archive period for the archiver). Leases of
// live processes, of other namespaces or boots, and of owners whose names
// do not say theirs are left to expire. A store that cannot name a lease's
// holder is left alone; failures only delay the work, so they are logged.
func takeOverDeadLeases(ctx context.Context, st crawlkeeper.Store, logger *slog.Logger, names ...string) {
	lr, ok := st.(crawlkeeper.LeaseReader)
	if !ok {
		return
	}
	for _, name := range names {
		owner, until, err := lr.LeaseOwner(ctx, name, time.Now())
		if err != nil {
			logger.Warn("could not read a lease's holder; it is taken when it expires", "lease", name, "err", err)
			continue
		}
		if owner == "" || !deadHere(owner) {
			continue
		}
		if err := releaseDead(ctx, st, name, owner); err != nil {
			logger.Warn("could not free a dead process's lease; it is taken when it expires", "lease", name, "err", err)
			continue
		}
		logger.Info("took over the lease of a process of this machine that no longer runs", "lease", name, "owner", owner, "was_held_until", until.Format(time.RFC3339))
	}
}

// runPassLeased runs one pass of `scan --once` under the scan lease, the
// one serve's continuous passes hold, so that a pass by hand and serve's
// passes never run at once (they would process the same records twice and
// move the one checkpoint both resume from).
//
// When another process holds the lease, scan --once refuses at once, naming
// the holder: a running serve keeps the lease for as long as it runs, and
// its passes already reprocess every record each period, so waiting for it
// would usually mean waiting for ever. --wait D waits up to D instead; that
// is for a holder that was killed (its lease expires within the lease TTL)
// or that is about to be stopped.
func runPassLeased(ctx context.Context, a *app, env *env, eng *pipeline.Engine, wait time.Duration) (*pipeline.PassReport, error) {
	ttl := eng.LeaseTTL
	if ttl <= 0 {
		ttl = pipeline.DefaultLeaseTTL
	}
	var rep *pipeline.PassReport
	err := runLeased(ctx, a, env.store, leased{name: pipeline.ScanLease, label: "scan", ttl: ttl, wait: wait, clock: eng.Clock,
		refuse: func(who string, waited time.Duration) error {
			if waited == 0 {
				return crawlkeeper.Errorf(crawlkeeper.ECONFLICT,
					"the scan lease is held by %s, which runs the passes over this store (a running `crawlkeeper serve` does, and its passes reprocess every record each period): stop it to run a pass by hand, or wait for its lease with --wait 5m", who)
			}
			return crawlkeeper.Errorf(crawlkeeper.ECONFLICT,
				"the scan lease is still held by %s after waiting %s: stop the process that holds it (a running `crawlkeeper serve` keeps it while it runs), or wait longer", who, waited)
		}}, func(ctx context.Context) error {
		var err error
		rep, err = eng.RunPass(ctx)
		return err
	})
	return rep, err
}

// archiveLeaseTTL is the archiver lease's time to live for a command: it
// is renewed while the command runs, so it only bounds how long a killed
// command blocks the next one.
const archiveLeaseTTL = time.Minute

// runArchiveLeased runs an archive pass, manual archive or purge under the
// archiver lease that serve's scheduled passes take, so that a command by
// hand and a scheduled pass never move or purge at once. A pass another
// process runs ends on its own, so the command waits for it, up to wait.
func runArchiveLeased(ctx context.Context, a *app, env *env, wait time.Duration, work func(ctx context.Context) error) error {
	ttl := a.cfg.Archive.Lease.D()
	if ttl <= 0 {
		ttl = archiveLeaseTTL
	}
	return runLeased(ctx, a, env.store, leased{name: crawlkeeper.ArchiverLease, label: "archiver", ttl: ttl, wait: wait, clock: appClock{now: a.now, speed: a.speed},
		refuse: func(who string, waited time.Duration) error {
			return crawlkeeper.Errorf(crawlkeeper.ECONFLICT,
				"the archiver lease is still held by %s after waiting %s: another archive pass or purge is running (serve runs one every archive.every); run again when it is done, or wait longer with --wait", who, waited)
		}}, work)
}
