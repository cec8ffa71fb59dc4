package mysql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/crawlkeeper/crawlkeeper"
)

// The embedded monitor's persistence: crawlkeeper.MonitorPersister over the
// monitor_* tables (migration 004), and the hook that commits the marks of
// an ingest batch with its records. Every monitor write transaction locks
// the log counter row first, so log entries commit in sequence order (see
// internal/sqlstore.Marker for why).
//
// Log entries and snapshot parts are split into chunks that fit in a
// statement under the server's max_allowed_packet (with room for the
// escaping of binary values), one row each, so a part of a large round
// never fails with "packet too large".

var (
	_ crawlkeeper.MonitorPersister = (*Store)(nil)
	_ crawlkeeper.TxMarkStore      = (*Store)(nil)
)

// maxChunk bounds one stored chunk, whatever the server allows, so rows
// stay modest in memory.
const maxChunk = 8 << 20

// chunkBytes is the size of the chunks bodies are split into: half a
// statement (binary values may double when escaped), at most maxChunk.
func (s *Store) chunkBytes() int {
	return min(max((s.maxStatement-4096)/2, 64<<10), maxChunk)
}

// SetTxMarker implements crawlkeeper.TxMarkStore: from now on Ingest
// writes a batch's marks through m in the batch's transaction.
func (s *Store) SetTxMarker(m crawlkeeper.TxMarker) { s.marker.Set(m) }

// writeMarks appends the batch's marks inside the ingest transaction and
// returns the function to call once it committed (nil when there is
// nothing to do).
func (s *Store) writeMarks(ctx context.Context, tx *sql.Tx, marks []crawlkeeper.Mark) (func(), error) {
	return s.marker.Write(ctx, &monitorTx{ctx: ctx, s: s, tx: tx, write: true}, marks)
}

// UpdateMonitor implements crawlkeeper.MonitorPersister: fn runs in a
// transaction that locks the log counter before its first statement (see
// above), and again when InnoDB rolled it back to break a deadlock.
func (s *Store) UpdateMonitor(ctx context.Context, fn func(tx crawlkeeper.MonitorTx) error) error {
	return s.inTx(ctx, "monitor", func(tx *sql.Tx) error {
		return fn(&monitorTx{ctx: ctx, s: s, tx: tx, write: true})
	})
}

// ViewMonitor implements crawlkeeper.MonitorPersister in a read-only
// REPEATABLE READ transaction: one snapshot (InnoDB's consistent read),
// and writers never wait for it.
func (s *Store) ViewMonitor(ctx context.Context, fn func(v crawlkeeper.MonitorView) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return s.wrap("monitor", err)
	}
	defer tx.Rollback()
	return s.wrap("monitor", fn(&monitorTx{ctx: ctx, s: s, tx: tx}))
}

// monitorTx implements crawlkeeper.MonitorTx over one transaction. A
// writing one locks the log counter on its first call.
type monitorTx struct {
	ctx    context.Context
	s      *Store
	tx     *sql.Tx
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
	if err := t.tx.QueryRowContext(t.ctx, `SELECT value FROM monitor_meta WHERE name = 'log_seq' FOR UPDATE`).Scan(&t.last); err != nil {
		return fmt.Errorf("monitor: lock the log: %w", err)
	}
	t.locked = true
	return nil
}

func (t *monitorTx) TargetsFrom(from uint32, fn func(id uint32, name string) error) error {
	if err := t.lock(); err != nil {
		return err
	}
	rows, err := t.tx.QueryContext(t.ctx, `SELECT id, name FROM monitor_targets WHERE id >= ? ORDER BY id`, int64(from))
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
	if err := t.tx.QueryRowContext(t.ctx, `SELECT value FROM monitor_meta WHERE name = 'snapshot_seq'`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("monitor: read snapshot: %w", err)
	}
	return seq, nil
}

// chunked calls fn with each body whose chunks rows returns, ordered by
// the key and then the chunk number, joined.
func chunked[K comparable](rows *sql.Rows, fn func(key K, body []byte) error) error {
	defer rows.Close()
	var (
		cur  K
		body []byte
		have bool
	)
	for rows.Next() {
		var k K
		var chunk int
		var b []byte
		if err := rows.Scan(&k, &chunk, &b); err != nil {
			return err
		}
		if have && k != cur {
			if err := fn(cur, body); err != nil {
				return err
			}
			body = nil
		}
		cur, have = k, true
		body = append(body, b...)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if have {
		return fn(cur, body)
	}
	return nil
}

func (t *monitorTx) Parts(fn func(name string, body []byte) error) error {
	if err := t.lock(); err != nil {
		return err
	}
	rows, err := t.tx.QueryContext(t.ctx, `SELECT name, chunk, body FROM monitor_parts ORDER BY name, chunk`)
	if err != nil {
		return fmt.Errorf("monitor: read snapshot: %w", err)
	}
	return chunked(rows, fn)
}

func (t *monitorTx) LogSince(seq int64, fn func(seq int64, body []byte) error) error {
	if err := t.lock(); err != nil {
		return err
	}
	rows, err := t.tx.QueryContext(t.ctx, `SELECT seq, chunk, body FROM monitor_log WHERE seq > ? ORDER BY seq, chunk`, seq)
	if err != nil {
		return fmt.Errorf("monitor: read log: %w", err)
	}
	return chunked(rows, fn)
}

func (t *monitorTx) AddTargets(first uint32, names []string) error {
	if err := t.lock(); err != nil {
		return err
	}
	i := 0
	for _, c := range chunks(names, t.s.maxStatement/2, func(n string) int { return len(n) + 32 }) {
		args := make([]any, 0, 2*len(c))
		for _, n := range c {
			args = append(args, int64(first)+int64(i), []byte(n))
			i++
		}
		if _, err := t.tx.ExecContext(t.ctx, `INSERT INTO monitor_targets (id, name) VALUES `+tuples(len(c), 2), args...); err != nil {
			return fmt.Errorf("monitor: add targets: %w", err)
		}
	}
	return nil
}

// putChunks writes body as rows (key, 0, ...), (key, 1, ...) of table.
func (t *monitorTx) putChunks(table, keyCol string, key any, body []byte) error {
	size := t.s.chunkBytes()
	for i := 0; i == 0 || i*size < len(body); i++ {
		c := body[i*size : min((i+1)*size, len(body))]
		if _, err := t.tx.ExecContext(t.ctx, `INSERT INTO `+table+` (`+keyCol+`, chunk, body) VALUES (?, ?, ?)`, key, i, c); err != nil {
			return err
		}
	}
	return nil
}

func (t *monitorTx) AppendLog(body []byte) (int64, error) {
	if err := t.lock(); err != nil {
		return 0, err
	}
	seq := t.last + 1
	if err := t.putChunks("monitor_log", "seq", seq, body); err != nil {
		return 0, fmt.Errorf("monitor: append log: %w", err)
	}
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE monitor_meta SET value = ? WHERE name = 'log_seq'`, seq); err != nil {
		return 0, fmt.Errorf("monitor: append log: %w", err)
	}
	t.last = seq
	return seq, nil
}

func (t *monitorTx) PutPart(name string, body []byte) error {
	if err := t.lock(); err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(t.ctx, `DELETE FROM monitor_parts WHERE name = ?`, []byte(name)); err != nil {
		return fmt.Errorf("monitor: write snapshot: %w", err)
	}
	if body == nil {
		return nil
	}
	if err := t.putChunks("monitor_parts", "name", []byte(name), body); err != nil {
		return fmt.Errorf("monitor: write snapshot: %w", err)
	}
	return nil
}

func (t *monitorTx) FoldLog(seq, keep int64) error {
	if err := t.lock(); err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE monitor_meta SET value = ? WHERE name = 'snapshot_seq'`, seq); err != nil {
		return fmt.Errorf("monitor: fold log: %w", err)
	}
	if _, err := t.tx.ExecContext(t.ctx, `DELETE FROM monitor_log WHERE seq <= ?`, seq-keep); err != nil {
		return fmt.Errorf("monitor: fold log: %w", err)
	}
	return nil
}
