package reprocess

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	natsserver "github.com/nats-io/nats-server/v2/server"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

func TestMain(m *testing.M) {
	flag.Parse()
	// A worker started by a runner runs this binary too; Init turns it
	// into the worker there, and does nothing here.
	beam.Init()
	os.Exit(m.Run())
}

// servers are the store kinds the pipeline runs against: the server
// stores a Beam job's workers can share.
var servers = []string{testdb.Postgres, testdb.MySQL}

// onEachServer runs test as a subtest per server kind, with the URL of an
// empty store on that server (an empty schema on PostgreSQL, an empty
// database on MySQL/MariaDB), removed when the subtest ends. A kind whose
// server variable (CRAWLKEEPER_TEST_POSTGRES, CRAWLKEEPER_TEST_MYSQL) is
// unset is skipped with a message naming it.
func onEachServer(t *testing.T, test func(t *testing.T, storeURL string)) {
	for _, kind := range servers {
		t.Run(kind, func(t *testing.T) { test(t, testdb.URL(t, kind)) })
	}
}

// MustOpenStore opens the store at rawURL for the test's own reads and
// writes.
func MustOpenStore(tb testing.TB, rawURL string) crawlkeeper.Store {
	tb.Helper()
	st, err := backends.OpenStore(context.Background(), rawURL, "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// ingest stores items numbered first to first+n-1 with body as their
// content and returns their ids; hooks run after each commit.
func ingest(tb testing.TB, st crawlkeeper.Store, first, n int, body string, hooks ...crawlkeeper.AfterCommit) []int64 {
	tb.Helper()
	var buf bytes.Buffer
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&buf, `{"title":"record %d","url":"https://beam.test/%d","body":"%s %d","deadline":"2030-01-%02d"}`+"\n", i, i, body, i, 1+i%28)
	}
	var ids []int64
	hooks = append(hooks, func(_ context.Context, _ []*crawlkeeper.Prepared, res *crawlkeeper.IngestResult) {
		ids = append(ids, res.IDs...)
	})
	g := &crawlkeeper.Ingester{Store: st, BatchSize: 200, AfterCommit: hooks}
	sum, err := g.Ingest(context.Background(), &buf, crawlkeeper.Meta{Source: "beam.test"})
	if err != nil || sum.Rejected != 0 {
		tb.Fatalf("ingest: %v %+v", err, sum)
	}
	return ids
}

// MustStartNATS runs a JetStream server in process and returns its URL.
func MustStartNATS(tb testing.TB) string {
	tb.Helper()
	s, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: tb.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		tb.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		tb.Fatal("nats server did not start")
	}
	tb.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// observer collects what the write-back stage handled.
type observer struct {
	mu     sync.Mutex
	scans  map[int64]map[int64]int // pass -> id -> times handled
	notify map[int64]int
}

// watch makes the pipeline's handling of Work against the store at
// storeURL report to a new observer for the test's duration.
func watch(t *testing.T, storeURL string) *observer {
	ob := &observer{scans: map[int64]map[int64]int{}, notify: map[int64]int{}}
	unset := setObserve(func(store string, w Work, ids []int64, _ pipeline.Outcome) {
		if store != storeURL {
			return // a bundle of an earlier test's job, still finishing
		}
		ob.mu.Lock()
		defer ob.mu.Unlock()
		switch w.Kind {
		case KindScan:
			m := ob.scans[w.Pass]
			if m == nil {
				m = map[int64]int{}
				ob.scans[w.Pass] = m
			}
			for _, id := range ids {
				m[id]++
			}
		case KindNotify:
			for _, id := range ids {
				ob.notify[id]++
			}
		}
	})
	t.Cleanup(unset)
	return ob
}

// passDone reports whether pass p handled all n records.
func (ob *observer) passDone(p int64, n int) bool {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return len(ob.scans[p]) >= n
}

// start runs the pipeline on Prism in process until the test ends.
func start(t *testing.T, o Options) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	Build(s, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, "", p) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && err != context.Canceled {
			t.Errorf("pipeline: %v", err)
		}
	})
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
