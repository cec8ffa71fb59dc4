package sqlstore

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/crawlkeeper/crawlkeeper"
)

// Marker holds the crawlkeeper.TxMarker through which a server store's
// Ingest commits a batch's crawl marks with its records. It can be set
// while ingests run; the zero value holds none.
//
// # The monitor log on PostgreSQL and MySQL
//
// Processes sharing a database catch up with the embedded monitor's log by
// sequence number: a monitor that has applied the log up to n reads the
// entries after n. That is only right if no entry numbered n or less can
// still commit after the reader passed it. An identity or AUTO_INCREMENT
// column numbers entries when they are inserted, not when they commit
// (ingest A takes 7, ingest B takes 8 and commits first, a reader applies
// 8 and never looks back at 7), and neither engine gives back the numbers
// of rolled-back inserts.
//
// So both stores start every monitor write transaction (UpdateMonitor,
// and the marks part of an ingest) by locking the counter row
// monitor_meta.log_seq with SELECT ... FOR UPDATE, before they read
// anything of the monitor, and take sequence numbers from that row.
// Monitor writers therefore run one at a time from that lock to their
// commit: entries commit in sequence order, a writer that rolls back
// leaves no gap (its counter update rolls back with it), and the log is
// dense, which the monitor relies on to tell entries it missed because
// they were folded away. The lock also gives UpdateMonitor the exclusion
// crawlkeeper.MonitorPersister promises (the dictionary stays dense). In
// READ COMMITTED each statement after the lock sees every writer that
// committed before it. Readers use a REPEATABLE READ snapshot, so they see
// a prefix of the log and never wait.
//
// The cost: ingests that carry marks queue on the counter row from their
// marks to their commit (the marks are written last, just before the
// commit). Ingests without marks never wait for it.
type Marker struct {
	p atomic.Pointer[markerBox]
}

type markerBox struct{ m crawlkeeper.TxMarker }

// Set makes m the marker of every later Ingest.
func (x *Marker) Set(m crawlkeeper.TxMarker) { x.p.Store(&markerBox{m: m}) }

// Write appends marks through the marker inside the ingest transaction
// that tx writes in, and returns the function to call once that
// transaction committed; nil when there is no marker or no mark.
func (x *Marker) Write(ctx context.Context, tx crawlkeeper.MonitorTx, marks []crawlkeeper.Mark) (func(), error) {
	b := x.p.Load()
	if b == nil || len(marks) == 0 {
		return nil, nil
	}
	done, err := b.m.MarkTx(ctx, tx, marks)
	if err != nil {
		return nil, fmt.Errorf("marks: %w", err)
	}
	return done, nil
}
