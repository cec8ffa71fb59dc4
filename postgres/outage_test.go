package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/faultproxy"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/crawlkeeper/crawlkeeper/postgres"
)

// TestOutage cuts the connection to PostgreSQL in the middle of an ingest:
// the ingest retries with backoff, succeeds once the server is back, and
// nothing acknowledged is lost. With the server away for good the error
// says what happened.
func TestOutage(t *testing.T) {
	direct := testdb.PostgresURL(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := faultproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	u.Host = proxy.Addr()
	ctx := context.Background()
	st, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, `{"title":"item %d","url":"https://o.test/%d"}`+"\n", i, i)
		}
		return b.String()
	}
	retries := 0
	g := &crawlkeeper.Ingester{Store: st, Now: func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }, BatchSize: 50,
		Retry: &crawlkeeper.Retry{Attempts: 10, Sleep: func(ctx context.Context, d time.Duration) error {
			// The outage ends after the second failed try: the
			// server comes back while the ingest waits.
			retries++
			if retries == 2 {
				proxy.Restore()
			}
			return nil
		}}}
	if _, err := g.Ingest(ctx, strings.NewReader(lines(0, 100)), crawlkeeper.Meta{}); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	sum, err := g.Ingest(ctx, strings.NewReader(lines(100, 300)), crawlkeeper.Meta{})
	if err != nil {
		t.Fatalf("ingest across an outage: %v", err)
	}
	if sum.Inserted != 200 || retries < 2 || proxy.Refused() == 0 {
		t.Fatalf("summary %+v after %d retries, %d refused connections", sum, retries, proxy.Refused())
	}
	stats, err := st.Stats(ctx)
	if err != nil || stats.Active != 300 {
		t.Fatalf("after the outage: %+v %v", stats, err)
	}

	// Away for good: the error is EUNAVAILABLE and says so.
	proxy.Cut()
	g.Retry = &crawlkeeper.Retry{Attempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}
	_, err = g.Ingest(ctx, strings.NewReader(lines(300, 310)), crawlkeeper.Meta{})
	if crawlkeeper.ErrorCode(err) != crawlkeeper.EUNAVAILABLE || !strings.Contains(err.Error(), "retry later") {
		t.Fatalf("ingest with the server gone: %v (code %s)", err, crawlkeeper.ErrorCode(err))
	}
	proxy.Restore()
	if rep, err := st.Check(ctx); err != nil || !rep.OK {
		t.Fatalf("check after the outage: %+v %v", rep, err)
	}
}
