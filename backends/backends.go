// Package backends is the one place where a URL picks a backend: the store
// (sqlite, postgres, mysql, mongodb), the monitor and the notification
// queue. Commands, the benchmark and the test harnesses all open backends
// through it, so a new scheme is added here and nowhere else.
package backends

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/memqueue"
	"github.com/crawlkeeper/crawlkeeper/mongodb"
	"github.com/crawlkeeper/crawlkeeper/mysql"
	"github.com/crawlkeeper/crawlkeeper/nats"
	"github.com/crawlkeeper/crawlkeeper/postgres"
	"github.com/crawlkeeper/crawlkeeper/redis"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// DefaultDataDir is the folder of the embedded store when --data is not
// given.
const DefaultDataDir = "./crawlkeeper-data"

// SQLiteFile is the embedded store's file name inside the data folder.
const SQLiteFile = "crawlkeeper.db"

// StoreSchemes lists the accepted store URL schemes, for messages.
var StoreSchemes = []string{"sqlite", "postgres", "postgresql", "mysql", "mariadb", "mongodb", "mongodb+srv"}

// OpenStore opens the store named by rawURL with the default options. An
// empty URL means the embedded SQLite store in dataDir (DefaultDataDir when
// empty).
func OpenStore(ctx context.Context, rawURL, dataDir string) (crawlkeeper.Store, error) {
	return OpenStoreWith(ctx, rawURL, dataDir, crawlkeeper.StoreOptions{})
}

// OpenStoreWith is OpenStore with options. With opts.MustExist a location
// that holds no crawlkeeper store (no SQLite file, a database without the
// store's tables) is an ENOTFOUND error and nothing is created there.
func OpenStoreWith(ctx context.Context, rawURL, dataDir string, opts crawlkeeper.StoreOptions) (crawlkeeper.Store, error) {
	if dataDir == "" {
		dataDir = DefaultDataDir
	}
	if rawURL == "" {
		path := filepath.Join(dataDir, SQLiteFile)
		if opts.MustExist {
			// The message names the folder the user gave with --data.
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				return nil, crawlkeeper.NoStoreError(dataDir)
			}
		}
		return sqlite.OpenWith(ctx, path, opts)
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %q is not a URL: use one of %s", redactRaw(rawURL), strings.Join(examples(), ", "))
	}
	switch u.Scheme {
	case "sqlite", "sqlite3":
		path := SQLitePath(u)
		if path == "" {
			path = filepath.Join(dataDir, SQLiteFile)
		}
		return sqlite.OpenWith(ctx, path, opts)
	case "postgres", "postgresql":
		return postgres.OpenWith(ctx, rawURL, opts)
	case "mysql", "mariadb":
		return mysql.OpenWith(ctx, rawURL, opts)
	case "mongodb", "mongodb+srv":
		return mongodb.OpenWith(ctx, rawURL, opts)
	}
	return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "unknown store scheme %q in %q: use one of %s", u.Scheme, redact(u), strings.Join(examples(), ", "))
}

// NewScratch creates an empty, uniquely named store location of the same
// kind as rawURL (a schema, a database, or for SQLite a file in a new
// temporary folder under dataDir) and returns its URL; drop removes it.
// Tests and the benchmark use throw-away stores, and the benchmark's raw
// baselines open their own connections to the same URL.
func NewScratch(ctx context.Context, rawURL, dataDir, name string) (string, func(), error) {
	scheme := ""
	if rawURL != "" {
		u, err := url.Parse(rawURL)
		if err != nil {
			return "", nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %q is not a URL", redactRaw(rawURL))
		}
		scheme = u.Scheme
	}
	switch scheme {
	case "", "sqlite", "sqlite3":
		if dataDir == "" {
			dataDir = os.TempDir()
		}
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			return "", nil, err
		}
		dir, err := os.MkdirTemp(dataDir, "scratch-"+name+"-")
		if err != nil {
			return "", nil, err
		}
		abs, err := filepath.Abs(filepath.Join(dir, SQLiteFile))
		if err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
		return "sqlite://" + abs, func() { os.RemoveAll(dir) }, nil
	case "postgres", "postgresql":
		return postgres.NewScratch(ctx, rawURL, name)
	case "mysql", "mariadb":
		return mysql.NewScratch(ctx, rawURL, name)
	case "mongodb", "mongodb+srv":
		return mongodb.NewScratch(ctx, rawURL, name)
	}
	return "", nil, crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "no scratch stores for scheme %q", scheme)
}

// OpenScratch opens a store in a new scratch location (NewScratch); close
// closes the store and removes the location.
func OpenScratch(ctx context.Context, rawURL, dataDir, name string) (crawlkeeper.Store, func(), error) {
	u, drop, err := NewScratch(ctx, rawURL, dataDir, name)
	if err != nil {
		return nil, nil, err
	}
	st, err := OpenStore(ctx, u, "")
	if err != nil {
		drop()
		return nil, nil, err
	}
	return st, func() { st.Close(); drop() }, nil
}

// MonitorSchemes lists the accepted monitor URL schemes, for messages.
var MonitorSchemes = []string{"redis"}

// OpenMonitor opens the crawl monitor named by rawURL. An empty URL means
// the embedded monitor (package roaringmon) persisted in store (every store
// of this repository can hold it); it also makes a store with transactions
// commit ingest marks with the records. redis://host:port/db selects the
// Redis monitor. The monitor does not own store: close the monitor first,
// then the store.
func OpenMonitor(ctx context.Context, rawURL string, store crawlkeeper.Store, opts crawlkeeper.MonitorOptions) (crawlkeeper.Monitor, error) {
	if rawURL == "" {
		p, ok := store.(crawlkeeper.MonitorPersister)
		if !ok {
			return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "this store cannot hold the embedded crawl monitor: use --monitor redis://host:port/db")
		}
		m, err := roaringmon.Open(ctx, p, opts)
		if err != nil {
			return nil, err
		}
		if ms, ok := store.(crawlkeeper.TxMarkStore); ok {
			ms.SetTxMarker(m)
		}
		return m, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "monitor URL %q is not a URL: use redis://host:port/db, or leave --monitor out for the embedded monitor", rawURL)
	}
	switch u.Scheme {
	case "redis", "rediss":
		m, err := redis.Open(ctx, rawURL, opts)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "unknown monitor scheme %q in %q: use redis://host:port/db, or leave --monitor out for the embedded monitor", u.Scheme, redact(u))
}

// SQLitePath returns the file path of a sqlite URL: sqlite:///abs/path,
// sqlite:relative/path or sqlite://host-less/relative.
func SQLitePath(u *url.URL) string {
	switch {
	case u.Opaque != "":
		return u.Opaque
	case u.Host != "":
		return filepath.Join(u.Host, u.Path)
	}
	return u.Path
}

func examples() []string {
	return []string{"sqlite:///path/to/crawlkeeper.db", "postgres://user:password@host:5432/database", "mysql://user:password@host:3306/database", "mongodb://user:password@host:27017/database"}
}

// redact hides a URL's password for messages and logs.
func redact(u *url.URL) string {
	return u.Redacted()
}

// redactRaw hides what may be a password in a string that did not parse
// as a URL: everything between "://" and the last "@" of the authority.
func redactRaw(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return raw
	}
	return raw[:i+3] + "xxxxx" + rest[at:]
}

// QueueSchemes lists the accepted queue URL schemes, for messages.
var QueueSchemes = []string{"nats"}

// OpenQueue opens the notification queue named by rawURL. An empty URL
// means the in-process queue; nats://host:port (with optional stream,
// subject and consumer query parameters) means NATS JetStream. Opening a
// NATS queue does not fail when the server is down: notifications are
// dropped until it answers, and rescans cover them.
func OpenQueue(ctx context.Context, rawURL string) (crawlkeeper.Queue, error) {
	if rawURL == "" {
		return memqueue.New(0), nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "queue URL %q is not a URL: use nats://host:port, or none for the in-process queue", rawURL)
	}
	switch u.Scheme {
	case "nats":
		o, err := nats.ParseURL(rawURL)
		if err != nil {
			return nil, err
		}
		q, err := nats.Open(ctx, o)
		if err != nil {
			return nil, err
		}
		return q, nil
	}
	return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "unknown queue scheme %q in %q: use nats://host:port, or none for the in-process queue", u.Scheme, redact(u))
}
