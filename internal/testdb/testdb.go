// Package testdb gives a test an empty store of each kind: a SQLite file in
// the test's temporary folder, or a new schema or database on the server
// named by a CRAWLKEEPER_TEST_* variable, removed when the test ends. A test
// whose server variable is unset is skipped with a message naming it, so
// `go test ./...` passes on a bare machine and CI, which sets them all,
// runs everything.
package testdb

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper/backends"
)

// The variables that name the test servers.
const (
	PostgresEnv = "CRAWLKEEPER_TEST_POSTGRES"
	MySQLEnv    = "CRAWLKEEPER_TEST_MYSQL"
	MongoEnv    = "CRAWLKEEPER_TEST_MONGO"
)

// Store kinds, as URL schemes.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
	MySQL    = "mysql"
	MongoDB  = "mongodb"
)

// Kinds lists every store kind, for tests that run on each backend.
var Kinds = []string{SQLite, Postgres, MySQL, MongoDB}

var servers = map[string]struct{ env, example string }{
	Postgres: {PostgresEnv, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"},
	MySQL:    {MySQLEnv, "mysql://root@127.0.0.1:3306/test"},
	MongoDB:  {MongoEnv, "mongodb://127.0.0.1:27017/ (FerretDB from tools/ferretdb works)"},
}

// ServerURL returns the base URL of the server of kind from its variable,
// and skips the test when the variable is unset.
func ServerURL(tb testing.TB, kind string) string {
	tb.Helper()
	srv, ok := servers[kind]
	if !ok {
		tb.Fatalf("testdb: no server for store kind %q", kind)
	}
	base := os.Getenv(srv.env)
	if base == "" {
		tb.Skipf("set %s to a server URL (e.g. %s) to run the tests that need it", srv.env, srv.example)
	}
	return base
}

// URL returns the URL of a new, empty store of kind (one of Kinds),
// removed when the test ends.
func URL(tb testing.TB, kind string) string {
	tb.Helper()
	base := ""
	if kind != SQLite {
		base = ServerURL(tb, kind)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u, drop, err := backends.NewScratch(ctx, base, tb.TempDir(), "test")
	if err != nil {
		tb.Fatalf("testdb: new %s store: %v", kind, err)
	}
	tb.Cleanup(drop)
	return u
}

// PostgresURL returns the URL of a new, empty PostgreSQL schema.
func PostgresURL(tb testing.TB) string { tb.Helper(); return URL(tb, Postgres) }

// MySQLURL returns the URL of a new, empty MySQL or MariaDB database.
func MySQLURL(tb testing.TB) string { tb.Helper(); return URL(tb, MySQL) }

// MongoURL returns the URL of a new, empty MongoDB database.
func MongoURL(tb testing.TB) string { tb.Helper(); return URL(tb, MongoDB) }

// MustOpen opens the store at rawURL with open (a store package's Open)
// and closes it when the test ends.
func MustOpen[S io.Closer](tb testing.TB, rawURL string, open func(context.Context, string) (S, error)) S {
	tb.Helper()
	s, err := open(context.Background(), rawURL)
	if err != nil {
		tb.Fatalf("open %s store: %v", rawURL, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
