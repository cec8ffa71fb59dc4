// Package backends is the one place where a URL picks a backend: the store
// (sqlite, postgres, mysql, mongodb), the monitor and the notification
// queue. Commands, the benchmark and the test harnesses all open backends
// through it, so a new scheme is added here and nowhere else.
package backends

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/memqueue"
	"github.com/crawlkeeper/crawlkeeper/nats"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// DefaultDataDir is the folder of the embedded store when --data is not
// given.
const DefaultDataDir = "./crawlkeeper-data"

// SQLiteFile is the embedded store's file name inside the data folder.
const SQLiteFile = "crawlkeeper.db"

// StoreSchemes lists the accepted store URL schemes, for messages.
var StoreSchemes = []string{"sqlite"}

// OpenStore opens the store named by rawURL. An empty URL means the
// embedded SQLite store in dataDir (DefaultDataDir when empty).
func OpenStore(ctx context.Context, rawURL, dataDir string) (crawlkeeper.Store, error) {
	if dataDir == "" {
		dataDir = DefaultDataDir
	}
	if rawURL == "" {
		return sqlite.Open(ctx, filepath.Join(dataDir, SQLiteFile))
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "store URL %q is not a URL: use one of %s", rawURL, strings.Join(examples(), ", "))
	}
	switch u.Scheme {
	case "sqlite", "sqlite3":
		path := SQLitePath(u)
		if path == "" {
			path = filepath.Join(dataDir, SQLiteFile)
		}
		return sqlite.Open(ctx, path)
	}
	return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "unknown store scheme %q in %q: use one of %s", u.Scheme, redact(u), strings.Join(examples(), ", "))
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
	return []string{"sqlite:///path/to/crawlkeeper.db"}
}

// redact hides a URL's password for messages and logs.
func redact(u *url.URL) string {
	return u.Redacted()
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
		return nats.Open(ctx, o)
	}
	return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "unknown queue scheme %q in %q: use nats://host:port, or none for the in-process queue", u.Scheme, redact(u))
}
