package crawlkeeper

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRetry(t *testing.T) {
	var waits []time.Duration
	r := &Retry{Attempts: 5, First: time.Second, Max: 3 * time.Second, Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	calls := 0
	err := r.Do(context.Background(), func() error {
		calls++
		if calls < 4 {
			return Errorf(EUNAVAILABLE, "down")
		}
		return nil
	})
	if err != nil || calls != 4 || len(waits) != 3 || waits[0] != time.Second || waits[1] != 2*time.Second || waits[2] != 3*time.Second {
		t.Fatalf("err %v after %d calls, waits %v", err, calls, waits)
	}
	calls = 0
	err = r.Do(context.Background(), func() error { calls++; return Errorf(EINVALID, "bad") })
	if ErrorCode(err) != EINVALID || calls != 1 {
		t.Fatalf("a permanent error was retried: %v after %d calls", err, calls)
	}
	calls = 0
	err = r.Do(context.Background(), func() error { calls++; return Errorf(ECONFLICT, "race") })
	if ErrorCode(err) != ECONFLICT || calls != 5 {
		t.Fatalf("attempts not bounded: %v after %d calls", err, calls)
	}
	stop := errors.New("stop")
	calls = 0
	r.Sleep = func(context.Context, time.Duration) error { return stop }
	err = r.Do(context.Background(), func() error { calls++; return Errorf(EUNAVAILABLE, "down") })
	if ErrorCode(err) != EUNAVAILABLE || calls != 1 {
		t.Fatalf("a cancelled wait must end the retries with the last error: %v after %d calls", err, calls)
	}
}
