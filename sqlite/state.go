package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// GetState implements crawlkeeper.StateStore.
func (s *Store) GetState(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	err := s.r.QueryRowContext(ctx, `SELECT value FROM state WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get state %s: %w", name, err)
	}
	return v, nil
}

// PutState implements crawlkeeper.StateStore.
func (s *Store) PutState(ctx context.Context, name string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	_, err := s.w.ExecContext(ctx, `INSERT INTO state (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
	if err != nil {
		return fmt.Errorf("put state %s: %w", name, err)
	}
	return nil
}

// AppendJournal implements crawlkeeper.StateStore.
func (s *Store) AppendJournal(ctx context.Context, kind string, at time.Time, body json.RawMessage) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO journal (kind, at, body) VALUES (?, ?, ?)`, kind, at.UnixMicro(), []byte(body))
	if err != nil {
		return fmt.Errorf("append journal: %w", err)
	}
	return nil
}

// Journal implements crawlkeeper.StateStore.
func (s *Store) Journal(ctx context.Context, kind string, limit int) ([]crawlkeeper.JournalEntry, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.r.QueryContext(ctx, `SELECT seq, kind, at, body FROM journal WHERE kind = ? ORDER BY seq DESC LIMIT ?`, kind, limit)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	defer rows.Close()
	out := []crawlkeeper.JournalEntry{}
	for rows.Next() {
		var e crawlkeeper.JournalEntry
		var at int64
		var body []byte
		if err := rows.Scan(&e.Seq, &e.Kind, &at, &body); err != nil {
			return nil, err
		}
		e.At = crawlkeeper.MicrosTime(at)
		e.Body = body
		out = append(out, e)
	}
	return out, rows.Err()
}

// AcquireLease implements crawlkeeper.StateStore with one conditional
// upsert: the row changes only when it is free, expired or already ours.
func (s *Store) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	res, err := s.w.ExecContext(ctx, `INSERT INTO leases (name, owner, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE leases.owner = excluded.owner OR leases.expires_at <= ?`,
		name, owner, now.Add(ttl).UnixMicro(), now.UnixMicro())
	if err != nil {
		return false, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// ReleaseLease implements crawlkeeper.StateStore.
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	if _, err := s.w.ExecContext(ctx, `DELETE FROM leases WHERE name = ? AND owner = ?`, name, owner); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}

// AddDeadLetter implements crawlkeeper.StateStore.
func (s *Store) AddDeadLetter(ctx context.Context, d crawlkeeper.DeadLetter) error {
	_, err := s.w.ExecContext(ctx, `INSERT OR REPLACE INTO dead_letters (id, version, processor, error, failures, at) VALUES (?, ?, ?, ?, ?, ?)`,
		d.ID, d.Version, d.Processor, d.Error, d.Failures, d.At.UnixMicro())
	if err != nil {
		return fmt.Errorf("add dead letter %d: %w", d.ID, err)
	}
	return nil
}

// DeadLetters implements crawlkeeper.StateStore.
func (s *Store) DeadLetters(ctx context.Context, limit int) ([]crawlkeeper.DeadLetter, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := s.r.QueryContext(ctx, `SELECT id, version, processor, error, failures, at FROM dead_letters ORDER BY at, id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("dead letters: %w", err)
	}
	defer rows.Close()
	out := []crawlkeeper.DeadLetter{}
	for rows.Next() {
		var d crawlkeeper.DeadLetter
		var at int64
		if err := rows.Scan(&d.ID, &d.Version, &d.Processor, &d.Error, &d.Failures, &at); err != nil {
			return nil, err
		}
		d.At = crawlkeeper.MicrosTime(at)
		out = append(out, d)
	}
	return out, rows.Err()
}

// RemoveDeadLetters implements crawlkeeper.StateStore.
func (s *Store) RemoveDeadLetters(ctx context.Context, ids []int64) ([]int64, error) {
	query := `DELETE FROM dead_letters RETURNING id`
	var args []any
	if ids != nil {
		if len(ids) == 0 {
			return []int64{}, nil
		}
		query = `DELETE FROM dead_letters WHERE id IN (?` + strings.Repeat(",?", len(ids)-1) + `) RETURNING id`
		for _, id := range ids {
			args = append(args, id)
		}
	}
	rows, err := s.w.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("remove dead letters: %w", err)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
