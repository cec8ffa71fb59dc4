package redis_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/monitortest"
	"github.com/crawlkeeper/crawlkeeper/redis"
)

// EnvVar names the variable holding the test server's URL.
const EnvVar = "CRAWLKEEPER_TEST_REDIS"

var prefixSeq atomic.Int64

// MustPrefixURL returns the test server's URL with a key prefix of its own
// and deletes every key under it when the test ends.
func MustPrefixURL(tb testing.TB) string {
	tb.Helper()
	raw := os.Getenv(EnvVar)
	if raw == "" {
		tb.Skipf("set %s (for example redis://127.0.0.1:6379/0) to run the Redis monitor tests", EnvVar)
	}
	prefix := fmt.Sprintf("cktest-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), prefixSeq.Add(1))
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("%s: %v", EnvVar, err)
	}
	q := u.Query()
	q.Set("prefix", prefix)
	u.RawQuery = q.Encode()
	m, err := redis.Open(context.Background(), u.String(), crawlkeeper.MonitorOptions{})
	if err != nil {
		tb.Fatalf("%s=%s: %v", EnvVar, raw, err)
	}
	tb.Cleanup(func() {
		defer m.Close()
		ctx := context.Background()
		iter := m.Client().Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			m.Client().Del(ctx, iter.Val())
		}
		if err := iter.Err(); err != nil {
			tb.Errorf("clean up %s: %v", prefix, err)
		}
	})
	return u.String()
}

func TestConformance(t *testing.T) {
	monitortest.Run(t, func(tb testing.TB) func(crawlkeeper.MonitorOptions) crawlkeeper.Monitor {
		u := MustPrefixURL(tb)
		return func(opts crawlkeeper.MonitorOptions) crawlkeeper.Monitor {
			m, err := redis.Open(context.Background(), u, opts)
			if err != nil {
				tb.Fatal(err)
			}
			return m
		}
	})
}
