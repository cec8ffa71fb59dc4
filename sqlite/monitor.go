package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// The embedded monitor's persistence: crawlkeeper.MonitorPersister over the
// monitor_* tables (migration 003), and the hook that commits the marks of
// an ingest batch with its records.

var (
	_ crawlkeeper.MonitorPersister = (*Store)(nil)
	_ crawlkeeper.TxMarkStore      = (*Store)(nil)
)

// markerBox lets the marker be swapped atomically while ingests run.
type markerBox struct{ m crawlkeeper.TxMarker }

// SetTxMarker implements crawlkeeper.TxMarkStore: from now on Ingest
// writes a batch's marks through m in the batch's transaction.
func (s *Store) SetTxMarker(m crawlkeeper.TxMarker) {
	s.marker.Store(&markerBox{m: m})
}

func (s *Store) txMarker() crawlkeeper.TxMarker {
	if b := s.marker.Load(); b != nil {
		return b.m
	}
	return nil
}

// writeMarks appends the batch's marks inside the ingest transaction and
// returns the function to call once it committed (nil when there is
// nothing to do).
func (s *Store) writeMarks(ctx context.Context, tx *sql.Tx, marks []crawlkeeper.Mark) (func(), error) {
	mk := s.txMarker()
	if mk == nil || len(marks) == 0 {
		return nil, nil
	}
	done, err := mk.MarkTx(ctx, &monitorTx{ctx: ctx, tx: tx}, marks)
	if err != nil {
		return nil, fmt.Errorf("ingest: marks: %w", err)
	}
	return done, nil
}

// UpdateMonitor implements crawlkeeper.MonitorPersister on the writer
// connection (BEGIN IMMEDIATE, so it excludes other writers, in this and
// other processes).
func (s *Store) UpdateMonitor(ctx context.Context, fn func(tx crawlkeeper.MonitorTx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("monitor: begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(&monitorTx{ctx: ctx, tx: tx}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("monitor: commit: %w", err)
	}
	return nil
}

// ViewMonitor implements crawlkeeper.MonitorPersister on a reader
// connection.
func (s *Store) ViewMonitor(ctx context.Context, fn func(v crawlkeeper.MonitorView) error) error {
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("monitor: begin read: %w", err)
	}
	defer tx.Rollback()
	return fn(&monitorTx{ctx: ctx, tx: tx})
}

// monitorTx implements crawlkeeper.MonitorTx over one transaction.
type monitorTx struct {
	ctx context.Context
	tx  *sql.Tx
}

func (t *monitorTx) TargetsFrom(from uint32, fn func(id uint32, name string) error) error {
	rows, err := t.tx.QueryContext(t.ctx, `SELECT id, name FROM monitor_targets WHERE id >= ? ORDER BY id`, from)
	if err != nil {
		return fmt.Errorf("monitor: read targets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return fmt.Errorf("monitor: read targets: %w", err)
		}
		if err := fn(uint32(id), name); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (t *monitorTx) SnapshotSeq() (int64, error) {
	var seq int64
	if err := t.tx.QueryRowContext(t.ctx, `SELECT value FROM monitor_meta WHERE name = 'snapshot_seq'`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("monitor: read snapshot: %w", err)
	}
	return seq, nil
}

func (t *monitorTx) Parts(fn func(name string, body []byte) error) error {
	rows, err := t.tx.QueryContext(t.ctx, `SELECT name, body FROM monitor_parts ORDER BY name`)
	if err != nil {
		return fmt.Errorf("monitor: read snapshot: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var body []byte
		if err := rows.Scan(&name, &body); err != nil {
			return fmt.Errorf("monitor: read snapshot: %w", err)
		}
		if err := fn(name, body); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (t *monitorTx) LogSince(seq int64, fn func(seq int64, body []byte) error) error {
	rows, err := t.tx.QueryContext(t.ctx, `SELECT seq, body FROM monitor_log WHERE seq > ? ORDER BY seq`, seq)
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

// targetRows is how many dictionary rows one INSERT carries: a 400k-target
// queue is 2,000 statements rather than 400,000.
const targetRows = 200

func (t *monitorTx) AddTargets(first uint32, names []string) error {
	var st *sql.Stmt
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	args := make([]any, 0, 2*targetRows)
	for i := 0; i < len(names); i += targetRows {
		chunk := names[i:min(i+targetRows, len(names))]
		args = args[:0]
		for j, n := range chunk {
			args = append(args, int64(first)+int64(i+j), n)
		}
		q := `INSERT INTO monitor_targets (id, name) VALUES (?,?)` + strings.Repeat(",(?,?)", len(chunk)-1)
		var err error
		if len(chunk) == targetRows {
			if st == nil {
				if st, err = t.tx.PrepareContext(t.ctx, q); err != nil {
					return fmt.Errorf("monitor: add targets: %w", err)
				}
			}
			_, err = st.ExecContext(t.ctx, args...)
		} else {
			_, err = t.tx.ExecContext(t.ctx, q, args...)
		}
		if err != nil {
			return fmt.Errorf("monitor: add targets: %w", err)
		}
	}
	return nil
}

func (t *monitorTx) AppendLog(body []byte) (int64, error) {
	res, err := t.tx.ExecContext(t.ctx, `INSERT INTO monitor_log (body) VALUES (?)`, body)
	if err != nil {
		return 0, fmt.Errorf("monitor: append log: %w", err)
	}
	return res.LastInsertId()
}

func (t *monitorTx) PutPart(name string, body []byte) error {
	var err error
	if body == nil {
		_, err = t.tx.ExecContext(t.ctx, `DELETE FROM monitor_parts WHERE name = ?`, name)
	} else {
		_, err = t.tx.ExecContext(t.ctx, `INSERT INTO monitor_parts (name, body) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET body = excluded.body`, name, body)
	}
	if err != nil {
		return fmt.Errorf("monitor: write snapshot: %w", err)
	}
	return nil
}

func (t *monitorTx) FoldLog(seq, keep int64) error {
	if _, err := t.tx.ExecContext(t.ctx, `UPDATE monitor_meta SET value = ? WHERE name = 'snapshot_seq'`, seq); err != nil {
		return fmt.Errorf("monitor: fold log: %w", err)
	}
	if _, err := t.tx.ExecContext(t.ctx, `DELETE FROM monitor_log WHERE seq <= ?`, seq-keep); err != nil {
		return fmt.Errorf("monitor: fold log: %w", err)
	}
	return nil
}
