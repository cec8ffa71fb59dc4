package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// requireUnshare skips the test where a process cannot be put in a PID
// namespace of its own (unshare from util-linux needs root or
// CAP_SYS_ADMIN; CI runs as root).
func requireUnshare(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) is not installed: install it to test leases across PID namespaces")
	}
	if out, err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "true").CombinedOutput(); err != nil {
		t.Skipf("unshare --pid --fork --mount-proc is not permitted here (%v: %s): run the tests as root, or with CAP_SYS_ADMIN, to test leases across PID namespaces", err, bytes.TrimSpace(out))
	}
}

// leaseWatch reads who holds a lease of a SQLite store that real processes
// share with the test.
type leaseWatch struct {
	t  *testing.T
	st *sqlite.Store
}

func (w leaseWatch) owner(name string) (string, time.Time) {
	w.t.Helper()
	owner, until, err := w.st.LeaseOwner(context.Background(), name, time.Now())
	if err != nil {
		w.t.Fatal(err)
	}
	return owner, until
}

// waitFor polls until ok says the lease is held as wanted, and returns the
// owner and when its lease runs until.
func (w leaseWatch) waitFor(what, name string, ok func(owner crawlkeeper.LeaseOwnerID) bool) (string, time.Time) {
	w.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		owner, until := w.owner(name)
		if id, parsed := crawlkeeper.ParseLeaseOwner(owner); parsed && ok(id) {
			return owner, until
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("timed out waiting for %s; the %s lease is held by %q", what, name, owner)
		}
		time.Sleep(20 * time.Millisecond) // polling real processes
	}
}

// TestScanLeaseAcrossPIDNamespaces runs the real binary in PID namespaces
// of its own, as containers that share a host name do. A process in
// another namespace must not take the scan lease of a live `scan` (its pid
// means nothing there), nor that of a killed one before it expires (it
// cannot know it died); a process in the holder's namespace takes a killed
// holder's lease at once, in the host's namespace and in a container's.
func TestScanLeaseAcrossPIDNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills real processes")
	}
	requireUnshare(t)
	here := crawlkeeper.ThisProcess()
	if here.PIDNS == 0 || here.Boot == "" {
		t.Skip("this system does not show /proc/self/ns/pid and /proc/sys/kernel/random/boot_id, so no lease is taken before it expires")
	}
	bin := buildBinary(t)
	c := newCLI(t)
	c.ok(items(5), "ingest", "-")
	st, err := openTestStore(c.data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := leaseWatch{t: t, st: st}
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return string(out), code
	}
	inContainer := []string{"unshare", "--pid", "--fork", "--mount-proc", bin, "scan", "--once", "--data", c.data}

	// A continuous scan holds the scan lease (2 minutes, renewed).
	holder := exec.Command(bin, "scan", "--data", c.data)
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { holder.Process.Kill(); holder.Wait() }()
	owner, until := w.waitFor("the continuous scan to take the lease", pipeline.ScanLease, func(o crawlkeeper.LeaseOwnerID) bool {
		return o.PID == holder.Process.Pid
	})
	id, _ := crawlkeeper.ParseLeaseOwner(owner)
	if id.PIDNS != here.PIDNS || id.Boot != here.Boot || id.Host != here.Host {
		t.Fatalf("the holder %q does not name this namespace and boot (%+v)", owner, here)
	}

	// Live holder, other namespace: refused, naming the holder.
	out, code := run(inContainer...)
	if code != 1 || !strings.Contains(out, "held by "+owner) || strings.Contains(out, "took over") {
		t.Fatalf("scan --once in another PID namespace while the holder lives: exit %d\n%s", code, out)
	}
	if now, _ := w.owner(pipeline.ScanLease); now != owner {
		t.Fatalf("the lease moved from the live %q to %q", owner, now)
	}
	// Live holder, same namespace: refused too.
	if out, code := run(bin, "scan", "--once", "--data", c.data); code != 1 || !strings.Contains(out, "held by "+owner) {
		t.Fatalf("scan --once in the holder's namespace while it lives: exit %d\n%s", code, out)
	}

	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	// Killed holder, other namespace: the lease is waited out there.
	if out, code := run(inContainer...); code != 1 || !strings.Contains(out, "held by "+owner) || strings.Contains(out, "took over") {
		t.Fatalf("scan --once in another PID namespace after the holder was killed: exit %d\n%s", code, out)
	}
	// Killed holder, same namespace: taken at once, long before it
	// expires.
	out, code = run(bin, "scan", "--once", "--data", c.data)
	if code != 0 || !strings.Contains(out, "took over the scan lease of "+owner) {
		t.Fatalf("scan --once in the killed holder's namespace: exit %d\n%s", code, out)
	}
	if !time.Now().Before(until) {
		t.Fatalf("the takeover came after the lease expired (%s): it proves nothing", until.Format(time.RFC3339))
	}

	// The same inside one container: a scan killed there is taken over
	// at once by the next process of that namespace.
	cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "sh", "-c",
		`"$0" scan --data "$1" 2>/dev/null & p=$!; read go; kill -9 $p; wait $p; exec "$0" scan --once --data "$1"`, bin, c.data)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var cout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &cout, &cout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	owner, until = w.waitFor("a scan in a PID namespace of its own to take the lease", pipeline.ScanLease, func(o crawlkeeper.LeaseOwnerID) bool {
		return o.PIDNS != 0 && o.PIDNS != here.PIDNS && o.Boot == here.Boot
	})
	io.WriteString(stdin, "go\n")
	stdin.Close()
	if err := cmd.Wait(); err != nil || !strings.Contains(cout.String(), "took over the scan lease of "+owner) {
		t.Fatalf("restart inside one PID namespace: %v\n%s", err, cout.String())
	}
	if !time.Now().Before(until) {
		t.Fatalf("the takeover came after the lease expired (%s): it proves nothing", until.Format(time.RFC3339))
	}
}

// TestServeRestartTakesItsLeases kills a real serve with SIGKILL while it
// holds the scan lease, and starts another on the same store: the new one
// takes the lease over at once, not when the dead one's lease expires.
func TestServeRestartTakesItsLeases(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills real processes")
	}
	here := crawlkeeper.ThisProcess()
	if here.PIDNS == 0 || here.Boot == "" {
		t.Skip("this system does not show /proc/self/ns/pid and /proc/sys/kernel/random/boot_id, so no lease is taken before it expires")
	}
	bin := buildBinary(t)
	c := newCLI(t)
	c.ok(items(5), "ingest", "-")
	st, err := openTestStore(c.data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := leaseWatch{t: t, st: st}
	start := func() (*exec.Cmd, *lockedBuffer) {
		t.Helper()
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", c.data)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		logs := &lockedBuffer{}
		cmd.Stderr = logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "crawlkeeper is serving on ") {
				go io.Copy(io.Discard, stdout)
				return cmd, logs
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("serve did not start:\n%s", logs.String())
		return nil, nil
	}
	first, _ := start()
	defer func() { first.Process.Kill(); first.Wait() }()
	owner, until := w.waitFor("serve to take the scan lease", pipeline.ScanLease, func(o crawlkeeper.LeaseOwnerID) bool {
		return o.PID == first.Process.Pid
	})
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()

	second, logs := start()
	defer func() { second.Process.Kill(); second.Wait() }()
	w.waitFor("the restarted serve to take the scan lease", pipeline.ScanLease, func(o crawlkeeper.LeaseOwnerID) bool {
		return o.PID == second.Process.Pid
	})
	if !time.Now().Before(until) {
		t.Fatalf("the restarted serve took the lease after it expired (%s): it waited the lease out", until.Format(time.RFC3339))
	}
	if l := logs.String(); !strings.Contains(l, "took over the lease") || !strings.Contains(l, owner) {
		t.Fatalf("the restarted serve did not say whose lease it took over:\n%s", l)
	}
}
