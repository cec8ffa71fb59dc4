package crashtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
	"github.com/jackc/pgx/v5"
)

// TestTwoServesSharedMarks runs two serve processes on one PostgreSQL
// database, without --monitor, and kills one of them with SIGKILL at
// random moments (restarting it at once) while clients post to both:
// items with a round target (marks committed in the ingest transaction)
// and direct round marks (marks in a monitor transaction of their own).
// Then every acknowledged mark is counted exactly once, both processes
// agree with a fresh one, every acknowledged item is stored once, and
// check passes. CRAWLKEEPER_CRASH_SECONDS sets how long the kills go on
// (default 10; CI: 60), CRAWLKEEPER_CRASH_SEED the seed.
func TestTwoServesSharedMarks(t *testing.T) {
	longtest.Skip(t, "kills real processes")
	if testing.Short() {
		t.Skip("kills real processes")
	}
	ctx := context.Background()
	store := testdb.PostgresURL(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	seconds := envInt("CRAWLKEEPER_CRASH_SECONDS", 10)
	rng := rand.New(rand.NewSource(int64(envInt("CRAWLKEEPER_CRASH_SEED", 1))))
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte("pipeline:\n  lease: 3s\n"), 0o644)

	// slot is one of the two processes; clients read its current address.
	type slot struct {
		mu   sync.Mutex
		cmd  *exec.Cmd
		base string
	}
	start := func(s *slot, name string) {
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--store", store, "--config", cfg, "--archive-every", "off",
			"--data", filepath.Join(dir, name))
		cmd.Env = append(os.Environ(), "CRAWLKEEPER_MONITOR=", "CRAWLKEEPER_TOKENS=", "CRAWLKEEPER_CONFIG=")
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "crawlkeeper is serving on "); ok {
				go io.Copy(io.Discard, stdout)
				s.mu.Lock()
				s.cmd, s.base = cmd, strings.TrimSuffix(u, "/")
				s.mu.Unlock()
				return
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("serve %s did not start", name)
	}
	slots := []*slot{{}, {}}
	for i, s := range slots {
		start(s, fmt.Sprint(i))
	}
	defer func() {
		for _, s := range slots {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	}()

	var (
		mu         sync.Mutex
		posted     []string // every target a mark was sent for
		refused    int      // sends refused: the slot's process was down
		ackedMarks = map[string]bool{}
		ackedItems = map[string]bool{}
	)
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	const clients = 4
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			s := slots[c%len(slots)]
			for n := 0; loadCtx.Err() == nil; n++ {
				target := fmt.Sprintf("c%d-%06d.example", c, n)
				s.mu.Lock()
				base := s.base
				s.mu.Unlock()
				var path, body string
				var keys []string
				if n%2 == 0 {
					path = base + "/api/v1/items?source=crash&round=1&target=" + target
					for j := 0; j < 3; j++ {
						body += fmt.Sprintf(`{"title":"%s %d","url":"https://%s/%d"}`+"\n", target, j, target, j)
						keys = append(keys, fmt.Sprintf("%s %d|https://%s/%d", target, j, target, j))
					}
				} else {
					path = base + "/api/v1/rounds/1/done"
					body = target + "\n"
				}
				mu.Lock()
				posted = append(posted, target)
				mu.Unlock()
				req, _ := http.NewRequestWithContext(loadCtx, "POST", path, strings.NewReader(body))
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					// Killed, or restarting: not acknowledged. Wait for the
					// slot's next process (polling a real process).
					if errors.Is(err, syscall.ECONNREFUSED) {
						mu.Lock()
						refused++
						mu.Unlock()
					}
					time.Sleep(20 * time.Millisecond)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					continue
				}
				mu.Lock()
				ackedMarks[target] = true
				for _, k := range keys {
					ackedItems[k] = true
				}
				mu.Unlock()
			}
		}(c)
	}
	kills := 0
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(time.Duration(200+rng.Intn(1300)) * time.Millisecond) // a random kill point
		i := rng.Intn(len(slots))
		s := slots[i]
		s.cmd.Process.Signal(syscall.SIGKILL)
		s.cmd.Wait()
		kills++
		start(s, fmt.Sprint(i))
	}
	stopLoad()
	wg.Wait()

	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, append(args, "--store", store, "--data", filepath.Join(dir, "cli"))...)
		cmd.Env = append(os.Environ(), "CRAWLKEEPER_MONITOR=", "CRAWLKEEPER_CONFIG=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("crawlkeeper %v: %v\n%s", args, err, out)
		}
		return out
	}
	type status struct{ Queued, Done, Remaining int }
	var fresh status
	if err := json.Unmarshal(run("round", "status", "--round", "1", "--json"), &fresh); err != nil {
		t.Fatal(err)
	}
	// The two running processes, which caught up from each other's log
	// entries (and their own before they were killed), agree.
	for i, s := range slots {
		var st status
		if code := getJSON(t, s.base+"/api/v1/rounds/1", &st); code != 200 || st.Done != fresh.Done {
			t.Fatalf("process %d counts %d done (HTTP %d), a fresh process %d", i, st.Done, code, fresh.Done)
		}
	}
	// Queue every target a mark was sent for: the dictionary holds each
	// name once, so the round then has exactly that many targets, and none
	// acknowledged is left remaining.
	names := filepath.Join(dir, "posted.txt")
	os.WriteFile(names, []byte(strings.Join(posted, "\n")+"\n"), 0o644)
	run("round", "queue", "--round", "1", names)
	var st status
	json.Unmarshal(run("round", "status", "--round", "1", "--json"), &st)
	if st.Queued != len(posted) || st.Done != fresh.Done || st.Done+st.Remaining != st.Queued {
		t.Fatalf("after queueing the %d posted targets: %+v (done before: %d)", len(posted), st, fresh.Done)
	}
	remaining := map[string]bool{}
	for _, n := range strings.Fields(string(run("round", "remaining", "--round", "1", "--limit", "100000"))) {
		remaining[n] = true
	}
	for target := range ackedMarks {
		if remaining[target] {
			t.Fatalf("the acknowledged mark of %s is missing", target)
		}
	}
	if len(remaining) != st.Remaining {
		t.Fatalf("remaining lists %d names, status says %d", len(remaining), st.Remaining)
	}

	// Every acknowledged item is stored exactly once, and check passes.
	conn, err := pgx.Connect(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT title, url FROM active WHERE source = 'crash' UNION ALL SELECT title, url FROM archive WHERE source = 'crash'`)
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]int{}
	for rows.Next() {
		var title, url string
		if err := rows.Scan(&title, &url); err != nil {
			t.Fatal(err)
		}
		present[title+"|"+url]++
	}
	rows.Close()
	for k := range ackedItems {
		if present[k] != 1 {
			t.Fatalf("acknowledged item %q is stored %d times", k, present[k])
		}
	}
	if out := run("check", "--json"); !strings.Contains(string(out), `"ok":true`) {
		t.Fatalf("check after %d kills:\n%s", kills, out)
	}
	t.Logf("%d kills in %ds; marks: %d posted to a running process (%d more refused while one restarted), %d acknowledged, %d counted done (%d posted but not acknowledged made it); %d acknowledged items stored once",
		kills, seconds, len(posted)-refused, refused, len(ackedMarks), fresh.Done, fresh.Done-len(ackedMarks), len(ackedItems))
}

// getJSON decodes the JSON answer of a GET and returns its status.
func getJSON(t *testing.T, url string, out any) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode == 200 {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return res.StatusCode
}
