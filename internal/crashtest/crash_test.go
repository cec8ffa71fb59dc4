// Package crashtest kills the real crawlkeeper binary at random moments
// and checks that nothing acknowledged is lost. It has no code of its own;
// it is a separate package so its long run has a test timeout of its own.
package crashtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// buildBinary builds crawlkeeper once per test run.
func buildBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crawlkeeper-crash-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "crawlkeeper")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/crawlkeeper/crawlkeeper/cmd/crawlkeeper").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if binErr != nil {
		t.Fatalf("build crawlkeeper: %v", binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

func openTestStore(data string) (*sqlite.Store, error) {
	return sqlite.Open(context.Background(), filepath.Join(data, backends.SQLiteFile))
}

// crashEnv is the state of the crash harness: what the killed processes
// acknowledged before they died.
type crashEnv struct {
	t    *testing.T
	bin  string
	data string
	rng  *rand.Rand
	// ackedItems holds "title|url" of every item in an acknowledged
	// response; ackedMarks the targets acknowledged done, per round.
	ackedItems map[string]bool
	ackedMarks map[string]map[string]bool
	// cfg gives serve and scans a short scan lease, so that the lease of
	// a killed process expires soon.
	cfg     string
	next    int
	kills   int
	resumed int
	byOp    map[string]int
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestCrashHarness runs the real binary and SIGKILLs it at seeded random
// moments during ingest, monitor marking, archiving, scanning and bucket
// merging. After every kill the store's invariants hold, every
// acknowledged item is present exactly once (active or archive), every
// acknowledged mark is present, and a killed scan resumes from its
// checkpoint. CRAWLKEEPER_CRASH_KILLS sets the number of kills (CI: 60),
// CRAWLKEEPER_CRASH_SEED the seed.
func TestCrashHarness(t *testing.T) {
	longtest.Skip(t, "kills real processes")
	if testing.Short() {
		t.Skip("kills real processes")
	}
	seed := int64(envInt("CRAWLKEEPER_CRASH_SEED", 1))
	kills := envInt("CRAWLKEEPER_CRASH_KILLS", 15)
	c := &crashEnv{t: t, bin: buildBinary(t), data: t.TempDir(), rng: rand.New(rand.NewSource(seed)),
		ackedItems: map[string]bool{}, ackedMarks: map[string]map[string]bool{}, byOp: map[string]int{}}
	c.cfg = filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(c.cfg, []byte("pipeline:\n  lease: 2s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("seed %d, %d kills", seed, kills)
	ops := []string{"ingest", "mark", "archive", "scan", "merge"}
	for c.kills < kills {
		op := ops[c.rng.Intn(len(ops))]
		c.byOp[op]++
		switch op {
		case "ingest", "mark":
			c.killServe(op)
		case "archive":
			c.killCommand("archive", "--batch", "25", "--now", "2031-01-01T00:00:00Z")
		case "scan":
			c.killScan()
		case "merge":
			c.killCommand("round", "merge", "--now", "2031-01-01T00:00:00Z")
		}
		c.verify(false)
	}
	c.verify(true)
	// The CLI's own check agrees at the end.
	out, err := exec.Command(c.bin, "check", "--json", "--data", c.data).CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"ok":true`) {
		t.Fatalf("crawlkeeper check after %d kills: %v\n%s", c.kills, err, out)
	}
	t.Logf("%d kills survived (%v); %d acknowledged items, %d rounds with acknowledged marks, %d scans resumed from their checkpoint",
		c.kills, c.byOp, len(c.ackedItems), len(c.ackedMarks), c.resumed)
}

// killServe starts serve, drives it with ingest or mark requests from a
// client, and kills it at a random moment while requests are in flight.
func (c *crashEnv) killServe(op string) {
	t := c.t
	cmd := exec.Command(c.bin, "serve", "--addr", "127.0.0.1:0", "--data", c.data, "--config", c.cfg, "--archive-every", "off")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	base := ""
	for sc.Scan() {
		if url, ok := strings.CutPrefix(sc.Text(), "crawlkeeper is serving on "); ok {
			base = strings.TrimSuffix(url, "/")
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	if base == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("serve did not start: %v", sc.Err())
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	round := strconv.Itoa(1 + c.rng.Intn(3))
	// Three clients at once, so the kill finds work in every stage.
	for w := 0; w < 3; w++ {
		wg.Add(1)
		first := c.next
		c.next += 100000
		go func(first int) {
			defer wg.Done()
			for i := first; ctx.Err() == nil; i += 20 {
				target := fmt.Sprintf("target-%d", i/20)
				var body strings.Builder
				var keys []string
				path := base + "/api/v1/rounds/" + round + "/done"
				if op == "ingest" {
					path = base + "/api/v1/items?source=crash&round=" + round + "&target=" + target
					for j := i; j < i+20; j++ {
						// Some items come back changed: their key repeats.
						k := j
						if j%7 == 0 && j > 20 {
							k = j - 20
						}
						fmt.Fprintf(&body, `{"title":"item %d","url":"https://crash.test/%d","rev":%d}`+"\n", k, k, j)
						keys = append(keys, fmt.Sprintf("item %d|https://crash.test/%d", k, k))
					}
				} else {
					body.WriteString(target + "\n" + target + "-b\n")
				}
				req, _ := http.NewRequestWithContext(ctx, "POST", path, strings.NewReader(body.String()))
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					return // the server died: this request was never acknowledged
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					continue
				}
				mu.Lock()
				if c.ackedMarks[round] == nil {
					c.ackedMarks[round] = map[string]bool{}
				}
				c.ackedMarks[round][target] = true
				if op == "mark" {
					c.ackedMarks[round][target+"-b"] = true
				}
				for _, k := range keys {
					c.ackedItems[k] = true
				}
				mu.Unlock()
			}
		}(first)
	}
	time.Sleep(time.Duration(30+c.rng.Intn(600)) * time.Millisecond) // a random kill point
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	cancel()
	wg.Wait()
	c.kills++
}

// killCommand runs a CLI command and kills it at a random moment.
func (c *crashEnv) killCommand(args ...string) {
	cmd := exec.Command(c.bin, append(args, "--data", c.data)...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	time.Sleep(time.Duration(c.rng.Intn(700)) * time.Millisecond) // a random kill point
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	c.kills++
}

// killScan kills a rate-limited scan pass once its checkpoint has moved,
// then checks that the next scan resumes that pass from the checkpoint.
func (c *crashEnv) killScan() {
	t := c.t
	st, err := openTestStore(c.data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// A killed serve or scan leaves its scan lease until it expires; the
	// random kill point below counts from when the scan can take it.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		owner, _, err := st.LeaseOwner(context.Background(), pipeline.ScanLease, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if owner == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scan lease of %s did not expire", owner)
		}
	}
	cmd := exec.Command(c.bin, "scan", "--once", "--max-rate", "3000", "--batch", "50", "--config", c.cfg, "--data", c.data)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	// Kill at a random point after the pass has checkpointed progress.
	stopAt := time.Now().Add(time.Duration(100+c.rng.Intn(900)) * time.Millisecond)
	for time.Now().Before(stopAt) {
		select {
		case <-exited:
			stopAt = time.Now()
		case <-time.After(5 * time.Millisecond):
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	c.kills++
	cp, err := pipeline.LoadCheckpoint(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if cp == nil || cp.FinishedAt != nil || cp.Position() == 0 {
		return // killed before the first checkpoint or after the pass: nothing to resume
	}
	out, err := exec.Command(c.bin, "scan", "--once", "--json", "--batch", "200", "--config", c.cfg, "--wait", "1m", "--data", c.data).Output()
	if err != nil {
		t.Fatalf("scan after a kill: %v\n%s", err, out)
	}
	var rep struct {
		Pass    int64 `json:"pass"`
		Resumed bool  `json:"resumed"`
		From    int64 `json:"from"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("scan --json: %v: %s", err, out)
	}
	if rep.Pass != cp.Pass || !rep.Resumed || rep.From < cp.Position() {
		t.Fatalf("scan after a kill at position %d of pass %d: %+v, want it to resume from the checkpoint", cp.Position(), cp.Pass, rep)
	}
	c.resumed++
	// Nothing the pass covered may be left unprocessed.
	recs, err := st.ScanActive(context.Background(), 0, cp.End, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.ProcessedAt == nil || r.ProcessedVersion != r.Version {
			t.Fatalf("record %d (version %d) was skipped by the resumed pass: processed %v at version %d", r.ID, r.Version, r.ProcessedAt, r.ProcessedVersion)
		}
	}
}

// verify checks the store after a kill, in process.
func (c *crashEnv) verify(final bool) {
	t := c.t
	st, err := openTestStore(c.data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	rep, err := st.Check(ctx)
	if err != nil || !rep.OK {
		t.Fatalf("after kill %d: check %+v %v", c.kills, rep, err)
	}
	// One query over both tables: each acknowledged key must be stored
	// exactly once, active or archived.
	present := map[string]int{}
	rows, err := st.ReadDB().Query(`SELECT title, url FROM active WHERE source = 'crash' UNION ALL SELECT title, url FROM archive WHERE source = 'crash'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var title, url string
		if err := rows.Scan(&title, &url); err != nil {
			t.Fatal(err)
		}
		present[title+"|"+url]++
	}
	rows.Close()
	for k := range c.ackedItems {
		if present[k] != 1 {
			t.Fatalf("after kill %d: acknowledged item %q is present %d times", c.kills, k, present[k])
		}
	}
	// Marks are checked every fifth kill and at the end: opening the
	// monitor replays its log, which grows with the run.
	if len(c.ackedMarks) == 0 || (c.kills%5 != 0 && !final) {
		return
	}
	mon, err := roaringmon.Open(ctx, st, crawlkeeper.MonitorOptions{}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	for round, targets := range c.ackedMarks {
		for target := range targets {
			ts, err := mon.Target(ctx, target)
			if err != nil {
				t.Fatalf("after kill %d: acknowledged mark %s in round %s: %v", c.kills, target, round, err)
			}
			done := false
			for _, r := range ts.Rounds {
				done = done || (r.Round == round && r.Done)
			}
			if !done {
				t.Fatalf("after kill %d: acknowledged mark of %s in round %s is missing: %+v", c.kills, target, round, ts)
			}
		}
	}
}
