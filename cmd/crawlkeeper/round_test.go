package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
)

// mcli runs crawlkeeper in process with one data folder and, optionally, a
// monitor URL; flags are appended after the command's own arguments.
type mcli struct {
	t       *testing.T
	data    string
	monitor string
	config  string
}

func newMonitorCLI(t *testing.T, monitor string) *mcli {
	t.Setenv("CRAWLKEEPER_CONFIG", "")
	t.Setenv("CRAWLKEEPER_STORE", "")
	t.Setenv("CRAWLKEEPER_DATA", "")
	t.Setenv("CRAWLKEEPER_MONITOR", "")
	return &mcli{t: t, data: t.TempDir(), monitor: monitor}
}

func (c *mcli) run(stdin string, args ...string) (string, string, int) {
	c.t.Helper()
	var out, errb bytes.Buffer
	args = append(append([]string{}, args...), "--data", c.data)
	if c.monitor != "" {
		args = append(args, "--monitor", c.monitor)
	}
	if c.config != "" {
		args = append(args, "--config", c.config)
	}
	code := Run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func (c *mcli) ok(stdin string, args ...string) string {
	c.t.Helper()
	out, errs, code := c.run(stdin, args...)
	if code != 0 {
		c.t.Fatalf("crawlkeeper %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func (c *mcli) json(v any, stdin string, args ...string) {
	c.t.Helper()
	out := c.ok(stdin, append(args, "--json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("crawlkeeper %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestRoundCLIEmbedded(t *testing.T) {
	c := newMonitorCLI(t, "")
	testRoundCLI(t, c)
	if _, errs, code := c.run("", "round", "list", "--monitor", "ftp://x"); code != 1 || !strings.Contains(errs, `unknown monitor scheme "ftp"`) {
		t.Fatalf("unknown monitor scheme: exit %d, %q", code, errs)
	}
}

func TestRoundCLIRedis(t *testing.T) {
	raw := os.Getenv("CRAWLKEEPER_TEST_REDIS")
	if raw == "" {
		t.Skip("set CRAWLKEEPER_TEST_REDIS (for example redis://127.0.0.1:6379/0) to run the CLI against the Redis monitor")
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("cktest-cli-%d", time.Now().UnixNano())
	q := u.Query()
	q.Set("prefix", prefix)
	u.RawQuery = q.Encode()
	t.Cleanup(func() {
		// The keys are removed with the redis-cli the CI uses to check the
		// server, so this test needs no client of its own.
		out, err := exec.Command("redis-cli", "-u", raw, "--scan", "--pattern", prefix+":*").Output()
		if err != nil {
			t.Logf("clean up %s: %v", prefix, err)
			return
		}
		for _, k := range strings.Fields(string(out)) {
			exec.Command("redis-cli", "-u", raw, "DEL", k).Run()
		}
	})
	testRoundCLI(t, newMonitorCLI(t, u.String()))
}

func testRoundCLI(t *testing.T, c *mcli) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte("monitor:\n  samples: 2\nsources:\n  jobs:\n    watch_fields: [salary]\n"), 0o644)
	c.config = cfg

	var q map[string]any
	c.json(&q, "acme.example\nbeta.example\n\ngamma.example\ndelta.example\nacme.example\n", "round", "queue", "--round", "7", "-", "--now", "2026-03-01T10:00:00Z")
	if !reflect.DeepEqual(q, map[string]any{"round": "7", "queued": 4.0, "new_targets": 4.0, "total": 4.0}) {
		t.Fatalf("queue = %v", q)
	}
	// A second round with its own bucket length, from a file.
	names := filepath.Join(t.TempDir(), "names.txt")
	os.WriteFile(names, []byte("beta.example\nepsilon.example\n"), 0o644)
	c.json(&q, "", "round", "queue", "--round", "8", "--bucket", "30m", names, "--now", "2026-03-02T10:00:00Z")
	if q["new_targets"] != 1.0 || q["queued"] != 2.0 {
		t.Fatalf("queue 8 = %v", q)
	}

	c.ok("", "round", "done", "--round", "7", "acme.example", "beta.example", "--now", "2026-03-01T10:05:00Z")
	fail := filepath.Join(t.TempDir(), "fail.txt")
	os.WriteFile(fail, []byte("gamma.example\n"), 0o644)
	var mr map[string]any
	c.json(&mr, "", "round", "fail", "--round", "7", "--file", fail, "--now", "2026-03-01T10:15:00Z")
	if mr["marked"] != 1.0 || mr["kind"] != "failed" {
		t.Fatalf("fail = %v", mr)
	}

	var st struct {
		Round     string `json:"round"`
		Queued    int    `json:"queued"`
		Done      int    `json:"done"`
		Failed    int    `json:"failed"`
		Remaining int    `json:"remaining"`
		Bytes     int    `json:"bytes"`
		Buckets   []struct {
			Start string `json:"start"`
			Done  int    `json:"done"`
		} `json:"buckets"`
	}
	c.json(&st, "", "round", "status", "--round", "7")
	if st.Round != "7" || st.Queued != 4 || st.Done != 2 || st.Failed != 1 || st.Remaining != 1 || st.Bytes <= 0 {
		t.Fatalf("status = %+v", st)
	}
	if len(st.Buckets) != 1 || st.Buckets[0].Start != "2026-03-01T10:00:00Z" || st.Buckets[0].Done != 2 {
		t.Fatalf("buckets = %+v", st.Buckets)
	}
	if _, err := time.Parse(time.RFC3339, st.Buckets[0].Start); err != nil {
		t.Fatal(err)
	}
	if out := c.ok("", "round", "remaining", "--round", "7"); out != "delta.example\n" {
		t.Fatalf("remaining = %q", out)
	}
	// Paging in dictionary order.
	if out := c.ok("", "round", "remaining", "--round", "8", "--limit", "1"); out != "beta.example\n" {
		t.Fatalf("remaining page 1 = %q", out)
	}
	if out := c.ok("", "round", "remaining", "--round", "8", "--limit", "1", "--after", "beta.example"); out != "epsilon.example\n" {
		t.Fatalf("remaining page 2 = %q", out)
	}

	// Ingest marks targets done: per command and per item, in the same
	// commit as the records.
	items := `{"title":"Job 1","url":"https://jobs.example/1","salary":"","_target":"delta.example"}
{"title":"Job 2","url":"https://jobs.example/2","salary":"50k","_target":"epsilon.example","_round":"8"}
{"title":"Job 3","url":"https://jobs.example/3","salary":"60k"}
`
	var sum map[string]any
	c.json(&sum, items, "ingest", "-", "--source", "jobs", "--round", "7", "--target", "beta.example", "--now", "2026-03-01T10:45:00Z")
	if sum["inserted"] != 3.0 || sum["marked"] != 3.0 {
		t.Fatalf("ingest summary = %v", sum)
	}
	c.json(&st, "", "round", "status", "--round", "7")
	if st.Done != 3 || st.Remaining != 0 || len(st.Buckets) != 2 || st.Buckets[1].Start != "2026-03-01T10:40:00Z" || st.Buckets[1].Done != 2 {
		t.Fatalf("status after ingest = %+v", st)
	}

	var diff struct {
		OnlyRound struct {
			Count int      `json:"count"`
			Names []string `json:"names"`
		} `json:"only_round"`
		OnlyVs struct {
			Count int      `json:"count"`
			Names []string `json:"names"`
		} `json:"only_vs"`
	}
	c.json(&diff, "", "round", "diff", "--round", "7", "--vs", "8")
	if diff.OnlyRound.Count != 3 || !reflect.DeepEqual(diff.OnlyRound.Names, []string{"acme.example", "beta.example", "delta.example"}) ||
		diff.OnlyVs.Count != 1 || !reflect.DeepEqual(diff.OnlyVs.Names, []string{"epsilon.example"}) {
		t.Fatalf("diff = %+v", diff)
	}

	var rounds []map[string]any
	c.json(&rounds, "", "round", "list")
	if len(rounds) != 2 || rounds[0]["round"] != "7" || rounds[1]["round"] != "8" || rounds[1]["done"] != 1.0 {
		t.Fatalf("rounds = %v", rounds)
	}
	var target struct {
		Target string `json:"target"`
		Rounds []struct {
			Round  string `json:"round"`
			Queued bool   `json:"queued"`
			Done   bool   `json:"done"`
			DoneAt string `json:"done_at"`
		} `json:"rounds"`
	}
	c.json(&target, "", "target", "beta.example")
	if len(target.Rounds) != 2 || !target.Rounds[0].Done || target.Rounds[0].DoneAt != "2026-03-01T10:00:00Z" || target.Rounds[1].Done {
		t.Fatalf("target = %+v", target)
	}
	if out := c.ok("", "target", "beta.example"); !strings.Contains(out, "round 7: done") {
		t.Fatalf("target text = %q", out)
	}

	var fields []map[string]any
	c.json(&fields, "", "fields", "--source", "jobs")
	if len(fields) != 1 || fields[0]["field"] != "salary" || fields[0]["filled"] != 2.0 || fields[0]["enough"] != true {
		t.Fatalf("fields = %v", fields)
	}
	if got := fields[0]["fill_rate_by_round"]; !reflect.DeepEqual(got, map[string]any{"7": 0.5, "8": 1.0}) {
		t.Fatalf("fill rate by round = %v", got)
	}
	if s := fields[0]["samples"].([]any); len(s) != 2 {
		t.Fatalf("samples = %v", s)
	}

	var merged map[string]any
	c.json(&merged, "", "round", "merge", "--now", "2026-03-01T11:00:00Z")
	if merged["merged"] != 3.0 {
		t.Fatalf("merge = %v", merged)
	}
	c.json(&st, "", "round", "status", "--round", "7")
	if st.Done != 3 {
		t.Fatalf("status after merge = %+v", st)
	}

	testRoundFailedCLI(t, c)

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"round"}, 2, "subcommand"},
		{[]string{"round", "failed", "--round", "99"}, 1, `round "99" not found`},
		{[]string{"round", "failed", "--round", "8", "--also", "99"}, 1, `round "99" not found`},
		{[]string{"round", "failed", "--round", "8", "--all", "--after", "x"}, 2, "--all starts at the first page"},
		{[]string{"round", "done", "--round", "8", "--reason", "x", "acme.example"}, 2, "reason"},
		{[]string{"round", "nosuch"}, 2, `unknown round subcommand "nosuch"`},
		{[]string{"round", "status"}, 2, "--round is required"},
		{[]string{"round", "status", "--round", "99"}, 1, `round "99" not found`},
		{[]string{"round", "done", "--round", "7"}, 2, "NAMEs or --file"},
		{[]string{"round", "queue", "--round", "9", "--bucket", "0.5s", "-"}, 2, "--bucket"},
		{[]string{"round", "queue", "--round", "8", "--bucket", "5m", "-"}, 1, "cannot change"},
		{[]string{"round", "remaining", "--round", "7", "--after", "nosuch.example"}, 1, "not in the dictionary"},
		{[]string{"target", "nosuch.example"}, 1, "not in the dictionary"},
	} {
		in := ""
		if len(tc.args) > 1 && tc.args[1] == "queue" {
			in = "zeta.example\n"
		}
		_, errs, code := c.run(in, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("crawlkeeper %v: exit %d stderr %q; want exit %d with %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

// testRoundFailedCLI lists failed targets by name (with reasons from
// round fail --reason and from _error), pages, filters and pipes them
// into round queue. It follows testRoundCLI's rounds 7 and 8.
func testRoundFailedCLI(t *testing.T, c *mcli) {
	c.ok("", "round", "fail", "--round", "8", "--reason", "HTTP 503\nthen a reset", "beta.example", "gamma.example", "--now", "2026-03-02T10:10:00Z")
	var sum map[string]any
	c.json(&sum, `{"_target":"acme.example","_round":"8","_error":"timeout"}`+"\n", "ingest", "-", "--now", "2026-03-02T10:11:00Z")
	if sum["reports"] != 1.0 || sum["inserted"] != 0.0 {
		t.Fatalf("failure report = %v", sum)
	}
	if out := c.ok("", "round", "failed", "--round", "8"); out != "acme.example\nbeta.example\ngamma.example\n" {
		t.Fatalf("failed = %q", out)
	}
	if out := c.ok("", "round", "failed", "--round", "8", "--reasons", "--limit", "2"); out != "acme.example\ttimeout\nbeta.example\tHTTP 503 then a reset\n" {
		t.Fatalf("failed with reasons = %q", out)
	}
	if out := c.ok("", "round", "failed", "--round", "8", "--limit", "2", "--after", "beta.example"); out != "gamma.example\n" {
		t.Fatalf("failed page 2 = %q", out)
	}
	if out := c.ok("", "round", "failed", "--round", "8", "--limit", "1", "--all"); out != "acme.example\nbeta.example\ngamma.example\n" {
		t.Fatalf("failed --all = %q", out)
	}
	var page struct {
		Count   int `json:"count"`
		Targets []struct {
			Target string `json:"target"`
			Reason string `json:"reason"`
		} `json:"targets"`
		Next string `json:"next"`
	}
	c.json(&page, "", "round", "failed", "--round", "8", "--limit", "1")
	if page.Count != 3 || len(page.Targets) != 1 || page.Targets[0].Reason != "timeout" || page.Next != "acme.example" {
		t.Fatalf("failed --json = %+v", page)
	}
	c.json(&page, "", "round", "failed", "--round", "8", "--limit", "1", "--all")
	if page.Count != 3 || len(page.Targets) != 3 || page.Next != "" {
		t.Fatalf("failed --all --json = %+v", page)
	}
	// gamma failed in 7 and in 8.
	if out := c.ok("", "round", "failed", "--round", "8", "--also", "7", "--reasons"); out != "gamma.example\tHTTP 503 then a reset\t\n" {
		t.Fatalf("failed in 8 and 7 = %q", out)
	}
	if out := c.ok("", "target", "gamma.example"); !strings.Contains(out, "round 8: failed: HTTP 503 then a reset") {
		t.Fatalf("target text = %q", out)
	}
	// A later round does gamma: failed in 7, done later.
	c.ok("", "round", "done", "--round", "9", "gamma.example", "--now", "2026-03-03T10:00:00Z")
	if out := c.ok("", "round", "failed", "--round", "7", "--done-later", "--reasons"); out != "gamma.example\t\t9\n" {
		t.Fatalf("failed in 7, done later = %q", out)
	}
	// Re-queue the failures of round 8 into round 10.
	failed := c.ok("", "round", "failed", "--round", "8", "--all")
	var q map[string]any
	c.json(&q, failed, "round", "queue", "--round", "10", "-", "--now", "2026-03-04T10:00:00Z")
	if q["queued"] != 3.0 || q["new_targets"] != 0.0 {
		t.Fatalf("re-queued = %v", q)
	}
}

// TestKillDuringMarking kills a real crawlkeeper process with SIGKILL while
// it marks a large file and checks that every mark it acknowledged is
// there after a restart.
func TestKillDuringMarking(t *testing.T) {
	longtest.Skip(t, "builds and kills a real process")
	dir := t.TempDir()
	bin := filepath.Join(dir, "crawlkeeper")
	// Build with the test's own race setting, so the packages come from
	// the build cache the test binary just filled.
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const total = 100000
	names := filepath.Join(dir, "targets.txt")
	var b strings.Builder
	for i := 0; i < total; i++ {
		fmt.Fprintf(&b, "company-%06d.example\n", i)
	}
	os.WriteFile(names, []byte(b.String()), 0o644)
	data := filepath.Join(dir, "data")
	env := append(os.Environ(), "CRAWLKEEPER_MONITOR=", "CRAWLKEEPER_STORE=", "CRAWLKEEPER_CONFIG=")

	cmd := exec.Command(bin, "round", "done", "--round", "1", "--file", names, "--batch", "1000", "--progress", "--data", data)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill after a few acknowledged batches, while later ones are in flight.
	acked := 0
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "acknowledged "))
		if err != nil {
			t.Fatalf("unexpected output %q", sc.Text())
		}
		acked = n
		if acked >= 10000 {
			cmd.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	// Lines written before the kill landed are acknowledged too.
	for sc.Scan() {
		if n, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "acknowledged ")); err == nil {
			acked = n
		}
	}
	err = cmd.Wait()
	if acked < 10000 {
		t.Fatalf("the process ended after %d acknowledged marks: %v\n%s", acked, err, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the process was not killed (%v); it finished before the kill, raise total", err)
	}

	run := func(args ...string) string {
		t.Helper()
		c := exec.Command(bin, append(args, "--data", data)...)
		c.Env = env
		out, err := c.Output()
		if err != nil {
			t.Fatalf("crawlkeeper %v: %v", args, err)
		}
		return string(out)
	}
	var st struct{ Done, Queued, Remaining int }
	json.Unmarshal([]byte(run("round", "status", "--round", "1", "--json")), &st)
	if st.Done < acked || st.Done >= total {
		t.Fatalf("after the kill %d marks are done, %d were acknowledged (of %d)", st.Done, acked, total)
	}
	// Queue the whole file: the names the killed process never marked join
	// the dictionary after the others, in file order, so the first remaining
	// name shows that every acknowledged one is done.
	run("round", "queue", "--round", "1", names)
	first := strings.TrimSpace(run("round", "remaining", "--round", "1", "--limit", "1"))
	idx, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(first, "company-"), ".example"))
	if err != nil {
		t.Fatalf("first remaining %q", first)
	}
	if idx < acked {
		t.Fatalf("%s is not done although %d marks in file order were acknowledged", first, acked)
	}
	json.Unmarshal([]byte(run("round", "status", "--round", "1", "--json")), &st)
	if st.Queued != total || st.Done+st.Remaining != total {
		t.Fatalf("status after queueing everything = %+v", st)
	}
	t.Logf("killed after %d acknowledged marks; %d were durable", acked, st.Done)
}
