package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// items returns n JSON lines; titles containing "boom" make the test's
// exec program fail.
func items(n int, boom ...int) string {
	var b strings.Builder
	bad := map[int]bool{}
	for _, i := range boom {
		bad[i] = true
	}
	for i := 0; i < n; i++ {
		title := fmt.Sprintf("record %d", i)
		if bad[i] {
			title += " boom"
		}
		fmt.Fprintf(&b, `{"_source":"s.test","title":%q,"url":"https://s.test/%d","body":"some text for record number %d of the test corpus","deadline":"2031-02-03"}`+"\n", title, i, i)
	}
	return b.String()
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestScanOnceStatusAndDeadLetters(t *testing.T) {
	c := newCLI(t)
	script := filepath.Join(t.TempDir(), "words.sh")
	os.WriteFile(script, []byte(`#!/bin/sh
exec awk '/boom/ { print "{\"error\":\"boom in title\"}"; fflush(); next } { print "{\"ok\":true}"; fflush() }'
`), 0o755)
	cfg := writeConfig(t, fmt.Sprintf(`pipeline:
  processors: [dates, fingerprint, stats, exec]
  exec:
    command: [/bin/sh, %q]
    version: 2
`, script))
	c.ok(items(30, 7), "ingest", "-", "--config", cfg, "--now", "2026-01-01T00:00:00Z")

	var st map[string]any
	json.Unmarshal([]byte(c.ok("", "scan", "status", "--json", "--config", cfg, "--now", "2026-01-01T00:00:00Z")), &st)
	for _, k := range []string{"pass", "position", "pass_started_at", "oldest_processed_at", "due"} {
		if _, ok := st[k]; !ok {
			t.Errorf("scan status lacks %q: %v", k, st)
		}
	}
	if st["due"] != float64(30) || st["pass"] != float64(0) {
		t.Fatalf("status before any pass = %v", st)
	}

	out := c.ok("", "scan", "--once", "--json", "--readers", "2", "--workers", "2", "--config", cfg, "--now", "2026-01-01T01:00:00Z")
	var rep map[string]any
	json.Unmarshal([]byte(out), &rep)
	for _, k := range []string{"pass", "processed", "skipped", "failed", "duration_s", "rate"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("scan --once --json lacks %q: %s", k, out)
		}
	}
	if rep["pass"] != float64(1) || rep["processed"] != float64(30) || rep["failed"] != float64(1) || rep["skipped"] != float64(0) {
		t.Fatalf("scan --once = %s", out)
	}

	recs := decodeLines(t, c.ok("", "records", "--limit", "2"))
	r := recs[0]
	if r["processed_at"] != "2026-01-01T01:00:00Z" || r["processed_version"] != float64(1) {
		t.Fatalf("record after a pass = %v", r)
	}
	derived := r["derived"].(map[string]any)
	if derived["exec"].(map[string]any)["ok"] != true || derived["fingerprint"].(map[string]any)["size"] == nil {
		t.Fatalf("derived = %v", derived)
	}

	json.Unmarshal([]byte(c.ok("", "scan", "status", "--json", "--config", cfg, "--now", "2026-01-01T02:00:00Z")), &st)
	if st["pass"] != float64(1) || st["due"] != float64(0) || st["oldest_processed_at"] != "2026-01-01T01:00:00Z" || st["position"] != st["pass_end"] {
		t.Fatalf("status after the pass = %v", st)
	}
	if src := st["sources"].(map[string]any)["s.test"].(map[string]any); src["records"] != float64(30) {
		t.Fatalf("stats = %v", src)
	}
	// A day later every record is due again.
	json.Unmarshal([]byte(c.ok("", "scan", "status", "--json", "--config", cfg, "--now", "2026-01-02T02:00:00Z")), &st)
	if st["due"] != float64(30) {
		t.Fatalf("due a day later = %v", st["due"])
	}

	var dls []map[string]any
	json.Unmarshal([]byte(c.ok("", "deadletters", "--json")), &dls)
	if len(dls) != 1 || dls[0]["processor"] != "exec" || !strings.Contains(dls[0]["error"].(string), "boom in title") || dls[0]["failures"] != float64(3) {
		t.Fatalf("dead letters = %v", dls)
	}
	if text := c.ok("", "deadletters"); !strings.Contains(text, "boom in title") || !strings.Contains(text, "1 dead letter") {
		t.Fatalf("dead letters text = %s", text)
	}
	id := fmt.Sprint(dls[0]["id"])
	var retry map[string]any
	json.Unmarshal([]byte(c.ok("", "deadletters", "retry", id, "--json", "--config", cfg)), &retry)
	if retry["retried"] != float64(1) || retry["failed"] != float64(1) {
		t.Fatalf("retry = %v", retry)
	}
	json.Unmarshal([]byte(c.ok("", "deadletters", "--json")), &dls)
	if len(dls) != 1 {
		t.Fatalf("a record that fails again must return to the dead letters: %v", dls)
	}
	if _, errs, code := c.run("", "deadletters", "retry", "x1"); code != 2 || !strings.Contains(errs, "not a record id") {
		t.Fatalf("retry with a bad id: %d %s", code, errs)
	}
	if _, errs, code := c.run("", "scan", "--once", "--processors", "dates,nosuch"); code != 1 || !strings.Contains(errs, `unknown processor "nosuch"`) {
		t.Fatalf("unknown processor: %d %s", code, errs)
	}
}

func TestIngestProcess(t *testing.T) {
	c := newCLI(t)
	_, errs, code := c.run(items(50), "ingest", "-", "--process", "--now", "2026-01-01T00:00:00Z")
	if code != 0 || !strings.Contains(errs, "processed 50 records") {
		t.Fatalf("ingest --process: exit %d, stderr %s", code, errs)
	}
	for _, r := range decodeLines(t, c.ok("", "records")) {
		if r["processed_at"] != "2026-01-01T00:00:00Z" || r["derived"] == nil {
			t.Fatalf("record not processed in real time: %v", r)
		}
	}
	// Without --process nothing is processed until a pass.
	c2 := newCLI(t)
	c2.ok(items(5), "ingest", "-")
	if r := decodeLines(t, c2.ok("", "records"))[0]; r["processed_at"] != nil {
		t.Fatalf("ingest without --process processed: %v", r)
	}
	if _, errs, code := c2.run(items(1), "ingest", "-", "--queue", "kafka://x"); code != 1 || !strings.Contains(errs, `unknown queue scheme "kafka"`) {
		t.Fatalf("bad queue: %d %s", code, errs)
	}
}

// TestScanKilledResumesFromCheckpoint SIGKILLs a real scanning process in
// the middle of a pass, then shows that the next process resumes from the
// stored checkpoint instead of starting over, and that no record is
// missed.
func TestScanKilledResumesFromCheckpoint(t *testing.T) {
	longtest.Skip(t, "builds and kills a real process")
	if testing.Short() {
		t.Skip("builds and kills a real process")
	}
	bin := buildBinary(t)
	data := t.TempDir()
	const n = 3000
	run := func(stdin string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--data", data)...)
		cmd.Stdin = strings.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s%s", args, err, out, stderr.Bytes())
		}
		return out
	}
	run(items(n), "ingest", "-")
	st, err := openTestStore(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()

	// At 400 records/s the pass takes several seconds; it is killed once
	// its checkpoint has moved past a fifth of the ids. Its scan lease is
	// short, so the next process does not wait long for it to expire.
	cfg := writeConfig(t, "pipeline:\n  lease: 2s\n")
	cmd := exec.Command(bin, "scan", "--once", "--max-rate", "400", "--batch", "50", "--readers", "2", "--processors", "noop,stats", "--config", cfg, "--data", data)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	var cp *pipeline.Checkpoint
wait:
	for {
		cp, err = pipeline.LoadCheckpoint(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		if cp != nil && cp.Position() > n/5 {
			break
		}
		select {
		case <-exited:
			break wait
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("the scan ended before it could be killed: %v", err)
	}
	<-exited
	cp, err = pipeline.LoadCheckpoint(ctx, st)
	if err != nil || cp == nil || cp.FinishedAt != nil || cp.Position() >= cp.End {
		t.Fatalf("checkpoint after the kill = %+v %v: the kill did not land inside the pass", cp, err)
	}
	left := int64(0)
	for _, r := range cp.Ranges {
		left += r.End - r.Pos
	}
	t.Logf("killed at position %d of %d; %d ids left in %d ranges", cp.Position(), cp.End, left, len(cp.Ranges))
	var processedBefore int
	st.ReadDB().QueryRow(`SELECT count(*) FROM active WHERE processed_at IS NOT NULL`).Scan(&processedBefore)
	resumeStart := time.Now()

	var rep map[string]any
	out := run("", "scan", "--once", "--json", "--readers", "3", "--processors", "noop,stats", "--config", cfg, "--wait", "1m")
	json.Unmarshal(out, &rep)
	if rep["pass"] != float64(cp.Pass) {
		t.Fatalf("the next process ran pass %v, want the unfinished pass %d (%s)", rep["pass"], cp.Pass, out)
	}
	// Ids are dense here (nothing archived), so the ids left are the
	// records left.
	if rep["processed"] != float64(left) {
		t.Fatalf("the next process processed %v records, want the %d the checkpoint left (%s)", rep["processed"], left, out)
	}
	var stale, rewritten int
	st.ReadDB().QueryRow(`SELECT count(*) FROM active WHERE processed_at IS NULL OR processed_chain != 'noop@1+stats@1'`).Scan(&stale)
	st.ReadDB().QueryRow(`SELECT count(*) FROM active WHERE id <= ? AND processed_at >= ?`, cp.Position(), resumeStart.UnixMicro()).Scan(&rewritten)
	if stale != 0 {
		t.Fatalf("%d records were missed", stale)
	}
	if rewritten != 0 {
		t.Fatalf("%d records below the checkpoint were processed again: the pass started over", rewritten)
	}
	if processedBefore == 0 {
		t.Fatal("the killed process wrote nothing")
	}
	var status map[string]any
	json.Unmarshal(run("", "scan", "status", "--json", "--processors", "noop,stats"), &status)
	if status["due"] != float64(0) || status["position"] != float64(n) {
		t.Fatalf("status after the resumed pass = %v", status)
	}
}
