package sqlstore

import (
	"context"
	"fmt"

	"github.com/crawlkeeper/crawlkeeper"
)

// The monitor log on PostgreSQL and MySQL: processes sharing a database
// catch up with the embedded monitor's log by sequence number: a monitor
// that has applied the log up to n reads the entries after n. That is only
// right if no entry numbered n or less can still commit after the reader
// passed it. An identity or AUTO_INCREMENT column numbers entries when
// they are inserted, not when they commit (ingest A takes 7, ingest B
// takes 8 and commits first, a reader applies 8 and never looks back at
// 7), and neither engine gives back the numbers of rolled-back inserts.
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

// SetTxMarker implements crawlkeeper.TxMarkStore: from now on Ingest
// writes a batch's marks through m in the batch's transaction. It may be
// called while ingests run.
func (s *Store) SetTxMarker(m crawlkeeper.TxMarker) { s.marker.Store(&m) }

// writeMarks appends a batch's marks inside its ingest transaction and
// returns the function to call once it committed; nil when there is no
// marker or no mark.
func (s *Store) writeMarks(ctx context.Context, tx Querier, marks []crawlkeeper.Mark) (func(), error) {
	m := s.marker.Load()
	if m == nil || len(marks) == 0 {
		return nil, nil
	}
	done, err := (*m).MarkTx(ctx, &monitorTx{s: s, ctx: ctx, tx: tx, write: true}, marks)
	if err != nil {
		return nil, fmt.Errorf("marks: %w", err)
	}
	return done, nil
}
