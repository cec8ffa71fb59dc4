// Package sqlite is crawlkeeper's embedded store: records, archive and
// history in one SQLite file, through the pure-Go driver modernc.org/sqlite
// (no cgo, so the binary cross-compiles and runs on pipeline workers).
//
// The database runs in WAL mode, so readers never block the writer, with
// synchronous=FULL by default: a committed transaction is on disk when
// Commit returns and survives a power loss. With durability normal it runs
// synchronous=NORMAL, which survives a killed process but may lose the last
// commits to an operating-system crash or a power loss. All writes go
// through one connection that begins transactions with BEGIN IMMEDIATE, so
// concurrent writers queue instead of failing with SQLITE_BUSY when a read
// transaction tries to upgrade.
package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/sqlstore"
	msqlite "modernc.org/sqlite" // also registers the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the SQLite implementation of crawlkeeper.Store.
type Store struct {
	// Store holds the logic shared with the other SQL engines; its
	// methods are this store's.
	*sqlstore.Store

	path       string
	durability crawlkeeper.Durability
	// w is the single writer connection; r is a pool of readers.
	w *sql.DB
	r *sql.DB

	// stmts caches prepared statements of hot read queries on r.
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt
	// wstmts caches statements prepared on the writer connection, which
	// write transactions borrow (see writeStmt).
	wstmtMu sync.Mutex
	wstmts  map[string]*sql.Stmt
	wanted  map[string]bool
}

// readStmt returns a prepared statement for query on the reader pool,
// preparing it once. Hot paths use it: preparing costs about as much as
// reading a thousand index entries.
func (s *Store) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st, ok := s.stmts[query]; ok {
		return st, nil
	}
	st, err := s.r.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if s.stmts == nil || len(s.stmts) > 256 {
		s.stmts = closeStmts(s.stmts)
	}
	s.stmts[query] = st
	return st, nil
}

// closeStmts closes the statements of a cache and returns it empty: a
// cache starts again when it is full (the store runs a few hundred
// statement texts) and when the store closes.
func closeStmts(m map[string]*sql.Stmt) map[string]*sql.Stmt {
	for _, st := range m {
		st.Close()
	}
	return map[string]*sql.Stmt{}
}

// writeStmt returns query prepared for tx. A statement seen before is
// prepared once on the single writer connection and borrowed by each
// transaction: preparing multi-row statements per batch cost about an
// eighth of a rescan write-back. Tx.StmtContext reuses a statement already
// prepared on the transaction's connection, and closing the borrowed one
// (or ending the transaction) leaves the cached one open.
//
// A statement not yet cached is prepared on the transaction alone and
// noted: preparing on the pool here would wait for the one writer
// connection, which this transaction holds. beginWrite prepares the noted
// statements before the next transaction starts.
func (s *Store) writeStmt(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	s.wstmtMu.Lock()
	st, ok := s.wstmts[query]
	if !ok {
		if s.wanted == nil {
			s.wanted = map[string]bool{}
		}
		s.wanted[query] = true
	}
	s.wstmtMu.Unlock()
	if ok {
		return tx.StmtContext(ctx, st), nil
	}
	return tx.PrepareContext(ctx, query)
}

// beginWrite starts a write transaction on the writer connection after
// preparing the statements that earlier transactions asked for. The lock
// is not held while preparing: a transaction in progress may need it.
func (s *Store) beginWrite(ctx context.Context) (*sql.Tx, error) {
	s.wstmtMu.Lock()
	todo := s.wanted
	s.wanted = nil
	s.wstmtMu.Unlock()
	for q := range todo {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		s.wstmtMu.Lock()
		if s.wstmts == nil || len(s.wstmts) > 256 {
			s.wstmts = closeStmts(s.wstmts)
		}
		if _, dup := s.wstmts[q]; dup {
			st.Close()
		} else {
			s.wstmts[q] = st
		}
		s.wstmtMu.Unlock()
	}
	return s.w.BeginTx(ctx, nil)
}

var _ crawlkeeper.Store = (*Store)(nil)

// Open opens or creates the database file at path with the default
// options and applies pending migrations.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, crawlkeeper.StoreOptions{})
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, opts crawlkeeper.StoreOptions) (*Store, error) {
	durability := opts.Durability.OrDefault()
	if err := durability.Validate(); err != nil {
		return nil, err
	}
	if opts.MustExist {
		// Neither the folder nor the file is created; a file that is
		// there is checked for the store's tables once open.
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, crawlkeeper.NoStoreError(path)
		} else if err != nil {
			// A data folder that is a file ("not a directory"), a
			// file that cannot be read.
			return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "open %s: %v", path, err)
		}
	} else if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "create data folder %s: %v", dir, err)
		}
	}
	w, err := sql.Open("sqlite", dsn(path, true, durability))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	r, err := sql.Open("sqlite", dsn(path, false, durability))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	s := &Store{path: path, durability: durability, w: w, r: r}
	s.Store = sqlstore.New(engine{s: s})
	err = s.Ready(ctx, path, opts.MustExist, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'active'`, s.migrate, func() { s.Close() })
	if notADatabase(err) {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "%v: is it a crawlkeeper store?", err)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// notADatabase reports whether err is SQLite's "file is not a database":
// the path names some other file.
func notADatabase(err error) bool {
	var se *msqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_NOTADB
}

// readerCache is a reader connection's page cache, in KiB (see dsn).
const readerCache = 8192

func dsn(path string, writer bool, d crawlkeeper.Durability) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	if d == crawlkeeper.DurabilityNormal {
		q.Add("_pragma", "synchronous(NORMAL)")
	} else {
		q.Add("_pragma", "synchronous(FULL)")
	}
	q.Add("_pragma", "busy_timeout(30000)")
	q.Add("_pragma", "foreign_keys(OFF)")
	// A reader's page cache is dropped whole at its next read after any
	// write by another connection (SQLite's rule for a changed file), and
	// modernc.org/memory returns every dropped page with its own madvise
	// call: a 64 MB reader cache made each page of a purge or rescan that
	// writes between reads pay for up to 16,000 of them. Readers keep 8 MB
	// (the operating system caches the file); the writer, whose cache no
	// other connection invalidates, keeps 64 MB.
	if writer {
		q.Add("_pragma", "cache_size(-65536)")
	} else {
		q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", readerCache))
	}
	q.Add("_pragma", "temp_store(MEMORY)")
	// No memory-mapped I/O: every page of the file a process touches
	// through a mapping counts in its resident memory, so an archive pass
	// over a store of a few hundred megabytes used most of a gigabyte. Read
	// into SQLite's page cache instead, which cache_size bounds per
	// connection, the speed of a rescan's page read is the same (measured
	// with BenchmarkScanActive; the operating system caches the file).
	q.Add("_pragma", "mmap_size(0)")
	q.Add("_pragma", "wal_autocheckpoint(16384)")
	if writer {
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

var (
	_ crawlkeeper.DurabilityReporter = (*Store)(nil)
	_ crawlkeeper.LifetimeReader     = (*Store)(nil)
)

// DurabilityStatus implements crawlkeeper.DurabilityReporter from the
// writer connection's synchronous setting.
func (s *Store) DurabilityStatus(ctx context.Context) (*crawlkeeper.DurabilityStatus, error) {
	var level int
	if err := s.w.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&level); err != nil {
		return nil, fmt.Errorf("durability: %w", err)
	}
	st := &crawlkeeper.DurabilityStatus{Setting: s.durability}
	switch {
	case level >= 2: // FULL or EXTRA
		st.PowerLossSafe = true
		st.Detail = "SQLite synchronous=FULL in WAL mode: every commit is synced to disk before it is acknowledged"
	default:
		st.Detail = "SQLite synchronous=NORMAL in WAL mode: commits survive a killed process; an OS crash or power loss can lose the last ones (store.durability: full syncs every commit)"
	}
	return st, nil
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// DB returns the writer connection pool, for the benchmark's raw baselines
// and for packages that keep their own tables in the same file.
func (s *Store) DB() *sql.DB { return s.w }

// ReadDB returns the reader connection pool.
func (s *Store) ReadDB() *sql.DB { return s.r }

// Close closes both connection pools.
func (s *Store) Close() error {
	s.stmtMu.Lock()
	s.stmts = closeStmts(s.stmts)
	s.stmtMu.Unlock()
	s.wstmtMu.Lock()
	s.wstmts = closeStmts(s.wstmts)
	s.wstmtMu.Unlock()
	return cmp.Or(s.r.Close(), s.w.Close())
}

// migrate applies the embedded migrations that the database has not seen,
// each in its own transaction, in file-name order.
func (s *Store) migrate(ctx context.Context) error {
	return sqlstore.Migrate(ctx, sqlstore.SQL(s.w), migrations, func(v int, _, body string) error {
		return sqlstore.InTx(ctx, s.w, nil, true, func(tx sqlstore.Querier) error {
			if _, err := tx.Exec(ctx, body); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v, time.Now().UnixMicro())
			return err
		})
	})
}
