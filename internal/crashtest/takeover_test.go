package crashtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/jackc/pgx/v5"
)

// TestTwoServesTakeOver runs two serve processes on one PostgreSQL store:
// one holds the scan lease and runs the passes, and when it is killed the
// other takes the scan over once the lease expires.
func TestTwoServesTakeOver(t *testing.T) {
	longtest.Skip(t, "runs two serve processes")
	ctx := context.Background()
	store := testdb.PostgresURL(t)
	conn, err := pgx.Connect(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	bin := buildBinary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	// Short leases and a slow, long pass, so the kill lands mid-pass and
	// the takeover happens within the test.
	os.WriteFile(cfg, []byte("pipeline:\n  period: 1h\n  lease: 3s\n  max_rate: 200\narchive:\n  lease: 3s\n"), 0o644)
	type proc struct {
		cmd  *exec.Cmd
		base string
	}
	start := func(name string) *proc {
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--store", store, "--config", cfg, "--archive-every", "1s", "--data", filepath.Join(dir, name))
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "crawlkeeper is serving on "); ok {
				go io.Copy(io.Discard, stdout)
				return &proc{cmd: cmd, base: strings.TrimSuffix(u, "/")}
			}
		}
		cmd.Process.Kill()
		t.Fatalf("serve %s did not start", name)
		return nil
	}
	a := start("a")
	defer func() { a.cmd.Process.Kill(); a.cmd.Wait() }()
	var body strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&body, `{"title":"t%d","url":"https://takeover.test/%d"}`+"\n", i, i)
	}
	res, err := http.Post(a.base+"/api/v1/items", "application/x-ndjson", strings.NewReader(body.String()))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("ingest: %v %v", err, res)
	}
	res.Body.Close()
	bproc := start("b")
	defer func() { bproc.cmd.Process.Kill(); bproc.cmd.Wait() }()

	holder := func() string {
		var owner string
		conn.QueryRow(ctx, `SELECT owner FROM leases WHERE name = 'pipeline.scan' AND expires_at > $1`, time.Now().UnixMicro()).Scan(&owner)
		return owner
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond) // polling real processes
		}
	}
	pidOf := func(owner string) int {
		_, pid, _ := crawlkeeper.ParseProcessOwner(owner)
		return pid
	}
	var first string
	waitFor("a scan lease holder", func() bool { first = holder(); return first != "" })
	procs := map[int]*proc{a.cmd.Process.Pid: a, bproc.cmd.Process.Pid: bproc}
	victim, ok := procs[pidOf(first)]
	if !ok {
		t.Fatalf("lease owner %q is neither process", first)
	}
	victim.cmd.Process.Signal(syscall.SIGKILL)
	victim.cmd.Wait()
	killed := time.Now()
	var second string
	waitFor("the other process to take the scan over", func() bool {
		second = holder()
		return second != "" && second != first
	})
	if d := time.Since(killed); d > 20*time.Second {
		t.Fatalf("takeover took %v with a 3s lease", d)
	}
	if _, ok := procs[pidOf(second)]; !ok || pidOf(second) == pidOf(first) {
		t.Fatalf("new holder %q", second)
	}
	t.Logf("scan lease moved from %s to %s %v after the kill", first, second, time.Since(killed).Round(100*time.Millisecond))
}
