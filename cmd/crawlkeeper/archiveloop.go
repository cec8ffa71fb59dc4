package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/metrics"
)

// archiveEvery is how often serve runs an archive pass: --archive-every,
// else the configuration's archive.every, else hourly; negative: never.
func archiveEvery(cfg *crawlkeeper.Config, opts serveOptions) time.Duration {
	every := opts.archiveEvery
	if every == 0 {
		every = cfg.Archive.Every.D()
	}
	if every == 0 {
		every = time.Hour
	}
	return every
}

// archiveRunner runs serve's archive passes, scheduled or asked for by
// hand through the API or the dashboard, one at a time in this process and
// under the archiver lease across processes.
type archiveRunner struct {
	holder *crawlkeeper.LeaseHolder
	arch   *crawlkeeper.Archiver
	store  crawlkeeper.Store
	busy   sync.Mutex
}

// archiveRunner returns serve's archive runner. The lease runs on the
// wall clock (LeaseHolder's default), not on --now: other processes read
// it on theirs.
func (e *env) archiveRunner(arch *crawlkeeper.Archiver, opts serveOptions) *archiveRunner {
	ttl := e.a.cfg.Archive.Lease.D()
	if ttl <= 0 {
		ttl = max(archiveEvery(e.a.cfg, opts), 0) + time.Minute
	}
	owner := fmt.Sprintf("%s-%d", hostname(), os.Getpid())
	return &archiveRunner{arch: arch, store: e.store,
		holder: &crawlkeeper.LeaseHolder{Store: e.store, Name: crawlkeeper.ArchiverLease, Owner: owner, TTL: ttl}}
}

// run runs a pass under the lease: held is false, with no error, when a
// pass runs already, here or in another process.
func (r *archiveRunner) run(ctx context.Context, opts crawlkeeper.ArchiveOptions) (rep *crawlkeeper.ArchiveReport, held bool, err error) {
	if !r.busy.TryLock() {
		return nil, false, nil
	}
	defer r.busy.Unlock()
	held, err = r.holder.Run(ctx, func(ctx context.Context) error {
		var err error
		rep, err = r.arch.Run(ctx, opts)
		return err
	})
	return rep, held, err
}

// runByHand runs a pass asked for through the API or the dashboard. A dry
// run moves nothing and needs no lease; a pass that cannot run because
// another one does is refused as a conflict naming its holder.
func (r *archiveRunner) runByHand(ctx context.Context, opts crawlkeeper.ArchiveOptions) (*crawlkeeper.ArchiveReport, error) {
	if opts.DryRun {
		return r.arch.Run(ctx, opts)
	}
	rep, held, err := r.run(ctx, opts)
	if held || err != nil {
		return rep, err
	}
	who := "this process"
	if lr, ok := r.store.(crawlkeeper.LeaseReader); ok {
		if owner, _, lerr := lr.LeaseOwner(ctx, crawlkeeper.ArchiverLease, time.Now()); lerr == nil && owner != "" && owner != r.holder.Owner {
			who = owner
		}
	}
	return nil, crawlkeeper.Errorf(crawlkeeper.ECONFLICT, "an archive pass is running in %s (it holds the archiver lease): try again when it ends", who)
}

// archiveTick runs one scheduled archive pass of serve under the archiver
// lease, which it renews while the pass runs. Several serve processes may
// share a server store: the lease makes one of them run each pass. Nothing
// here fails serve; every failure is logged with what it was doing and
// counted in crawlkeeper_errors_total, and the next tick tries again.
func archiveTick(ctx context.Context, runner *archiveRunner, m *metrics.Metrics, logger *slog.Logger, now func() time.Time) {
	rep, held, err := runner.run(ctx, crawlkeeper.ArchiveOptions{})
	if ctx.Err() != nil {
		return // serve is stopping
	}
	switch {
	case !held && err != nil:
		logger.Error("archive pass skipped: the archiver lease could not be taken; the next tick tries again", "err", err)
		m.Error("archive_lease")
		return
	case !held:
		logger.Debug("archive pass skipped: another pass holds the archiver lease")
		return
	}
	if rep != nil && (err == nil || errors.Is(err, crawlkeeper.ErrJournal)) {
		m.ObserveArchive(rep, now())
	}
	switch {
	case errors.Is(err, crawlkeeper.ErrLeaseLost):
		logger.Error("archive pass stopped: the archiver lease was lost, so another process may take over; moves done so far are committed", "err", err)
		m.Error("archive_lease")
	case errors.Is(err, crawlkeeper.ErrJournal):
		logger.Error("archive pass done, but its journal entry was not written", "err", err, "archived", rep.Archived)
		m.Error("archive_journal")
	case err != nil:
		logger.Error("archive pass failed; the next tick tries again", "err", err)
		m.Error("archive")
	default:
		logger.Info("archive pass", "archived", rep.Archived, "scanned", rep.Scanned, "skipped", rep.Skipped, "seconds", rep.DurationS)
	}
}
