package redis_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/faultproxy"
	"github.com/crawlkeeper/crawlkeeper/redis"
)

// TestOutage cuts the connection to Redis: marks fail with an error that
// says Redis is unavailable, nothing acknowledged before is lost, and
// marking works again once Redis is back.
func TestOutage(t *testing.T) {
	u, err := url.Parse(MustPrefixURL(t))
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
	m, err := redis.Open(ctx, u.String(), crawlkeeper.MonitorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	mark := func(target string) error {
		_, err := m.Mark(ctx, []crawlkeeper.Mark{{Round: "1", Target: target, Kind: crawlkeeper.MarkDone, At: at}})
		return err
	}
	if err := mark("before"); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	err = mark("during")
	if crawlkeeper.ErrorCode(err) != crawlkeeper.EUNAVAILABLE {
		t.Fatalf("mark during the outage: %v (code %s), want %s", err, crawlkeeper.ErrorCode(err), crawlkeeper.EUNAVAILABLE)
	}
	proxy.Restore()
	retry := &crawlkeeper.Retry{Sleep: func(context.Context, time.Duration) error { return nil }}
	if err := retry.Do(ctx, func() error { return mark("after") }); err != nil {
		t.Fatalf("mark after the outage: %v", err)
	}
	st, err := m.Status(ctx, "1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Done != 2 {
		t.Fatalf("done = %d, want the two acknowledged marks", st.Done)
	}
}
