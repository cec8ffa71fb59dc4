package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
)

func TestArchiveCLI(t *testing.T) {
	c := newCLI(t)
	items := `{"title":"a","url":"https://x.test/a","deadline":"2025-09-15"}
{"title":"b","url":"https://x.test/b","_source":"s2"}
{"title":"c","url":"https://x.test/c","deadline":"2025-12-01"}`
	c.ok(items, "ingest", "-", "--now", "2025-09-01T00:00:00Z")

	var dry map[string]any
	json.Unmarshal([]byte(c.ok("", "archive", "--dry-run", "--json", "--now", "2025-09-16T00:00:00Z")), &dry)
	if dry["dry_run"] != true || dry["archived"] != float64(1) || len(dry["samples"].([]any)) != 1 {
		t.Fatalf("dry run = %v", dry)
	}
	for _, k := range []string{"scanned", "by_reason", "reparsed", "date_errors", "duration_s"} {
		if _, ok := dry[k]; !ok {
			t.Errorf("archive --json lacks %q", k)
		}
	}
	var rep map[string]any
	json.Unmarshal([]byte(c.ok("", "archive", "--json", "--now", "2025-10-02T00:00:00Z")), &rep)
	byReason := rep["by_reason"].(map[string]any)
	if rep["archived"] != float64(3) || byReason["event"] != float64(1) || byReason["age"] != float64(2) || byReason["manual"] != float64(0) || byReason["stale"] != float64(0) {
		t.Fatalf("archive = %v", rep)
	}
	arch := decodeLines(t, c.ok("", "records", "--archived"))
	if len(arch) != 3 || arch[0]["archive_reason"] != "event" || arch[0]["archived_at"] != "2025-10-02T00:00:00Z" {
		t.Fatalf("archived records = %v", arch)
	}
	out := c.ok("", "restore", "2", "--now", "2025-10-02T00:00:00Z")
	if !strings.Contains(out, "restored 1 record") || !strings.Contains(out, "still due by the age rule") {
		t.Fatalf("restore output: %s", out)
	}
	_, errs, code := c.run("", "restore", "77")
	if code != 1 || !strings.Contains(errs, "no record was restored") {
		t.Fatalf("restore of a non-archived id: %d %s", code, errs)
	}
	json.Unmarshal([]byte(c.ok("", "archive", "--manual", "--id", "2", "--json", "--now", "2025-10-02T00:00:00Z")), &rep)
	if rep["archived"] != float64(1) || rep["by_reason"].(map[string]any)["manual"] != float64(1) {
		t.Fatalf("manual = %v", rep)
	}

	// Purge needs an export or an explicit --no-export.
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("defaults:\n  purge_after: 10d\n"), 0o644)
	_, errs, code = c.run("", "archive", "purge", "--config", cfg)
	if code != 2 || !strings.Contains(errs, "--export") {
		t.Fatalf("purge without export: %d %s", code, errs)
	}
	export := filepath.Join(t.TempDir(), "purged.jsonl.zst")
	out = c.ok("", "archive", "purge", "--config", cfg, "--export", export, "--json", "--now", "2025-10-20T00:00:00Z")
	var pr map[string]any
	json.Unmarshal([]byte(out), &pr)
	if pr["purged"] != float64(3) {
		t.Fatalf("purge = %s", out)
	}
	if st, err := os.Stat(export); err != nil || st.Size() == 0 {
		t.Fatalf("export file: %v", err)
	}
	_, errs, code = c.run("", "archive", "purge", "--config", cfg, "--export", export)
	if code != 2 || !strings.Contains(errs, "exists") {
		t.Fatalf("purge over an existing export: %d %s", code, errs)
	}
	var chk map[string]any
	json.Unmarshal([]byte(c.ok("", "check", "--json")), &chk)
	if chk["ok"] != true {
		t.Fatalf("check = %v", chk)
	}
	var st map[string]any
	json.Unmarshal([]byte(c.ok("", "stats", "--json", "--now", "2025-10-20T00:00:00Z")), &st)
	if st["archived"] != float64(0) || st["active"] != float64(0) || st["history"] != float64(0) {
		t.Fatalf("stats = %v", st)
	}
}

// TestArchiveKilledAndRerun SIGKILLs real archive processes at random
// moments; after each kill the store must be consistent, and a final run
// must finish the job with every record archived exactly once.
func TestArchiveKilledAndRerun(t *testing.T) {
	longtest.Skip(t, "builds and kills a real process")
	if testing.Short() {
		t.Skip("builds and kills a real process")
	}
	bin := buildBinary(t)
	data := t.TempDir()
	const n = 6000
	var in bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&in, `{"title":"record %d","url":"https://k.test/%d","body":"%s"}`+"\n", i, i, strings.Repeat("x", i%200))
	}
	run := func(stdin []byte, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--data", data)...)
		cmd.Stdin = bytes.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	run(in.Bytes(), "ingest", "-", "--now", "2025-01-01T00:00:00Z")

	// Each run is killed once the archive holds a random (seeded) number of
	// records, so every kill lands inside a pass.
	st, err := openTestStore(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	archived := func() int {
		var k int
		if err := st.ReadDB().QueryRow(`SELECT count(*) FROM archive`).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	rng := rand.New(rand.NewSource(42))
	kills := 0
	for i := 0; i < 8; i++ {
		target := archived() + 1 + rng.Intn((n-archived())/4+1)
		cmd := exec.Command(bin, "archive", "--batch", "40", "--data", data, "--now", "2025-03-01T00:00:00Z")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
	wait:
		for archived() < target {
			select {
			case <-exited:
				break wait
			case <-time.After(time.Millisecond):
			}
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err == nil {
			kills++
		}
		<-exited
		var chk map[string]any
		json.Unmarshal(run(nil, "check", "--json"), &chk)
		if chk["ok"] != true {
			t.Fatalf("after kill %d: %v", kills, chk)
		}
		var stats map[string]any
		json.Unmarshal(run(nil, "stats", "--json"), &stats)
		if stats["active"].(float64)+stats["archived"].(float64) != n {
			t.Fatalf("after kill %d: active %v + archived %v != %d", kills, stats["active"], stats["archived"], n)
		}
	}
	if a := archived(); a == 0 || a == n {
		t.Fatalf("after the kills %d of %d records are archived: the kills did not land inside passes", a, n)
	}
	run(nil, "archive", "--now", "2025-03-01T00:00:00Z")
	var final map[string]any
	json.Unmarshal(run(nil, "stats", "--json"), &final)
	if final["active"] != float64(0) || final["archived"] != float64(n) {
		t.Fatalf("after %d kills and a final run: active %v archived %v, want 0 and %d", kills, final["active"], final["archived"], n)
	}
	t.Logf("survived %d kills", kills)
}
