// Package postgres is crawlkeeper's PostgreSQL store, through
// github.com/jackc/pgx/v5: the engine of internal/sqlstore for PostgreSQL.
//
// Keys are locked through record_keys (sqlstore.Keys), with
//
//	INSERT INTO record_keys (key) SELECT ... ORDER BY key
//	ON CONFLICT (key) DO UPDATE SET key = excluded.key WHERE false
//
// which inserts the missing keys and row-locks the existing ones without
// writing them. Row locks live in the tuples, not in the shared lock
// table, so a batch of thousands of keys cannot exhaust it the way
// thousands of advisory locks could. Transactions run in READ COMMITTED,
// so each statement after the lock sees every commit before it; those
// that lose a deadlock or serialization race are run again a few times,
// then fail with ECONFLICT.
//
// PostgreSQL text cannot hold the NUL character, which a crawler may put
// in a title, URL or source. Text columns therefore store NUL as U+FFFF
// followed by "0" (and U+FFFF itself as two U+FFFF), which every read
// reverses: values round-trip exactly and equality stays exact.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the PostgreSQL implementation of crawlkeeper.Store.
type Store struct {
	// Store holds the logic shared with the other SQL engines; its
	// methods are this store's.
	*sqlstore.Store

	pool *pgxpool.Pool
	// where names the server in messages, without the password.
	where      string
	durability crawlkeeper.Durability
}

var _ crawlkeeper.Store = (*Store)(nil)

// Open connects to the database named by a postgres:// or postgresql://
// URL (any libpq connection parameter may be given as a query parameter,
// search_path included) with the default options and applies pending
// migrations.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	return OpenWith(ctx, rawURL, crawlkeeper.StoreOptions{})
}

// OpenWith is Open with options. Durability full runs every session with
// synchronous_commit=on, so a commit is flushed to the server's disk before
// it is acknowledged whatever the server's default; normal runs with
// synchronous_commit=off. A synchronous_commit given in the URL wins.
// The setting is made by a SET on each new connection rather than as a
// startup parameter, which connection poolers such as PgBouncer refuse.
func OpenWith(ctx context.Context, rawURL string, opts crawlkeeper.StoreOptions) (*Store, error) {
	where := storeenc.Redact(rawURL)
	durability := opts.Durability.OrDefault()
	if err := durability.Validate(); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %s: %v", where, storeenc.RedactErr(err, rawURL))
	}
	if _, set := cfg.ConnConfig.RuntimeParams["synchronous_commit"]; !set {
		setting := "SET synchronous_commit = on"
		if durability == crawlkeeper.DurabilityNormal {
			setting = "SET synchronous_commit = off"
		}
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			_, err := c.Exec(ctx, setting)
			return err
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %s: %v", where, storeenc.RedactErr(err, rawURL))
	}
	s := &Store{pool: pool, where: where, durability: durability}
	s.Store = sqlstore.New(engine{s: s})
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, &crawlkeeper.Error{Code: crawlkeeper.EUNAVAILABLE,
			Message: fmt.Sprintf("cannot reach PostgreSQL at %s: check that the server runs and the URL is right", where), Err: err}
	}
	var enc string
	if err := pool.QueryRow(ctx, `SHOW server_encoding`).Scan(&enc); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open %s: %w", where, err)
	}
	if enc != "UTF8" {
		pool.Close()
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "database at %s uses encoding %s: crawlkeeper needs a database created with ENCODING 'UTF8'", where, enc)
	}
	// With MustExist, the search_path decides, as it does for every query
	// the store makes.
	err = s.Ready(ctx, where, opts.MustExist, `SELECT count(to_regclass('active'))`, s.migrate, pool.Close)
	if err != nil {
		return nil, err
	}
	return s, nil
}

var _ crawlkeeper.DurabilityReporter = (*Store)(nil)

// DurabilityStatus implements crawlkeeper.DurabilityReporter from the
// session's synchronous_commit and the server's fsync.
func (s *Store) DurabilityStatus(ctx context.Context) (*crawlkeeper.DurabilityStatus, error) {
	var syncCommit, fsync string
	if err := s.pool.QueryRow(ctx, `SELECT current_setting('synchronous_commit'), current_setting('fsync')`).Scan(&syncCommit, &fsync); err != nil {
		return nil, s.Engine().Wrap("durability", err)
	}
	st := &crawlkeeper.DurabilityStatus{Setting: s.durability}
	switch {
	case fsync != "on":
		st.Detail = "PostgreSQL runs with fsync=" + fsync + ": nothing is reliably on disk after an OS crash or power loss; the server's administrator must turn fsync on"
	case syncCommit == "off":
		st.Detail = "PostgreSQL synchronous_commit=off: commits survive a killed process; a server crash or power loss can lose the last ones (store.durability: full sets it on)"
	default:
		st.PowerLossSafe = true
		st.Detail = "PostgreSQL synchronous_commit=" + syncCommit + ", fsync=on: every commit is flushed to the server's disk before it is acknowledged"
	}
	return st, nil
}

// Pool returns the connection pool, for the benchmark's raw baselines and
// for packages that keep their own tables in the same database.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the connection pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// migrate applies the embedded migrations that the schema has not seen,
// each in its own transaction, in file-name order. A session advisory lock
// scoped to the schema makes processes that start together apply them
// once: the others wait, then find them applied.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	const lock = `SELECT pg_advisory_lock(2024120801, hashtext(coalesce(current_schema(), '')))`
	if _, err := conn.Exec(ctx, lock); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(2024120801, hashtext(coalesce(current_schema(), '')))`)
	return sqlstore.Migrate(ctx, pgQuerier{conn}, migrations, func(v int, _, body string) error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// Without arguments pgx uses the simple protocol, which runs
			// every statement of the file.
			if _, err := tx.Exec(ctx, body); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`, v, time.Now().UnixMicro())
			return err
		})
	})
}

// code returns the SQLSTATE of a PostgreSQL error, "" for any other.
func code(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// retryable reports whether err aborted a transaction that may succeed
// when run again: serialization_failure, deadlock_detected.
func retryable(err error) bool { c := code(err); return c == "40001" || c == "40P01" }

// Wrap maps err to the application's error codes.
func (e engine) Wrap(what string, err error) error {
	if known, ok := sqlstore.Known(err); ok || err == nil {
		return known
	}
	switch c := code(err); {
	case retryable(err):
		return &crawlkeeper.Error{Code: crawlkeeper.ECONFLICT, Message: what + ": a concurrent change won; retry", Err: err}
	case c == "23505": // unique_violation
		return &crawlkeeper.Error{Code: crawlkeeper.ECONFLICT, Message: what + ": a concurrent change stored the same key; retry", Err: err}
	case c != "", errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", what, err)
	}
	// A connection the server (or the network) closed shows up as
	// ErrConnClosed or a "conn closed" lock error on the pooled connection.
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) || sqlstore.NetworkError(err) ||
		errors.Is(err, pgconn.ErrConnClosed) || strings.Contains(err.Error(), "conn closed") {
		return &crawlkeeper.Error{Code: crawlkeeper.EUNAVAILABLE, Message: fmt.Sprintf("%s: PostgreSQL at %s did not answer; retry later", what, e.s.where), Err: err}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// The text escape for NUL, which PostgreSQL text cannot hold (see the
// package documentation). The replacers work on bytes, so any string
// round-trips, valid UTF-8 or not.
const textEsc = "\uffff"

var (
	encoder = strings.NewReplacer("\x00", textEsc+"0", textEsc, textEsc+textEsc)
	decoder = strings.NewReplacer(textEsc+"0", "\x00", textEsc+textEsc, textEsc)
)

// enc returns s as stored in a text column.
func enc(s string) string {
	if strings.IndexByte(s, 0) < 0 && !strings.Contains(s, textEsc) {
		return s
	}
	return encoder.Replace(s)
}

// dec is the inverse of enc.
func dec(s string) string {
	if !strings.Contains(s, textEsc) {
		return s
	}
	return decoder.Replace(s)
}
