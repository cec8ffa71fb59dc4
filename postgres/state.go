package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/jackc/pgx/v5"
)

// GetState implements crawlkeeper.StateStore.
func (s *Store) GetState(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, `SELECT value FROM state WHERE name = $1`, enc(name)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
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

// PutState implements crawlkeeper.StateStore.
func (s *Store) PutState(ctx context.Context, name string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO state (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value`, enc(name), value)
	return s.wrap("put state "+name, err)
}

// AppendJournal implements crawlkeeper.StateStore.
func (s *Store) AppendJournal(ctx context.Context, kind string, at time.Time, body json.RawMessage) error {
	if body == nil {
		body = json.RawMessage{}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO journal (kind, at, body) VALUES ($1, $2, $3)`, enc(kind), at.UnixMicro(), []byte(body))
	return s.wrap("append journal", err)
}

// Journal implements crawlkeeper.StateStore.
func (s *Store) Journal(ctx context.Context, kind string, limit int) ([]crawlkeeper.JournalEntry, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, kind, at, body FROM journal WHERE kind = $1 ORDER BY seq DESC LIMIT $2`, enc(kind), limit)
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
		e.Kind = dec(e.Kind)
		e.At = crawlkeeper.MicrosTime(at)
		e.Body = body
		out = append(out, e)
	}
	return out, s.wrap("journal", rows.Err())
}

// AcquireLease implements crawlkeeper.StateStore with one conditional
// upsert: the row changes only when it is free, expired or already ours.
// ON CONFLICT locks the row and evaluates the condition on its newest
// version, so of several processes racing for an expired lease exactly
// one gets it.
func (s *Store) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO leases (name, owner, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
		WHERE leases.owner = excluded.owner OR leases.expires_at <= $4`,
		enc(name), enc(owner), now.Add(ttl).UnixMicro(), now.UnixMicro())
	if err != nil {
		return false, s.wrap("acquire lease "+name, err)
	}
	return tag.RowsAffected() == 1, nil
}

// ReleaseLease implements crawlkeeper.StateStore.
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM leases WHERE name = $1 AND owner = $2`, enc(name), enc(owner))
	return s.wrap("release lease "+name, err)
}

// AddDeadLetter implements crawlkeeper.StateStore.
func (s *Store) AddDeadLetter(ctx context.Context, d crawlkeeper.DeadLetter) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO dead_letters (id, version, processor, error, failures, at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET version = excluded.version, processor = excluded.processor, error = excluded.error,
			failures = excluded.failures, at = excluded.at`,
		d.ID, d.Version, enc(d.Processor), []byte(d.Error), d.Failures, d.At.UnixMicro())
	return s.wrap(fmt.Sprintf("add dead letter %d", d.ID), err)
}

// DeadLetters implements crawlkeeper.StateStore.
func (s *Store) DeadLetters(ctx context.Context, limit int) ([]crawlkeeper.DeadLetter, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := s.pool.Query(ctx, `SELECT id, version, processor, error, failures, at FROM dead_letters ORDER BY at, id LIMIT $1`, limit)
	if err != nil {
		return nil, s.wrap("dead letters", err)
	}
	defer rows.Close()
	out := []crawlkeeper.DeadLetter{}
	for rows.Next() {
		var d crawlkeeper.DeadLetter
		var at int64
		var msg []byte
		if err := rows.Scan(&d.ID, &d.Version, &d.Processor, &msg, &d.Failures, &at); err != nil {
			return nil, s.wrap("dead letters", err)
		}
		d.Processor, d.Error = dec(d.Processor), string(msg)
		d.At = crawlkeeper.MicrosTime(at)
		out = append(out, d)
	}
	return out, s.wrap("dead letters", rows.Err())
}

// RemoveDeadLetters implements crawlkeeper.StateStore.
func (s *Store) RemoveDeadLetters(ctx context.Context, ids []int64) ([]int64, error) {
	q, args := `DELETE FROM dead_letters RETURNING id`, []any(nil)
	if ids != nil {
		if len(ids) == 0 {
			return []int64{}, nil
		}
		q, args = `DELETE FROM dead_letters WHERE id = ANY($1) RETURNING id`, []any{ids}
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, s.wrap("remove dead letters", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, s.wrap("remove dead letters", err)
	}
	if out == nil {
		out = []int64{}
	}
	return out, nil
}
