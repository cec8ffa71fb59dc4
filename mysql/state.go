package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// GetState implements crawlkeeper.StateStore.
func (s *Store) GetState(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	err := s.db.QueryRowContext(ctx, `SELECT value FROM state WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.wrap("get state "+name, err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// PutState implements crawlkeeper.StateStore. REPLACE is the upsert both
// MySQL and MariaDB spell the same way.
func (s *Store) PutState(ctx context.Context, name string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	_, err := s.db.ExecContext(ctx, `REPLACE INTO state (name, value) VALUES (?, ?)`, name, value)
	return s.wrap("put state "+name, err)
}

// AppendJournal implements crawlkeeper.StateStore.
func (s *Store) AppendJournal(ctx context.Context, kind string, at time.Time, body json.RawMessage) error {
	if body == nil {
		body = json.RawMessage{}
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO journal (kind, at, body) VALUES (?, ?, ?)`, kind, at.UnixMicro(), []byte(body))
	return s.wrap("append journal", err)
}

// Journal implements crawlkeeper.StateStore.
func (s *Store) Journal(ctx context.Context, kind string, limit int) ([]crawlkeeper.JournalEntry, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, kind, at, body FROM journal WHERE kind = ? ORDER BY seq DESC LIMIT ?`, kind, limit)
	if err != nil {
		return nil, s.wrap("journal", err)
	}
	defer rows.Close()
	out := []crawlkeeper.JournalEntry{}
	for rows.Next() {
		var e crawlkeeper.JournalEntry
		var at int64
		var body []byte
		if err := rows.Scan(&e.Seq, &e.Kind, &at, &body); err != nil {
			return nil, s.wrap("journal", err)
		}
		e.At = crawlkeeper.MicrosTime(at)
		e.Body = body
		out = append(out, e)
	}
	return out, s.wrap("journal", rows.Err())
}

// AcquireLease implements crawlkeeper.StateStore. A conditional UPDATE
// takes the lease when it is ours or expired (InnoDB evaluates the
// condition on the newest committed row and locks it); when no row
// matched, an INSERT takes a free lease, and a duplicate key means another
// process holds it. Each step is atomic, so of several processes racing
// for a lease exactly one gets it.
func (s *Store) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	until := now.Add(ttl).UnixMicro()
	res, err := s.db.ExecContext(ctx, `UPDATE leases SET owner = ?, expires_at = ? WHERE name = ? AND (owner = ? OR expires_at <= ?)`,
		owner, until, name, owner, now.UnixMicro())
	if err != nil {
		return false, s.wrap("acquire lease "+name, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return false, s.wrap("acquire lease "+name, err)
	} else if n == 1 {
		return true, nil
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO leases (name, owner, expires_at) VALUES (?, ?, ?)`, name, owner, until)
	if isErr(err, errDupEntry) {
		return false, nil
	}
	if err != nil {
		return false, s.wrap("acquire lease "+name, err)
	}
	return true, nil
}

// ReleaseLease implements crawlkeeper.StateStore.
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM leases WHERE name = ? AND owner = ?`, name, owner)
	return s.wrap("release lease "+name, err)
}

// AddDeadLetter implements crawlkeeper.StateStore.
func (s *Store) AddDeadLetter(ctx context.Context, d crawlkeeper.DeadLetter) error {
	_, err := s.db.ExecContext(ctx, `REPLACE INTO dead_letters (id, version, processor, error, failures, at) VALUES (?, ?, ?, ?, ?, ?)`,
		d.ID, d.Version, d.Processor, []byte(d.Error), d.Failures, d.At.UnixMicro())
	return s.wrap(fmt.Sprintf("add dead letter %d", d.ID), err)
}

// DeadLetters implements crawlkeeper.StateStore.
func (s *Store) DeadLetters(ctx context.Context, limit int) ([]crawlkeeper.DeadLetter, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, version, processor, error, failures, at FROM dead_letters ORDER BY at, id LIMIT ?`, limit)
	if err != nil {
		return nil, s.wrap("dead letters", err)
	}
	defer rows.Close()
	out := []crawlkeeper.DeadLetter{}
	for rows.Next() {
		var d crawlkeeper.DeadLetter
		var at int64
		if err := rows.Scan(&d.ID, &d.Version, &d.Processor, &d.Error, &d.Failures, &at); err != nil {
			return nil, s.wrap("dead letters", err)
		}
		d.At = crawlkeeper.MicrosTime(at)
		out = append(out, d)
	}
	return out, s.wrap("dead letters", rows.Err())
}

// RemoveDeadLetters implements crawlkeeper.StateStore: the rows are locked
// and read, then deleted, in one transaction (MySQL has no DELETE ...
// RETURNING).
func (s *Store) RemoveDeadLetters(ctx context.Context, ids []int64) ([]int64, error) {
	if ids != nil && len(ids) == 0 {
		return []int64{}, nil
	}
	var out []int64
	err := s.inTx(ctx, "remove dead letters", func(tx *sql.Tx) error {
		out = []int64{}
		q, args := `SELECT id FROM dead_letters ORDER BY id FOR UPDATE`, []any(nil)
		if ids != nil {
			q, args = `SELECT id FROM dead_letters WHERE id IN (`+list(len(ids))+`) ORDER BY id FOR UPDATE`, int64s(ids)
		}
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			out = append(out, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		return deleteIDs(ctx, tx, "dead_letters", out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
