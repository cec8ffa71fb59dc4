package sqlstore

import (
	"context"
	"fmt"

	"github.com/crawlkeeper/crawlkeeper"
)

// The embedded monitor's persistence: crawlkeeper.MonitorPersister over the
// monitor_* tables, and the hook that commits the marks of an ingest batch
// with its records. Every monitor write transaction locks the log counter
// row first, so log entries commit in sequence order (see marker.go for why).

// Monitor is what differs between engines in the monitor's tables.
type Monitor interface {
	// View runs fn in a read-only transaction on one snapshot, which
	// writers never wait for.
	View(ctx context.Context, what string, fn func(tx Querier) error) error
	// MonitorName returns a target, part or round name as the monitor's
	// name columns store it (text or bytes).
	MonitorName(name string) any
	// MonitorChunk is the largest body one row of monitor_log or
	// monitor_parts holds (a body larger than a statement may carry is
	// split over rows numbered by a chunk column), or 0 when the tables
	// have no chunk column and a row holds a whole body.
	MonitorChunk() int
	// MonitorDictBlock is the most bytes of names one row of monitor_dict
	// holds: as much as fits the engine's pages without spilling to
	// overflow or TOAST storage.
	MonitorDictBlock() int
	// TableBytes returns what a table takes on disk with its indexes, as
	// the engine counts it (0 for a table that does not exist).
	TableBytes(ctx context.Context, table string) (int64, error)
}

var (
	_ crawlkeeper.MonitorPersister = (*Store)(nil)
	_ crawlkeeper.TxMarkStore      = (*Store)(nil)
	_ crawlkeeper.MonitorSizer     = (*Store)(nil)
)

// MonitorSize implements crawlkeeper.MonitorSizer from the engine's own
// table and index sizes.
func (s *Store) MonitorSize(ctx context.Context) (*crawlkeeper.MonitorSize, error) {
	sz := &crawlkeeper.MonitorSize{}
	for _, t := range []string{"monitor_dict", "monitor_targets", "monitor_log", "monitor_parts", "monitor_meta"} {
		n, err := s.e.TableBytes(ctx, t)
		if err != nil {
			return nil, s.e.Wrap("monitor size", err)
		}
		if t == "monitor_dict" || t == "monitor_targets" {
			sz.Dictionary += n
		}
		sz.Total += n
	}
	return sz, nil
}

// UpdateMonitor implements crawlkeeper.MonitorPersister: fn runs in a
// write transaction that locks the log counter before its first statement,
// again when the engine aborted it to break a deadlock.
func (s *Store) UpdateMonitor(ctx context.Context, fn func(tx crawlkeeper.MonitorTx) error) error {
	return s.e.Write(ctx, "monitor", func(tx Querier) error {
		return fn(&monitorTx{s: s, ctx: ctx, tx: tx, write: true})
	})
}

// ViewMonitor implements crawlkeeper.MonitorPersister on one snapshot.
func (s *Store) ViewMonitor(ctx context.Context, fn func(v crawlkeeper.MonitorView) error) error {
	return s.e.View(ctx, "monitor", func(tx Querier) error {
		return fn(&monitorTx{s: s, ctx: ctx, tx: tx})
	})
}

// monitorTx implements crawlkeeper.MonitorTx over one transaction. A
// writing one locks the log counter on its first call.
type monitorTx struct {
	s      *Store
	ctx    context.Context
	tx     Querier
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
	if err := t.tx.QueryRow(t.ctx, `SELECT value FROM monitor_meta WHERE name = 'log_seq'`+t.s.e.ForUpdate()).Scan(&t.last); err != nil {
		return fmt.Errorf("monitor: lock the log: %w", err)
	}
	t.locked = true
	return nil
}

// run runs fn after the counter's lock, naming what failed.
func (t *monitorTx) run(what string, fn func() error) error {
	if err := t.lock(); err != nil {
		return err
	}
	if err := fn(); err != nil {
		return fmt.Errorf("monitor: %s: %w", what, err)
	}
	return nil
}

func (t *monitorTx) TargetsFrom(from uint32, fn func(id uint32, name string) error) error {
	return t.run("read targets", func() error { return t.namesFrom(from, fn) })
}

func (t *monitorTx) SnapshotSeq() (int64, error) {
	var seq int64
	err := t.run("read snapshot", func() error {
		return t.tx.QueryRow(t.ctx, `SELECT value FROM monitor_meta WHERE name = 'snapshot_seq'`).Scan(&seq)
	})
	return seq, err
}

// bodies calls fn with each body of table's rows whose key is greater
// than after (every row when after is nil), in key order, the chunks of a
// body joined. Keys are int64 or, for bytes, string.
func (t *monitorTx) bodies(table, key string, after any, fn func(key any, body []byte) error) error {
	chunk, order := "0", key
	if t.s.e.MonitorChunk() > 0 {
		chunk, order = "chunk", key+", chunk"
	}
	q := `SELECT ` + key + `, ` + chunk + `, body FROM ` + table
	var args []any
	if after != nil {
		q += ` WHERE ` + key + ` > ?`
		args = append(args, after)
	}
	var (
		cur  any
		body []byte
	)
	err := EachRow(t.ctx, t.tx, func(rows Rows) error {
		var k any
		var n int64
		var b []byte
		if err := rows.Scan(&k, &n, &b); err != nil {
			return err
		}
		if kb, ok := k.([]byte); ok {
			k = string(kb)
		}
		if cur != nil && k != cur {
			if err := fn(cur, body); err != nil {
				return err
			}
			body = nil
		}
		cur = k
		body = append(body, b...)
		return nil
	}, q+` ORDER BY `+order, args...)
	if err == nil && cur != nil {
		err = fn(cur, body)
	}
	return err
}

func (t *monitorTx) Parts(fn func(name string, body []byte) error) error {
	return t.run("read snapshot", func() error {
		return t.bodies("monitor_parts", "name", nil, func(name any, body []byte) error { return fn(name.(string), body) })
	})
}

func (t *monitorTx) LogSince(seq int64, fn func(seq int64, body []byte) error) error {
	return t.run("read log", func() error {
		return t.bodies("monitor_log", "seq", seq, func(seq any, body []byte) error { return fn(seq.(int64), body) })
	})
}

func (t *monitorTx) AddTargets(first uint32, names []string) error {
	return t.run("add targets", func() error { return t.appendNames(first, names) })
}

// putBody writes body as the rows of key in table: one row, or one per
// chunk.
func (t *monitorTx) putBody(table, keyCol string, key any, body []byte) error {
	size := t.s.e.MonitorChunk()
	if size == 0 {
		_, err := t.tx.Exec(t.ctx, `INSERT INTO `+table+` (`+keyCol+`, body) VALUES (?, ?)`, key, body)
		return err
	}
	for i := 0; i == 0 || i*size < len(body); i++ {
		c := body[i*size : min((i+1)*size, len(body))]
		if _, err := t.tx.Exec(t.ctx, `INSERT INTO `+table+` (`+keyCol+`, chunk, body) VALUES (?, ?, ?)`, key, i, c); err != nil {
			return err
		}
	}
	return nil
}

func (t *monitorTx) AppendLog(body []byte) (int64, error) {
	var seq int64
	err := t.run("append log", func() error {
		seq = t.last + 1
		if err := t.putBody("monitor_log", "seq", seq, body); err != nil {
			return err
		}
		_, err := t.tx.Exec(t.ctx, `UPDATE monitor_meta SET value = ? WHERE name = 'log_seq'`, seq)
		return err
	})
	if err != nil {
		return 0, err
	}
	t.last = seq
	return seq, nil
}

func (t *monitorTx) PutPart(name string, body []byte) error {
	return t.run("write snapshot", func() error {
		if _, err := t.tx.Exec(t.ctx, `DELETE FROM monitor_parts WHERE name = ?`, t.s.e.MonitorName(name)); err != nil || body == nil {
			return err
		}
		return t.putBody("monitor_parts", "name", t.s.e.MonitorName(name), body)
	})
}

func (t *monitorTx) FoldLog(seq, keep int64) error {
	return t.run("fold log", func() error {
		if _, err := t.tx.Exec(t.ctx, `UPDATE monitor_meta SET value = ? WHERE name = 'snapshot_seq'`, seq); err != nil {
			return err
		}
		_, err := t.tx.Exec(t.ctx, `DELETE FROM monitor_log WHERE seq <= ?`, seq-keep)
		return err
	})
}
