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

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
)

// oldRulesConfig keys URLs and titles as sent, as before canonical keys.
const oldRulesConfig = "defaults:\n  key_rules:\n    url: {canonical: false}\n    title: {fold: false}\n"

func writeOldRules(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "old.yaml")
	if err := os.WriteFile(p, []byte(oldRulesConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRekeyCommand stores pairs under the old rules, previews the rekey,
// runs it, and checks that ingest no longer warns and that a delivery
// updates the merged record.
func TestRekeyCommand(t *testing.T) {
	c := newCLI(t)
	old := writeOldRules(t)
	items := strings.Join([]string{
		`{"title":"Open Day","url":"https://uni.example/open-day?utm_source=x","n":1}`,
		`{"title":"OPEN DAY","url":"https://uni.example/open-day/","n":2}`,
		`{"title":"Page","url":"https://uni.example/p?page=1"}`,
		`{"title":"Page","url":"https://uni.example/p?page=2"}`,
	}, "\n")
	c.ok(items, "ingest", "--config", old, "--source", "jobs", "--now", "2025-01-01T00:00:00Z", "-")

	out := c.ok("", "rekey", "--dry-run")
	if !strings.Contains(out, "would merge 1 record") || !strings.Contains(out, "would merge into 1 (title=open day url=https://uni.example/open-day)") {
		t.Fatalf("dry run:\n%s", out)
	}
	if st := decodeLines(t, c.ok("", "stats", "--json"))[0]; st["active"] != float64(4) {
		t.Fatalf("a dry run changed the store: %v", st)
	}
	// The store's keys are still the old rules': ingest warns.
	if _, errs, _ := c.run(`{"title":"Other","url":"https://uni.example/other"}`, "ingest", "--source", "jobs", "--now", "2025-01-01T00:00:00Z", "-"); !strings.Contains(errs, "crawlkeeper rekey --source jobs") {
		t.Fatalf("ingest before the rekey: stderr %q", errs)
	}

	var rep struct {
		crawlkeeper.RekeyReport
		Merges []crawlkeeper.MergeJournalEntry `json:"merges"`
	}
	if err := json.Unmarshal([]byte(c.ok("", "rekey", "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Merged != 1 || rep.Scanned != 5 || len(rep.Merges) != 1 || rep.Fingerprints["jobs"] == "" {
		t.Fatalf("rekey report %+v", rep)
	}
	if chk := decodeLines(t, c.ok("", "check", "--json"))[0]; chk["ok"] != true {
		t.Fatalf("check after rekey: %v", chk)
	}
	survivor := rep.Merges[0].Survivor
	// No warning now, and a delivery with another spelling updates the
	// survivor.
	out, errs, code := c.run(`{"title":"open day","url":"https://uni.example/open-day","n":3}`, "ingest", "--source", "jobs", "--json", "--now", "2025-01-02T00:00:00Z", "-")
	if code != 0 || strings.Contains(errs, "warning") || !strings.Contains(out, `"changed":1`) {
		t.Fatalf("ingest after rekey: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	hist := c.ok("", "history", fmt.Sprint(survivor), "--json")
	if strings.Count(hist, `"version"`) < 3 {
		t.Fatalf("history of the survivor after a change: %s", hist)
	}
	if out := c.ok("", "rekey"); !strings.Contains(out, "merged 0 records") {
		t.Fatalf("second rekey:\n%s", out)
	}
}

// TestRekeyKilledAndRerun SIGKILLs real rekey processes at random moments
// of a run that merges thousands of pairs; after each kill `check` must
// pass and no record version may be lost (records plus history entries
// stay constant), and a final run must finish the job.
func TestRekeyKilledAndRerun(t *testing.T) {
	longtest.Skip(t, "builds and kills a real process")
	if testing.Short() {
		t.Skip("builds and kills a real process")
	}
	bin := buildBinary(t)
	data := t.TempDir()
	old := writeOldRules(t)
	const pairs = 1500
	var in bytes.Buffer
	for i := 0; i < pairs; i++ {
		fmt.Fprintf(&in, `{"title":"Job %d","url":"https://k.test/job/%d/?utm_source=feed","body":"a%d"}`+"\n", i, i, i)
		fmt.Fprintf(&in, `{"title":"JOB %d","url":"https://k.test/job/%d","body":"b%d"}`+"\n", i, i, i)
	}
	run := func(stdin []byte, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--data", data)...)
		cmd.Stdin = bytes.NewReader(stdin)
		cmd.Env = append(os.Environ(), "CRAWLKEEPER_CONFIG=", "CRAWLKEEPER_STORE=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return out
	}
	run(in.Bytes(), "ingest", "--config", old, "--source", "jobs", "-", "--now", "2025-01-01T00:00:00Z")

	st, err := openTestStore(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	merged := func() int {
		var k int
		if err := st.ReadDB().QueryRow(`SELECT count(*) FROM journal WHERE kind = ?`, crawlkeeper.RekeyJournal).Scan(&k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	versions := func() (records, history float64) {
		var s map[string]any
		json.Unmarshal(run(nil, "stats", "--json"), &s)
		return s["active"].(float64) + s["archived"].(float64), s["history"].(float64)
	}
	rng := rand.New(rand.NewSource(17))
	kills := 0
	for i := 0; i < 6; i++ {
		target := merged() + 1 + rng.Intn((pairs-merged())/4+1)
		cmd := exec.Command(bin, "rekey", "--page", "50", "--data", data)
		cmd.Env = append(os.Environ(), "CRAWLKEEPER_CONFIG=", "CRAWLKEEPER_STORE=")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
	wait:
		for merged() < target {
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
		recs, hist := versions()
		if m := merged(); recs != float64(2*pairs-m) || recs+hist != 2*pairs {
			t.Fatalf("after kill %d with %d merges: %v records and %v history entries, want %d versions in all", kills, m, recs, hist, 2*pairs)
		}
	}
	if m := merged(); m == 0 || m == pairs {
		t.Fatalf("after the kills %d of %d pairs are merged: the kills did not land inside runs", m, pairs)
	}
	run(nil, "rekey", "--page", "50")
	if recs, hist := versions(); recs != pairs || hist != pairs {
		t.Fatalf("after %d kills and a final run: %v records, %v history entries, want %d and %d", kills, recs, hist, pairs, pairs)
	}
	var chk map[string]any
	json.Unmarshal(run(nil, "check", "--json"), &chk)
	if chk["ok"] != true {
		t.Fatalf("final check: %v", chk)
	}
	t.Logf("survived %d kills", kills)
}

// TestStatsDeliveries checks that stats shows the persistent delivery
// counters: across processes (each command is one), per source.
func TestStatsDeliveries(t *testing.T) {
	c := newCLI(t)
	c.ok(`{"title":"A","url":"https://d.example/a"}`+"\n"+`{"title":"B","url":"https://d.example/b"}`, "ingest", "--source", "jobs", "-")
	c.ok(`{"title":"a","url":"https://d.example/a/?utm_source=x"}`, "ingest", "--source", "jobs", "-")
	c.ok(`{"title":"B","url":"https://d.example/b"}`+"\n"+`{"title":"C","url":"https://d.example/c"}`, "ingest", "--source", "jobs", "-")
	st := decodeLines(t, c.ok("", "stats", "--json"))[0]
	src := st["sources"].(map[string]any)["jobs"].(map[string]any)
	if src["deliveries"] != float64(5) || src["duplicate_deliveries"] != float64(2) || src["duplicate_rate"] != 0.4 || st["deliveries"] != float64(5) {
		t.Fatalf("stats: %v", st)
	}
	out := c.ok("", "stats")
	if !strings.Contains(out, "deliveries 5  duplicates merged 2 (40.0%)") || !strings.Contains(out, "DUPLICATES") {
		t.Fatalf("stats:\n%s", out)
	}
}

// TestRekeyEmptySource follows a newcomer's first use: one item under a
// source, the same item without one. Nothing warns, the dry run counts the
// two records once each, and rekey of the empty source name
// merges nothing across sources.
func TestRekeyEmptySource(t *testing.T) {
	c := newCLI(t)
	item := `{"title":"Hello","url":"https://a.example/x"}`
	c.ok(item, "ingest", "--source", "s1", "--now", "2025-01-01T00:00:00Z", "-")
	if _, errs, _ := c.run(item, "ingest", "--now", "2025-01-01T00:01:00Z", "-"); strings.Contains(errs, "rekey") {
		t.Fatalf("ingest into a new store warned about key rules: %q", errs)
	}
	if out := c.ok("", "rekey", "--dry-run"); !strings.HasPrefix(out, "2 records in 2 sources") || !strings.Contains(out, "would merge 0 records") {
		t.Fatalf("dry run over every source:\n%s", out)
	}
	for _, args := range [][]string{{"rekey", "--source", "", "--dry-run"}, {"rekey", "--source", ""}, {"rekey"}} {
		out := c.ok("", args...)
		if !strings.Contains(out, "merge") || strings.Contains(out, "merged 1") || strings.Contains(out, "would merge 1") {
			t.Fatalf("%v:\n%s", args, out)
		}
		if len(args) > 1 && !strings.HasPrefix(out, `1 record in source ""`) {
			t.Fatalf("%v covered more than the empty source:\n%s", args, out)
		}
	}
	st := decodeLines(t, c.ok("", "stats", "--json"))[0]
	sources, _ := st["sources"].(map[string]any)
	for _, name := range []string{"", "s1"} {
		ss, _ := sources[name].(map[string]any)
		if ss == nil || ss["active"] != float64(1) {
			t.Fatalf("source %q after rekey: %v (stats %v)", name, ss, st)
		}
	}
}

// TestKeyRulesProcedure follows docs/KEYS.md's procedure for changing key
// rules while crawlers keep delivering: the new rules are deployed first
// (ingest warns while the store's keys were built under others), rekey
// runs under them during the deliveries, and afterwards every page is one
// record, ingest under the new rules is silent, and a process still on the
// old rules warns instead of making duplicates silently.
func TestKeyRulesProcedure(t *testing.T) {
	c := newCLI(t)
	old := writeOldRules(t)
	const pages, rounds = 5, 4
	spelling := func(p, v int) string {
		u := fmt.Sprintf("https://uni.example/event/%d", p)
		return []string{u + "?utm_source=mail", u + "/", u}[v]
	}
	item := func(p, v, n int) string {
		return fmt.Sprintf(`{"title":"Event %d","url":%q,"n":%d}`, p, spelling(p, v), n)
	}
	for p := 0; p < pages; p++ {
		c.ok(item(p, 0, 0)+"\n"+item(p, 1, 0), "ingest", "--config", old, "--source", "jobs", "-")
	}
	if st := decodeLines(t, c.ok("", "stats", "--json"))[0]; st["active"] != float64(2*pages) {
		t.Fatalf("the old rules stored %v records, want %d", st["active"], 2*pages)
	}

	// 1. The new rules (the defaults here) are deployed: deliveries under
	// them warn until a rekey has rebuilt the keys.
	if _, errs, code := c.run(item(0, 2, 1), "ingest", "--source", "jobs", "-"); code != 0 || !strings.Contains(errs, "crawlkeeper rekey --source jobs") {
		t.Fatalf("ingest under the new rules before the rekey: exit %d, stderr %q", code, errs)
	}
	// 2. Deliveries go on, in every spelling, while rekey runs.
	failed := make(chan string, pages*rounds)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for r := 0; r < rounds; r++ {
			for p := 0; p < pages; p++ {
				if out, errs, code := c.run(item(p, (p+r)%3, 2+r), "ingest", "--source", "jobs", "-"); code != 0 {
					failed <- fmt.Sprintf("exit %d: %s %s", code, out, errs)
				}
			}
		}
	}()
	c.ok("", "rekey", "--source", "jobs")
	<-done
	close(failed)
	for f := range failed {
		t.Fatalf("a delivery during the rekey failed: %s", f)
	}
	// A run that skipped records it could not decide about records no
	// fingerprint, so ingest keeps warning until one completes.
	for i := 0; ; i++ {
		_, errs, _ := c.run(item(0, 2, 100), "ingest", "--source", "jobs", "-")
		if !strings.Contains(errs, "rekey") {
			break
		}
		if i == 3 {
			t.Fatalf("ingest still warns after %d rekey runs: %q", i+1, errs)
		}
		c.ok("", "rekey", "--source", "jobs")
	}
	if st := decodeLines(t, c.ok("", "stats", "--json"))[0]; st["active"] != float64(pages) || st["archived"] != float64(0) {
		t.Fatalf("after the procedure: %v active and %v archived records for %d pages", st["active"], st["archived"], pages)
	}
	c.ok("", "check")
	// 3. A process left on the old rules is told, not silently duplicating.
	if _, errs, code := c.run(item(1, 0, 200), "ingest", "--config", old, "--source", "jobs", "-"); code != 0 || !strings.Contains(errs, "other key rules") {
		t.Fatalf("ingest under the old rules after the rekey: exit %d, stderr %q", code, errs)
	}
}
