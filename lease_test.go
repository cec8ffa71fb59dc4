package crawlkeeper_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// leases is an in-memory Leaser whose renewals can be made to fail or to
// find the lease taken.
type leases struct {
	mu       sync.Mutex
	owner    string
	renewals int
	fail     error // returned by every acquire once set
	hang     bool  // every acquire waits for its context once set
	stolen   bool  // every acquire finds another owner once set
	released bool
	// renewed, when set, hears of each renewal.
	renewed chan struct{}
}

func (l *leases) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	l.mu.Lock()
	if l.hang {
		l.mu.Unlock()
		<-ctx.Done()
		return false, ctx.Err()
	}
	defer l.mu.Unlock()
	if l.fail != nil {
		return false, l.fail
	}
	if l.stolen || (l.owner != "" && l.owner != owner) {
		return false, nil
	}
	if l.owner == owner {
		l.renewals++
		if l.renewed != nil {
			l.renewed <- struct{}{}
		}
	}
	l.owner = owner
	return true, nil
}

func (l *leases) ReleaseLease(ctx context.Context, name, owner string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.owner == owner {
		l.owner, l.released = "", true
	}
	return nil
}

func (l *leases) set(f func(*leases)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(l)
}

// ticker hands out renewal waits that the test fires one at a time.
type ticker struct{ c chan time.Time }

func (k *ticker) after(time.Duration) <-chan time.Time { return k.c }

// tick fires one renewal wait and waits for the renewal to be handled.
func (k *ticker) tick() { k.c <- time.Time{} }

func TestLeaseHolderRenewsWhileWorkRuns(t *testing.T) {
	l := &leases{renewed: make(chan struct{}, 10)}
	k := &ticker{c: make(chan time.Time)}
	h := &crawlkeeper.LeaseHolder{Store: l, Name: "archiver", Owner: "a", TTL: time.Minute, After: k.after}
	held, err := h.Run(context.Background(), func(ctx context.Context) error {
		for i := 0; i < 5; i++ {
			k.tick()
			<-l.renewed
		}
		return ctx.Err()
	})
	if !held || err != nil {
		t.Fatalf("run = %v %v", held, err)
	}
	if l.renewals != 5 || !l.released {
		t.Fatalf("renewals %d, released %v: want 5 renewals during a long pass and a release after it", l.renewals, l.released)
	}
}

func TestLeaseHolderStopsWorkWhenTheLeaseIsLost(t *testing.T) {
	for name, lose := range map[string]func(*leases){
		"taken by another process": func(l *leases) { l.stolen = true },
		"renewals fail":            func(l *leases) { l.fail = errors.New("connection refused") },
		// Each hung renewal is given up after TTL/4 (real time: the TTL
		// here is short), so the work stops within TTL/2.
		"renewals hang": func(l *leases) { l.hang = true },
	} {
		t.Run(name, func(t *testing.T) {
			l := &leases{}
			k := &ticker{c: make(chan time.Time)}
			ttl := time.Minute
			if name == "renewals hang" {
				ttl = 200 * time.Millisecond
			}
			h := &crawlkeeper.LeaseHolder{Store: l, Name: "archiver", Owner: "a", TTL: ttl, After: k.after}
			held, err := h.Run(context.Background(), func(ctx context.Context) error {
				k.tick()
				l.set(lose)
				for ctx.Err() == nil {
					select {
					case k.c <- time.Time{}:
					case <-ctx.Done():
					}
				}
				return ctx.Err()
			})
			if !held || !errors.Is(err, crawlkeeper.ErrLeaseLost) {
				t.Fatalf("run = %v %v, want the work stopped with ErrLeaseLost", held, err)
			}
		})
	}
}

func TestLeaseHolderDoesNotRunWithoutTheLease(t *testing.T) {
	l := &leases{owner: "someone-else"}
	ran := false
	held, err := (&crawlkeeper.LeaseHolder{Store: l, Name: "archiver", Owner: "a", TTL: time.Minute}).Run(context.Background(), func(context.Context) error {
		ran = true
		return nil
	})
	if held || err != nil || ran {
		t.Fatalf("held %v, err %v, ran %v: want nothing run and no error", held, err, ran)
	}
	l = &leases{fail: errors.New("connection refused")}
	held, err = (&crawlkeeper.LeaseHolder{Store: l, Name: "archiver", Owner: "a", TTL: time.Minute}).Run(context.Background(), func(context.Context) error {
		ran = true
		return nil
	})
	if held || err == nil || ran {
		t.Fatalf("held %v, err %v, ran %v: a failing store must surface as an error", held, err, ran)
	}
}
