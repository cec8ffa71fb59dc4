package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/metrics"
)

// archiveTick runs one scheduled archive pass of serve under the archiver
// lease, which it renews while the pass runs. Several serve processes may
// share a server store: the lease makes one of them run each pass. Nothing
// here fails serve; every failure is logged with what it was doing and
// counted in crawlkeeper_errors_total, and the next tick tries again.
func archiveTick(ctx context.Context, holder *crawlkeeper.LeaseHolder, arch *crawlkeeper.Archiver, m *metrics.Metrics, logger *slog.Logger, now func() time.Time) {
	var rep *crawlkeeper.ArchiveReport
	held, err := holder.Run(ctx, func(ctx context.Context) error {
		var err error
		rep, err = arch.Run(ctx, crawlkeeper.ArchiveOptions{})
		return err
	})
	if ctx.Err() != nil {
		return // serve is stopping
	}
	switch {
	case !held && err != nil:
		logger.Error("archive pass skipped: the archiver lease could not be taken; the next tick tries again", "err", err)
		m.Error("archive_lease")
		return
	case !held:
		logger.Debug("archive pass skipped: another process holds the archiver lease")
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
