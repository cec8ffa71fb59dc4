package crawlkeeper_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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

// A process names itself host-pid-token/pidns:INODE/boot:UUID, and every
// part reads back from the name, as do the older forms host-pid-token and
// host-pid.
func TestProcessOwner(t *testing.T) {
	me := crawlkeeper.ProcessOwner()
	if crawlkeeper.ProcessOwner() != me {
		t.Fatal("a process names itself differently twice")
	}
	host, _ := os.Hostname()
	if h, pid, ok := crawlkeeper.ParseProcessOwner(me); !ok || h != host || pid != os.Getpid() {
		t.Fatalf("ParseProcessOwner(%q) = %q %d %v, want %q %d", me, h, pid, ok, host, os.Getpid())
	}
	id, ok := crawlkeeper.ParseLeaseOwner(me)
	if !ok || id != crawlkeeper.ThisProcess() || id.String() != me {
		t.Fatalf("ParseLeaseOwner(%q) = %+v %v, want %+v", me, id, ok, crawlkeeper.ThisProcess())
	}
	// The token after host and pid is what keeps two processes of one
	// hostname and pid apart: eight hex digits drawn per process.
	if len(id.Token) != 8 {
		t.Fatalf("owner %q: want an 8-digit token", me)
	}
	// Where /proc says them, the name carries the PID namespace and the
	// boot: the same values a shell reads.
	if link, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		if want := fmt.Sprintf("pid:[%d]", id.PIDNS); link != want {
			t.Fatalf("owner %q names PID namespace %d, /proc/self/ns/pid says %s", me, id.PIDNS, link)
		}
		boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
		if err != nil || strings.TrimSpace(string(boot)) != id.Boot {
			t.Fatalf("owner %q names boot %q, /proc says %q (%v)", me, id.Boot, boot, err)
		}
		if !strings.HasSuffix(me, fmt.Sprintf("/pidns:%d/boot:%s", id.PIDNS, id.Boot)) {
			t.Fatalf("owner %q does not end with its namespace and boot", me)
		}
	} else {
		t.Logf("no /proc/self/ns/pid here (%v): the name ends after the token", err)
	}

	const boot = "425bf5ee-ca0b-4448-99f2-979282e701e4"
	for _, tc := range []struct {
		owner string
		want  crawlkeeper.LeaseOwnerID
		ok    bool
	}{
		{"web-1-0a1b2c3d/pidns:4026531836/boot:" + boot, crawlkeeper.LeaseOwnerID{Host: "web", PID: 1, Token: "0a1b2c3d", PIDNS: 4026531836, Boot: boot}, true},
		{"pod-7-1-0a1b2c3d/pidns:4026532175/boot:" + boot, crawlkeeper.LeaseOwnerID{Host: "pod-7", PID: 1, Token: "0a1b2c3d", PIDNS: 4026532175, Boot: boot}, true},
		{"web.example.org-31337-ffffffff/pidns:1/boot:" + boot, crawlkeeper.LeaseOwnerID{Host: "web.example.org", PID: 31337, Token: "ffffffff", PIDNS: 1, Boot: boot}, true},
		// The older forms: no namespace, no boot.
		{"web-1-0a1b2c3d", crawlkeeper.LeaseOwnerID{Host: "web", PID: 1, Token: "0a1b2c3d"}, true},
		{"pod-7-1-0a1b2c3d", crawlkeeper.LeaseOwnerID{Host: "pod-7", PID: 1, Token: "0a1b2c3d"}, true},
		{"web-1-4242", crawlkeeper.LeaseOwnerID{Host: "web-1", PID: 4242}, true},
		{"my-host-12-deadbeef", crawlkeeper.LeaseOwnerID{Host: "my-host", PID: 12, Token: "deadbeef"}, true},
		{"host-42", crawlkeeper.LeaseOwnerID{Host: "host", PID: 42}, true},
		// Names of other forms.
		{"nopid", crawlkeeper.LeaseOwnerID{}, false},
		{"host-x1", crawlkeeper.LeaseOwnerID{}, false},
		{"host-0", crawlkeeper.LeaseOwnerID{}, false},
		{"web-1-0a1b2c3d/pidns:x/boot:" + boot, crawlkeeper.LeaseOwnerID{}, false},
		{"web-1-0a1b2c3d/pidns:0/boot:" + boot, crawlkeeper.LeaseOwnerID{}, false},
		{"web-1-0a1b2c3d/pidns:4026531836/boot:not-a-boot", crawlkeeper.LeaseOwnerID{}, false},
		{"web-1-0a1b2c3d/boot:" + boot, crawlkeeper.LeaseOwnerID{}, false},
	} {
		got, ok := crawlkeeper.ParseLeaseOwner(tc.owner)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseLeaseOwner(%q) = %+v %v, want %+v %v", tc.owner, got, ok, tc.want, tc.ok)
		}
		if ok && got.String() != tc.owner {
			t.Errorf("ParseLeaseOwner(%q).String() = %q", tc.owner, got.String())
		}
	}
}

// TestLeaseOwnerGone checks the decision to take a lease before it
// expires: only an owner of this host, PID namespace and boot whose pid
// runs nothing (or is this process's own pid) is known to be dead.
// Everywhere else the pid means nothing here, and the lease is waited out.
func TestLeaseOwnerGone(t *testing.T) {
	const boot = "425bf5ee-ca0b-4448-99f2-979282e701e4"
	const otherBoot = "9d2b0c4e-1f3a-4b5c-8d6e-7f8091a2b3c4"
	here := crawlkeeper.LeaseOwnerID{Host: "web", PID: 100, Token: "0a1b2c3d", PIDNS: 4026531836, Boot: boot}
	// running is the PID table here: pid 200 runs, 300 does not.
	running := map[int]bool{100: true, 200: true}
	owner := func(f func(*crawlkeeper.LeaseOwnerID)) string {
		o := crawlkeeper.LeaseOwnerID{Host: "web", PID: 300, Token: "99999999", PIDNS: 4026531836, Boot: boot}
		f(&o)
		return o.String()
	}
	for _, tc := range []struct {
		name  string
		owner string
		gone  bool
	}{
		{"same namespace and boot, pid runs nothing", owner(func(o *crawlkeeper.LeaseOwnerID) {}), true},
		{"same namespace and boot, pid runs", owner(func(o *crawlkeeper.LeaseOwnerID) { o.PID = 200 }), false},
		{"an earlier process with this process's pid", owner(func(o *crawlkeeper.LeaseOwnerID) { o.PID = 100 }), true},
		{"this process", here.String(), false},
		{"another PID namespace (a container)", owner(func(o *crawlkeeper.LeaseOwnerID) { o.PIDNS = 4026532175 }), false},
		{"another PID namespace, this process's pid", owner(func(o *crawlkeeper.LeaseOwnerID) { o.PIDNS, o.PID = 4026532175, 100 }), false},
		{"another boot", owner(func(o *crawlkeeper.LeaseOwnerID) { o.Boot = otherBoot }), false},
		{"another host", owner(func(o *crawlkeeper.LeaseOwnerID) { o.Host = "db" }), false},
		{"older form host-pid-token", "web-300-99999999", false},
		{"older form host-pid", "web-300", false},
		{"older form with this process's pid", "web-100-99999999", false},
		{"a name of another form", "scanner-on-web", false},
		{"no token", "web-300/pidns:4026531836/boot:" + boot, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			got := crawlkeeper.LeaseOwnerGone(tc.owner, here, func(pid int) bool {
				asked = true
				return running[pid]
			})
			if got != tc.gone {
				t.Fatalf("LeaseOwnerGone(%q) = %v, want %v", tc.owner, got, tc.gone)
			}
			if asked && !strings.HasSuffix(tc.owner, "/pidns:4026531836/boot:"+boot) {
				t.Fatalf("LeaseOwnerGone(%q) asked this PID table about a pid of another namespace", tc.owner)
			}
		})
	}
	// A process that does not know its own namespace or boot trusts no
	// liveness check at all.
	for _, blind := range []crawlkeeper.LeaseOwnerID{
		{Host: "web", PID: 100, Token: "0a1b2c3d", Boot: boot},
		{Host: "web", PID: 100, Token: "0a1b2c3d", PIDNS: 4026531836},
	} {
		if crawlkeeper.LeaseOwnerGone(owner(func(o *crawlkeeper.LeaseOwnerID) {}), blind, func(int) bool { return false }) {
			t.Fatalf("a process without its namespace or boot (%+v) judged an owner dead", blind)
		}
	}
}
