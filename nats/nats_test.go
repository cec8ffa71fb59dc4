package nats_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/nats"
	"github.com/crawlkeeper/crawlkeeper/queuetest"
)

// serverURL returns the JetStream server of CRAWLKEEPER_TEST_NATS or
// skips the test.
func serverURL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv("CRAWLKEEPER_TEST_NATS")
	if u == "" {
		tb.Skip("set CRAWLKEEPER_TEST_NATS=nats://127.0.0.1:4222 (a nats-server with -js) to run the NATS tests")
	}
	return u
}

// testOptions returns options with a stream, subject and consumer of the
// test's own, and deletes the stream when the test ends.
func testOptions(tb testing.TB) nats.Options {
	tb.Helper()
	u := serverURL(tb)
	id := fmt.Sprintf("%d_%d", time.Now().UnixNano(), rand.Intn(1e6))
	o := nats.Options{URL: u, Stream: "CKTEST_" + id, Subject: "cktest." + id, Consumer: "cktest-" + id}
	tb.Cleanup(func() {
		nc, err := natsgo.Connect(u)
		if err != nil {
			tb.Errorf("cleanup: connect: %v", err)
			return
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := js.DeleteStream(ctx, o.Stream); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			tb.Errorf("cleanup: delete stream %s: %v", o.Stream, err)
		}
	})
	return o
}

func mustOpen(tb testing.TB, o nats.Options) *nats.Queue {
	tb.Helper()
	q, err := nats.Open(context.Background(), o)
	if err != nil {
		tb.Fatal(err)
	}
	return q
}

func TestConformance(t *testing.T) {
	serverURL(t)
	queuetest.Run(t, func(tb testing.TB) func() crawlkeeper.Queue {
		o := testOptions(tb)
		return func() crawlkeeper.Queue { return mustOpen(tb, o) }
	})
}

// TestRedelivery shows the acknowledgements: a notification received by a
// process that dies before acknowledging goes to another process.
func TestRedelivery(t *testing.T) {
	o := testOptions(t)
	o.AckWait = 500 * time.Millisecond
	a, b := mustOpen(t, o), mustOpen(t, o)
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	want := []crawlkeeper.RecordRef{{ID: 7, Version: 2}}
	a.Publish(want)
	n, err := a.Receive(ctx)
	if err != nil || fmt.Sprint(n.Refs) != fmt.Sprint(want) {
		t.Fatalf("first delivery = %v %v", n, err)
	}
	a.Close() // "dies" without acknowledging
	n, err = b.Receive(ctx)
	if err != nil || fmt.Sprint(n.Refs) != fmt.Sprint(want) {
		t.Fatalf("redelivery = %v %v", n, err)
	}
	if err := n.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	short, cancel2 := context.WithTimeout(ctx, 2*o.AckWait+time.Second)
	defer cancel2()
	if n, err := b.Receive(short); err == nil {
		t.Fatalf("an acknowledged notification came again: %v", n.Refs)
	}
}

// TestLongBatchesAreSplit publishes more refs than one message holds.
func TestLongBatchesAreSplit(t *testing.T) {
	q := mustOpen(t, testOptions(t))
	defer q.Close()
	refs := make([]crawlkeeper.RecordRef, 4500)
	for i := range refs {
		refs[i] = crawlkeeper.RecordRef{ID: int64(i + 1), Version: 1}
	}
	q.Publish(refs)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := 0
	for got < len(refs) {
		n, err := q.Receive(ctx)
		if err != nil {
			t.Fatalf("after %d refs: %v", got, err)
		}
		got += len(n.Refs)
		n.Ack(ctx)
	}
	if got != len(refs) {
		t.Fatalf("received %d refs, want %d", got, len(refs))
	}
}

// TestOutageNeverBlocksPublish points the queue at a port where nothing
// listens: opening works, publishing returns at once and counts every
// record as dropped, and receiving reports the outage instead of hanging.
func TestOutageNeverBlocksPublish(t *testing.T) {
	q, err := nats.Open(context.Background(), nats.Options{URL: "nats://127.0.0.1:1", Buffer: 8})
	if err != nil {
		t.Fatalf("open with the server down: %v", err)
	}
	for i := 0; i < 1000; i++ {
		q.Publish([]crawlkeeper.RecordRef{{ID: int64(i + 1), Version: 1}})
	}
	q.Close()
	if s := q.Stats(); s.Dropped != 1000 || s.Published != 0 {
		t.Fatalf("stats during an outage = %+v, want all 1000 dropped", s)
	}
	q2, _ := nats.Open(context.Background(), nats.Options{URL: "nats://127.0.0.1:1"})
	defer q2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := q2.Receive(ctx); err == nil || crawlkeeper.ErrorCode(err) != crawlkeeper.EUNAVAILABLE {
		t.Fatalf("receive during an outage = %v, want an unavailable error", err)
	}
}

func TestParseURL(t *testing.T) {
	o, err := nats.ParseURL("nats://127.0.0.1:4222?stream=S&subject=a.b&consumer=c")
	if err != nil || o.URL != "nats://127.0.0.1:4222" || o.Stream != "S" || o.Subject != "a.b" || o.Consumer != "c" {
		t.Fatalf("parse = %+v %v", o, err)
	}
	if _, err := nats.ParseURL("nats://"); err == nil {
		t.Fatal("a URL without a host was accepted")
	}
}
