package postgres

import (
	"context"
	"fmt"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/jackc/pgx/v5"
)

// The embedded monitor's persistence: crawlkeeper.MonitorPersister over the
// monitor_* tables (migration 004), and the hook that commits the marks of
// an ingest batch with its records. Every monitor write transaction locks
// the log counter row first, so log entries commit in sequence order (see
// internal/sqlstore.Marker for why).

var (
	_ crawlkeeper.MonitorPersister = (*Store)(nil)
	_ crawlkeeper.TxMarkStore      = (*Store)(nil)
)

// SetTxMarker implements crawlkeeper.TxMarkStore: from now on Ingest
// writes a batch's marks through m in the batch's transaction.
func (s *Store) SetTxMarker(m crawlkeeper.TxMarker) { s.marker.Set(m) }

// writeMarks appends the batch's marks inside the ingest transaction and
// returns the function to call once it committed (nil when there is
// nothing to do).
func (s *Store) writeMarks(ctx context.Context, tx pgx.Tx, marks []crawlkeeper.Mark) (func(), error) {
	return s.marker.Write(ctx, &monitorTx{ctx: ctx, tx: tx, write: true}, marks)
}

// UpdateMonitor implements crawlkeeper.MonitorPersister: fn runs in a READ
// COMMITTED transaction that locks the log counter before its first
// statement (see above), and again when PostgreSQL aborted it to break a
// deadlock.
func (s *Store) UpdateMonitor(ctx context.Context, fn func(tx crawlkeeper.MonitorTx) error) error {
	return s.inTx(ctx, "monitor", func(tx pgx.Tx) error {
		return fn(&monitorTx{ctx: ctx, tx: tx, write: true})
	})
}

// ViewMonitor implements crawlkeeper.MonitorPersister in a read-only
// REPEATABLE READ transaction: one snapshot, and writers never wait for it.
func (s *Store) ViewMonitor(ctx context.Context, fn func(v crawlkeeper.MonitorView) error) error {
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		return fn(&monitorTx{ctx: ctx, tx: tx})
	})
	return s.wrap("monitor", err)
}

// monitorTx implements crawlkeeper.MonitorTx over one transaction. A
// writing one locks the log counter on its first call.
type monitorTx struct {
	ctx    context.Context
	tx     pgx.Tx
	write  bool
	locked bool
	// last is the counter's value: the last sequence number handed out.
	last int64
}

// lock takes the counter row's lock once per writing transaction.
func (t *monitorTx) lock() error {
	if !t.write || t.locked {
		return nil
	}
	if err := t.tx.QueryRow(t.ctx, `SELECT value FROM monitor_meta WHERE name = 'log_seq' FOR UPDATE`).Scan(&t.last); err != nil {
		return fmt.Errorf("monitor: lock the log: %w", err)
	}
	t.locked = true
	return nil
}

func (t *monitorTx) TargetsFrom(from uint32, fn func(id uint32, name string) error) error {
	if err := t.lock(); err != nil {
		return err
	}
	rows, err := t.tx.Query(t.ctx, `SELECT id, name FROM monitor_targets WHERE id >= $1 ORDER BY id`, int64(from))
	if err != nil {
		return fmt.Errorf("monitor: read targets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name []byte
		if err := rows.Scan(&id, &name); err != nil {
			return fmt.Errorf("monitor: read targets: %w", err)
		}
		if err := fn(uint32(id), string(name)); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (t *monitorTx) SnapshotSeq() (int64, error) {
	if err := t.lock(); err != nil {
		return 0, err
	}
	var seq int64
	if err := t.tx.QueryRow(t.ctx, `SELECT value FROM monitor_meta WHERE name = 'snapshot_seq'`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("monitor: read snapshot: %w", err)
	}
	return seq, nil
}

func (t *monitorTx) Parts(fn func(name string, body []byte) error) error {
	if err := t.lock(); err != nil {
		return err
	}
	rows, err := t.tx.Query(t.ctx, `SELECT name, body FROM monitor_parts ORDER BY name`)
	if err != nil {
		return fmt.Errorf("monitor: read snapshot: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, body []byte
		if err := rows.Scan(&name, &body); err != nil {
			return fmt.Errorf("monitor: read snapshot: %w", err)
		}
		if err := fn(string(name), body); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (t *monitorTx) LogSince(seq int64, fn func(seq int64, body []byte) error) error {
	if err := t.lock(); err != nil {
		return err
	}
	rows, err := t.tx.Query(t.ctx, `SELECT seq, body FROM monitor_log WHERE seq > $1 ORDER BY seq`, seq)
	if err != nil {
		return fmt.Errorf("monitor: read log: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s int64
		var body []byte
		if err := rows.Scan(&s, &body); err != nil {
			return fmt.Errorf("monitor: read log: %w", err)
		}
		if err := fn(s, body); err != nil {
			return err
		}
	}
	return rows.Err()
}

// targetRows is how many dictionary rows one INSERT carries.
const targetRows = 20000

func (t *monitorTx) AddTargets(first uint32, names []string) error {
	if err := t.lock(); err != nil {
		return err
	}
	for i := 0; i < len(names); i += targetRows {
		chunk := names[i:min(i+targetRows, len(names))]
		ids, bs := make([]int64, len(chunk)), make([][]byte, len(chunk))
		for j, n := range chunk {
			ids[j], bs[j] = int64(first)+int64(i+j), []byte(n)
		}
		if _, err := t.tx.Exec(t.ctx, `INSERT INTO monitor_targets (id, name) SELECT * FROM unnest($1::bigint[], $2::bytea[])`, ids, bs); err != nil {
			return fmt.Errorf("monitor: add targets: %w", err)
		}
	}
	return nil
}

func (t *monitorTx) AppendLog(body []byte) (int64, error) {
	if err := t.lock(); err != nil {
		return 0, err
	}
	seq := t.last + 1
	if _, err := t.tx.Exec(t.ctx, `INSERT INTO monitor_log (seq, body) VALUES ($1, $2)`, seq, body); err != nil {
		return 0, fmt.Errorf("monitor: append log: %w", err)
	}
	if _, err := t.tx.Exec(t.ctx, `UPDATE monitor_meta SET value = $1 WHERE name = 'log_seq'`, seq); err != nil {
		return 0, fmt.Errorf("monitor: append log: %w", err)
	}
	t.last = seq
	return seq, nil
}

func (t *monitorTx) PutPart(name string, body []byte) error {
	if err := t.lock(); err != nil {
		return err
	}
	var err error
	if body == nil {
		_, err = t.tx.Exec(t.ctx, `DELETE FROM monitor_parts WHERE name = $1`, []byte(name))
	} else {
		_, err = t.tx.Exec(t.ctx, `INSERT INTO monitor_parts (name, body) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET body = excluded.body`, []byte(name), body)
	}
	if err != nil {
		return fmt.Errorf("monitor: write snapshot: %w", err)
	}
	return nil
}

func (t *monitorTx) FoldLog(seq, keep int64) error {
	if err := t.lock(); err != nil {
		return err
	}
	if _, err := t.tx.Exec(t.ctx, `UPDATE monitor_meta SET value = $1 WHERE name = 'snapshot_seq'`, seq); err != nil {
		return fmt.Errorf("monitor: fold log: %w", err)
	}
	if _, err := t.tx.Exec(t.ctx, `DELETE FROM monitor_log WHERE seq <= $1`, seq-keep); err != nil {
		return fmt.Errorf("monitor: fold log: %w", err)
	}
	return nil
}
