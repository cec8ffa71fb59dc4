package crawlkeeper

import (
	"context"
	"time"
)

// Retry is how long-running work retries transient failures: a backend
// that cannot be reached (EUNAVAILABLE) or a concurrent change that won
// (ECONFLICT). Operations retried this way must be idempotent, as every
// store write in crawlkeeper is.
type Retry struct {
	// Attempts is the number of tries in all. Defaults to 6.
	Attempts int
	// First is the wait before the second try; each wait doubles, up to
	// Max. Default 100ms and 10s.
	First, Max time.Duration
	// Sleep waits d or until ctx ends. Defaults to a real timer; tests
	// inject their own.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry, when set, hears about each failed try before the wait.
	OnRetry func(attempt int, err error, wait time.Duration)
}

// Transient reports whether err is worth retrying.
func Transient(err error) bool {
	switch ErrorCode(err) {
	case EUNAVAILABLE, ECONFLICT:
		return true
	}
	return false
}

// Do runs f until it succeeds, fails with an error that is not
// transient, or the attempts are used up; it returns f's last error.
func (r *Retry) Do(ctx context.Context, f func() error) error {
	attempts, wait, max := 6, 100*time.Millisecond, 10*time.Second
	sleep := sleepCtx
	if r != nil {
		if r.Attempts > 0 {
			attempts = r.Attempts
		}
		if r.First > 0 {
			wait = r.First
		}
		if r.Max > 0 {
			max = r.Max
		}
		if r.Sleep != nil {
			sleep = r.Sleep
		}
	}
	var err error
	for i := 1; ; i++ {
		if err = f(); err == nil || !Transient(err) || i >= attempts {
			return err
		}
		if r != nil && r.OnRetry != nil {
			r.OnRetry(i, err, wait)
		}
		if serr := sleep(ctx, wait); serr != nil {
			return err
		}
		wait = min(2*wait, max)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
