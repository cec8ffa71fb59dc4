package mongodb_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/bench"
	"github.com/crawlkeeper/crawlkeeper/mongodb"
	"github.com/crawlkeeper/crawlkeeper/storetest"
)

const envVar = "CRAWLKEEPER_TEST_MONGO"

// The store offers the benchmark its raw baselines.
var _ bench.Raw = (*mongodb.Store)(nil)

// MustDatabaseURL returns the test server's URL with a new database name
// in its path, and drops that database when the test ends.
func MustDatabaseURL(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(envVar)
	if base == "" {
		tb.Skipf("set %s to a MongoDB URL (e.g. mongodb://127.0.0.1:27017/, FerretDB from tools/ferretdb works) to run the MongoDB store tests", envVar)
	}
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("%s: %v", envVar, err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "ck_test_" + hex.EncodeToString(b[:])
	u.Path = "/" + name
	tb.Cleanup(func() {
		s, err := mongodb.Open(context.Background(), u.String())
		if err != nil {
			tb.Errorf("drop database %s: %v", name, err)
			return
		}
		defer s.Close()
		if err := s.Database().Drop(context.Background()); err != nil {
			tb.Errorf("drop database %s: %v", name, err)
		}
	})
	return u.String()
}

// MustOpen opens a store on rawURL and closes it when the test ends.
func MustOpen(tb testing.TB, rawURL string) *mongodb.Store {
	tb.Helper()
	s, err := mongodb.Open(context.Background(), rawURL)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// MustOpenStore opens an empty store in a database of its own.
func MustOpenStore(tb testing.TB) *mongodb.Store {
	tb.Helper()
	return MustOpen(tb, MustDatabaseURL(tb))
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(tb testing.TB) crawlkeeper.Store { return MustOpenStore(tb) })
}

// TestTwoProcesses ingests overlapping keys through two stores with their
// own connection pools, as two processes sharing the database would, and
// archives and restores meanwhile: no key may be stored twice, and of two
// processes racing for a lease exactly one wins.
func TestTwoProcesses(t *testing.T) {
	u := MustDatabaseURL(t)
	storetest.RunTwoProcesses(t, MustOpen(t, u), MustOpen(t, u))
}
