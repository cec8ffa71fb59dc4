// Package mysql is crawlkeeper's MySQL and MariaDB store, through
// github.com/go-sql-driver/mysql: the engine of internal/sqlstore for
// MySQL 8 and MariaDB 10.11, in one SQL dialect, on InnoDB.
//
// Keys are locked through record_keys (sqlstore.Keys), with
//
//	INSERT INTO record_keys (`key`) VALUES (...), ... ON DUPLICATE KEY UPDATE `key` = `key`
//
// with the keys sorted, which inserts the missing keys and takes an
// exclusive lock on the existing ones (the update changes nothing).
// Sessions run in READ COMMITTED, so each read after the lock sees every
// commit before it (InnoDB's default REPEATABLE READ would keep reading
// the transaction's first snapshot); transactions that lose a deadlock are
// run again a few times, then fail with ECONFLICT.
//
// # MySQL and MariaDB
//
// The dialect avoids what only one of them has: no RETURNING (MariaDB
// only), no VALUES() in ON DUPLICATE KEY UPDATE (deprecated in MySQL 8)
// and no row alias there (MySQL only), no sequences (MariaDB only), no
// table value constructors (ROW(...) in MySQL, bare VALUES in MariaDB), no
// PERCENTILE_CONT (MariaDB only; the median uses window functions, which
// both have), no IF NOT EXISTS on CREATE INDEX (MariaDB only; indexes are
// declared with their tables). The one setting that differs by name is the
// session's isolation level: transaction_isolation on MySQL, tx_isolation
// on MariaDB 10.11; Open asks the server which it is.
package mysql

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	"github.com/crawlkeeper/crawlkeeper/internal/storeenc"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the MySQL/MariaDB implementation of crawlkeeper.Store.
type Store struct {
	// Store holds the logic shared with the other SQL engines; its
	// methods are this store's.
	*sqlstore.Store

	db *sql.DB
	// where names the server in messages, without the password.
	where string
	// maxStatement bounds the bytes of one statement, below the server's
	// max_allowed_packet.
	maxStatement int
	// mariaDB is set when the server is MariaDB.
	mariaDB    bool
	durability crawlkeeper.Durability
}

var _ crawlkeeper.Store = (*Store)(nil)

// Config returns the driver configuration for a mysql:// or mariadb://
// URL: mysql://user:password@host:port/database?param=value. The port
// defaults to 3306; socket=/path connects through a Unix socket instead;
// other parameters are the driver's (tls, timeout, ...) or session
// variables.
func Config(rawURL string) (*driver.Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "mysql" && u.Scheme != "mariadb") {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %s: use mysql://user:password@host:3306/database", storeenc.Redact(rawURL))
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %s names no database: use mysql://user:password@host:3306/database", storeenc.Redact(rawURL))
	}
	q := u.Query()
	socket := q.Get("socket")
	q.Del("socket")
	cfg, err := driver.ParseDSN("/?" + q.Encode())
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %s: %v", storeenc.Redact(rawURL), err)
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.Net, cfg.Addr = "tcp", cmp.Or(u.Host, "127.0.0.1")
	if socket != "" {
		cfg.Net, cfg.Addr = "unix", socket
	} else if u.Port() == "" {
		cfg.Addr += ":3306"
	}
	cfg.DBName = db
	// One round trip per statement, with no server-side prepared
	// statements to leak.
	cfg.InterpolateParams = true
	// Conditional UPDATEs report the rows they matched, also when the
	// values written equal those stored (renewing a lease at the same
	// expiry, writing the same processing result twice).
	cfg.ClientFoundRows = true
	// Read the server's max_allowed_packet instead of assuming one.
	cfg.MaxAllowedPacket = 0
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	// A known mode: strict, and without ANSI_QUOTES or
	// NO_BACKSLASH_ESCAPES, which would change how statements parse.
	cfg.Params["sql_mode"] = "'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'"
	return cfg, nil
}

// Open connects to the database named by a mysql:// or mariadb:// URL
// (see Config) with the default options and applies pending migrations.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	return OpenWith(ctx, rawURL, crawlkeeper.StoreOptions{})
}

// OpenWith is Open with options. How durable a commit is on MySQL and
// MariaDB is the server's global setting (innodb_flush_log_at_trx_commit),
// which a session cannot change: DurabilityStatus reports whether it keeps
// the promise of the durability setting.
func OpenWith(ctx context.Context, rawURL string, opts crawlkeeper.StoreOptions) (*Store, error) {
	durability := opts.Durability.OrDefault()
	if err := durability.Validate(); err != nil {
		return nil, err
	}
	cfg, err := Config(rawURL)
	if err != nil {
		return nil, err
	}
	where := storeenc.Redact(rawURL)
	s := &Store{where: where, durability: durability}
	s.Store = sqlstore.New(engine{s: s})
	// A first connection tells MySQL from MariaDB, whose isolation-level
	// variables have different names, before the pool is configured.
	var version string
	var packet int
	probe, err := driver.NewConnector(cfg)
	if err == nil {
		db := sql.OpenDB(probe)
		err = db.QueryRowContext(ctx, `SELECT VERSION(), @@max_allowed_packet`).Scan(&version, &packet)
		db.Close()
	}
	if err != nil {
		return nil, s.unreachable(err)
	}
	s.mariaDB = strings.Contains(strings.ToLower(version), "mariadb")
	iso := "transaction_isolation"
	if s.mariaDB {
		iso = "tx_isolation"
	}
	cfg.Params[iso] = "'READ-COMMITTED'"
	// Leave room for the statement text around the values and for the
	// escaping of binary values.
	s.maxStatement = max(packet-64<<10, 1<<20)
	conn, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %s: %v", where, err)
	}
	s.db = sql.OpenDB(conn)
	// An ingest takes ids on a second connection while its transaction
	// holds one, so the pool must not be capped at the number of
	// concurrent transactions; keeping idle connections spares the
	// handshake and session setup on every batch.
	s.db.SetMaxIdleConns(16)
	s.db.SetConnMaxIdleTime(5 * time.Minute)
	err = s.Ready(ctx, where, opts.MustExist, `SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'active'`, s.migrate, func() { s.db.Close() })
	if err != nil {
		return nil, err
	}
	return s, nil
}

var _ crawlkeeper.DurabilityReporter = (*Store)(nil)

// DurabilityStatus implements crawlkeeper.DurabilityReporter from the
// server's innodb_flush_log_at_trx_commit.
func (s *Store) DurabilityStatus(ctx context.Context) (*crawlkeeper.DurabilityStatus, error) {
	var flush int
	if err := s.db.QueryRowContext(ctx, `SELECT @@innodb_flush_log_at_trx_commit`).Scan(&flush); err != nil {
		return nil, s.Engine().Wrap("durability", err)
	}
	st := &crawlkeeper.DurabilityStatus{Setting: s.durability}
	if flush == 1 {
		st.PowerLossSafe = true
		st.Detail = "innodb_flush_log_at_trx_commit=1: every commit's log is flushed to the server's disk before it is acknowledged"
	} else {
		st.Detail = fmt.Sprintf("innodb_flush_log_at_trx_commit=%d: the server flushes its log about once a second, so a server crash or power loss can lose up to a second of acknowledged batches; the server's administrator sets it to 1 for durability full", flush)
	}
	return st, nil
}

func (s *Store) unreachable(err error) error {
	msg := fmt.Sprintf("cannot reach MySQL/MariaDB at %s: check that the server runs and the URL is right", s.where)
	var me *driver.MySQLError
	if errors.As(err, &me) {
		msg = fmt.Sprintf("cannot use the database at %s: %s", s.where, me.Message)
	}
	return &crawlkeeper.Error{Code: crawlkeeper.EUNAVAILABLE, Message: msg, Err: err}
}

// DB returns the connection pool, for the benchmark's raw baselines and
// for packages that keep their own tables in the same database.
func (s *Store) DB() *sql.DB { return s.db }

// MariaDB reports whether the server is MariaDB rather than MySQL.
func (s *Store) MariaDB() bool { return s.mariaDB }

// Close closes the connection pool.
func (s *Store) Close() error { return s.db.Close() }

// migrate applies the embedded migrations that the database has not seen,
// in file-name order, under a named lock (GET_LOCK) scoped to the
// database, so processes that start together apply them once. MySQL
// commits DDL statement by statement; every statement of a migration can
// run again, so a migration cut short by a crash completes on the next
// start.
func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.unreachable(err)
	}
	defer conn.Close()
	var dbName string
	if err := conn.QueryRowContext(ctx, `SELECT DATABASE()`).Scan(&dbName); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sum := sha256.Sum256([]byte(dbName))
	lock := "crawlkeeper.migrate." + hex.EncodeToString(sum[:12])
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT GET_LOCK(?, 120)`, lock).Scan(&got); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	if got.Int64 != 1 {
		return crawlkeeper.Errorf(crawlkeeper.EUNAVAILABLE, "migrate %s: another process held the migration lock for two minutes; retry", s.where)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT RELEASE_LOCK(?)`, lock)
	return sqlstore.Migrate(ctx, sqlstore.SQL(conn), migrations, func(v int, _, body string) error {
		for _, stmt := range statements(body) {
			if _, err := conn.ExecContext(ctx, stmt); err != nil && !alreadyApplied(err) {
				return err
			}
		}
		_, err := conn.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, time.Now().UnixMicro())
		return err
	})
}

// alreadyApplied reports whether a migration statement failed because
// what it creates already exists, or what it drops is already gone.
// MySQL and MariaDB commit each DDL statement by itself, so a process
// stopped between the statements of a migration, or before recording it,
// leaves some of them applied; the next run applies the rest. Each
// statement is one ALTER, CREATE or DROP, which the server applies whole
// or not at all.
func alreadyApplied(err error) bool {
	var me *driver.MySQLError
	return errors.As(err, &me) && slices.Contains([]uint16{
		1050, // ER_TABLE_EXISTS_ERROR
		1060, // ER_DUP_FIELDNAME
		1061, // ER_DUP_KEYNAME
		1091, // ER_CANT_DROP_FIELD_OR_KEY
	}, me.Number)
}

// statements splits a migration file into statements: each ends with a
// semicolon at the end of a line; lines starting with -- are comments.
func statements(body string) []string {
	var out []string
	var b strings.Builder
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(b.String()), ";"))
			b.Reset()
		}
	}
	if strings.TrimSpace(b.String()) != "" {
		out = append(out, b.String())
	}
	return out
}

// MySQL error numbers the store handles.
const (
	errDupEntry     = 1062
	errLockWait     = 1205
	errDeadlock     = 1213
	errPacketTooBig = 1153
)

func isErr(err error, number uint16) bool {
	var me *driver.MySQLError
	return errors.As(err, &me) && me.Number == number
}

// Wrap maps err to the application's error codes.
func (e engine) Wrap(what string, err error) error {
	if known, ok := sqlstore.Known(err); ok || err == nil {
		return known
	}
	switch {
	case isErr(err, errDeadlock), isErr(err, errLockWait):
		return &crawlkeeper.Error{Code: crawlkeeper.ECONFLICT, Message: what + ": a concurrent change won; retry", Err: err}
	case isErr(err, errDupEntry):
		return &crawlkeeper.Error{Code: crawlkeeper.ECONFLICT, Message: what + ": a concurrent change stored the same key; retry", Err: err}
	case isErr(err, errPacketTooBig), errors.Is(err, driver.ErrPktTooLarge):
		return &crawlkeeper.Error{Code: crawlkeeper.ETOOLARGE, Message: what + ": a record exceeds the server's max_allowed_packet; raise it or lower limits.max_item_bytes", Err: err}
	case errors.Is(err, driver.ErrInvalidConn), sqlstore.NetworkError(err):
		return &crawlkeeper.Error{Code: crawlkeeper.EUNAVAILABLE, Message: fmt.Sprintf("%s: the connection to %s broke; retry later", what, e.s.where), Err: err}
	}
	return fmt.Errorf("%s: %w", what, err)
}
