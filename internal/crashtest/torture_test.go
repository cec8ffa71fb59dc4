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
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/internal/jsonlz"
	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
	"github.com/crawlkeeper/crawlkeeper/internal/testdb"
)

// TestTorture runs, on every store, for CRAWLKEEPER_TORTURE_SECONDS
// (default 10; CI: 60) at once: two serve processes taking deliveries (new
// items, changed items, and items re-delivered after they were archived,
// which refreshes or revives them), their own archive passes and rescans,
// and a stream of CLI commands (archive passes, purges with export,
// restores, scans), while a killer sends SIGKILL to a random one of those
// processes every few hundred milliseconds. At the end every acknowledged
// delivery's latest version is present — in the active records, in the
// archive, or in a purge export — and `crawlkeeper check` passes.
func TestTorture(t *testing.T) {
	longtest.Skip(t, "kills real processes on every store")
	if testing.Short() {
		t.Skip("kills real processes")
	}
	for _, kind := range testdb.Kinds {
		t.Run(kind, func(t *testing.T) { runTorture(t, kind) })
	}
}

// torture is the state of one run.
type torture struct {
	t       *testing.T
	bin     string
	store   string
	cfg     string
	exports string
	// keys is the number of distinct items; deliveries cycle over them.
	keys int

	mu sync.Mutex
	// sent holds every content revision posted per item, acked the
	// highest revision of an acknowledged request.
	sent   map[int][]int
	acked  map[int]int
	rev    int
	counts map[string]int

	procMu sync.Mutex
	serves []string // base URLs of live serve processes
}

func runTorture(t *testing.T, kind string) {
	seconds := envInt("CRAWLKEEPER_TORTURE_SECONDS", 10)
	seed := int64(envInt("CRAWLKEEPER_CRASH_SEED", 1))
	dir := t.TempDir()
	tt := &torture{t: t, bin: buildBinary(t), store: testdb.URL(t, kind), cfg: filepath.Join(dir, "config.yaml"),
		exports: filepath.Join(dir, "exports"), keys: 400,
		sent: map[int][]int{}, acked: map[int]int{}, counts: map[string]int{}}
	if kind == testdb.MongoDB {
		// FerretDB costs milliseconds per conditional write: fewer items
		// keep each step short enough to be killed in the middle of it.
		tt.keys = 120
	}
	if err := os.MkdirAll(tt.exports, 0o755); err != nil {
		t.Fatal(err)
	}
	// Items archive by their deadline; an archived item re-delivered with
	// a deadline in the future is revived, one with a past deadline is
	// refreshed in the archive. Archived records are purged a second
	// after they were archived. Short leases let processes take over from
	// killed ones within the run.
	os.WriteFile(tt.cfg, []byte(`defaults:
  max_age: off
  purge_after: 1s
archive:
  lease: 3s
  batch: 50
pipeline:
  period: 20s
  lease: 3s
`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds)*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tt.keepServing(ctx, rand.New(rand.NewSource(seed+200+int64(i))))
		}(i)
	}
	const clients = 3
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			tt.deliver(ctx, rand.New(rand.NewSource(seed+int64(c)+1)), c, clients)
		}(c)
	}
	wg.Add(1)
	go func() { defer wg.Done(); tt.runCommands(ctx, rand.New(rand.NewSource(seed+100))) }()
	wg.Wait()
	tt.verify()
}

// start runs the binary with the store and configuration of the run.
func (tt *torture) start(args ...string) (*exec.Cmd, io.ReadCloser, error) {
	cmd := exec.Command(tt.bin, append(args, "--store", tt.store, "--config", tt.cfg)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = io.Discard
	return cmd, stdout, cmd.Start()
}

// killAfter sends SIGKILL to cmd after d, unless stop is closed first, and
// counts the kill under role.
func (tt *torture) killAfter(cmd *exec.Cmd, d time.Duration, role string, stop <-chan struct{}) {
	go func() {
		select {
		case <-stop:
		case <-time.After(d):
			if cmd.Process.Signal(syscall.SIGKILL) == nil {
				tt.count("kills")
				tt.count("kills of " + role)
			}
		}
	}()
}

func (tt *torture) count(what string) {
	tt.mu.Lock()
	tt.counts[what]++
	tt.mu.Unlock()
}

// keepServing runs a serve process, and a new one each time it dies,
// until ctx ends. Each serve is killed at a random moment 0.3 to 3 s after
// it starts listening (starting up is not what is tested).
func (tt *torture) keepServing(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		cmd, stdout, err := tt.start("serve", "--addr", "127.0.0.1:0", "--archive-every", "1s")
		if err != nil {
			tt.t.Error(err)
			return
		}
		stop := make(chan struct{})
		base := ""
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if url, ok := strings.CutPrefix(sc.Text(), "crawlkeeper is serving on "); ok {
				base = strings.TrimSuffix(url, "/")
				break
			}
		}
		go io.Copy(io.Discard, stdout)
		if base != "" {
			tt.procMu.Lock()
			tt.serves = append(tt.serves, base)
			tt.procMu.Unlock()
			tt.count("serves started")
			tt.killAfter(cmd, time.Duration(300+rng.Intn(2700))*time.Millisecond, "serve", stop)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGTERM)
			<-done
		}
		close(stop)
		tt.procMu.Lock()
		for i, b := range tt.serves {
			if b == base {
				tt.serves = append(tt.serves[:i], tt.serves[i+1:]...)
				break
			}
		}
		tt.procMu.Unlock()
	}
}

// deliver posts batches of items to a live serve process: new items,
// changed ones, and ones that come back after they were archived. A
// revision is acknowledged when the request answered 200. Each client
// delivers its own share of the items (k % clients == client), one
// request at a time, as a crawler does: the store keeps the latest
// delivery of an item, and two requests racing with revisions of one item
// would make "latest" a matter of which commits first.
func (tt *torture) deliver(ctx context.Context, rng *rand.Rand, client, clients int) {
	for ctx.Err() == nil {
		tt.procMu.Lock()
		var base string
		if len(tt.serves) > 0 {
			base = tt.serves[rng.Intn(len(tt.serves))]
		}
		tt.procMu.Unlock()
		if base == "" {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		var body strings.Builder
		type sent struct{ key, rev int }
		var batch []sent
		tt.mu.Lock()
		for i := 0; i < 10; i++ {
			k := client + clients*rng.Intn(tt.keys/clients)
			tt.rev++
			// Most deadlines have passed (the item is due for the
			// archive); some are a year away (a re-delivery revives it).
			deadline := "2001-01-01"
			if rng.Intn(3) == 0 {
				deadline = time.Now().AddDate(1, 0, 0).Format("2006-01-02")
			}
			fmt.Fprintf(&body, `{"title":"item %d","url":"https://torture.test/%d","rev":%d,"deadline":%q}`+"\n", k, k, tt.rev, deadline)
			tt.sent[k] = append(tt.sent[k], tt.rev)
			batch = append(batch, sent{k, tt.rev})
		}
		tt.mu.Unlock()
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/v1/items?source=torture", strings.NewReader(body.String()))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			continue // the server died or the run ended: not acknowledged
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			continue
		}
		tt.mu.Lock()
		for _, s := range batch {
			if s.rev > tt.acked[s.key] {
				tt.acked[s.key] = s.rev
			}
		}
		tt.counts["deliveries acknowledged"] += len(batch)
		tt.mu.Unlock()
	}
}

// runCommands runs CLI commands one after another until ctx ends: archive
// passes, purges with export, restores of archived records and scans.
// The killer may stop any of them.
func (tt *torture) runCommands(ctx context.Context, rng *rand.Rand) {
	n := 0
	for ctx.Err() == nil {
		var args []string
		name := []string{"archive", "purge", "restore", "scan"}[rng.Intn(4)]
		switch name {
		case "archive":
			args = []string{"archive", "--batch", "20"}
		case "purge":
			n++
			args = []string{"archive", "purge", "--export", filepath.Join(tt.exports, fmt.Sprintf("purge-%04d.jsonl.zst", n))}
		case "restore":
			ids := tt.archivedIDs(rng)
			if len(ids) == 0 {
				continue
			}
			args = append([]string{"restore"}, ids...)
		case "scan":
			// The serves hold the scan lease while they live: the pass
			// runs once a killed one's lease expired.
			args = []string{"scan", "--once", "--wait", "10s"}
		}
		cmd, stdout, err := tt.start(args...)
		if err != nil {
			tt.t.Error(err)
			return
		}
		// Half the commands are killed at a random moment in their
		// first 1.5 s; the others run to the end.
		stop := make(chan struct{})
		if rng.Intn(2) == 0 {
			tt.killAfter(cmd, time.Duration(rng.Intn(1500))*time.Millisecond, name, stop)
		}
		go io.Copy(io.Discard, stdout)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-ctx.Done():
			cmd.Process.Signal(syscall.SIGKILL)
			err = <-done
		}
		close(stop)
		var exit *exec.ExitError
		switch {
		case err == nil:
			tt.count(name + " done")
		case errors.As(err, &exit) && exit.ProcessState.Sys().(syscall.WaitStatus).Signaled():
			// counted by killAfter
		default:
			tt.count(name + " failed")
		}
	}
}

// archivedIDs picks a few archived record ids to restore.
func (tt *torture) archivedIDs(rng *rand.Rand) []string {
	out, err := exec.Command(tt.bin, "records", "--archived", "--limit", "20", "--json", "--store", tt.store, "--config", tt.cfg).Output()
	if err != nil {
		return nil
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			ID int64 `json:"id"`
		}
		if json.Unmarshal([]byte(line), &r) == nil && r.ID > 0 && rng.Intn(3) == 0 {
			ids = append(ids, strconv.FormatInt(r.ID, 10))
		}
	}
	return ids
}

// exported reads every purge export: the latest revision exported per
// item. A purge killed while it wrote leaves a file whose last frame may be
// cut; everything before that was synced before any record was deleted.
func (tt *torture) exported() map[int]int {
	out := map[int]int{}
	files, _ := filepath.Glob(filepath.Join(tt.exports, "*.jsonl.zst"))
	for _, f := range files {
		r, err := jsonlz.Open(f)
		if err != nil {
			tt.t.Fatalf("open export %s: %v", f, err)
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line crawlkeeper.PurgeLine
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				break // the cut end of a killed purge's last frame
			}
			k, rev := itemRev(tt.t, line.Record.Item)
			out[k] = max(out[k], rev)
		}
		r.Close()
	}
	return out
}

// itemRev reads the item number and revision of a stored item.
func itemRev(t *testing.T, item json.RawMessage) (int, int) {
	var it struct {
		URL string `json:"url"`
		Rev int    `json:"rev"`
	}
	if err := json.Unmarshal(item, &it); err != nil {
		t.Fatalf("stored item %s: %v", item, err)
	}
	k, err := strconv.Atoi(strings.TrimPrefix(it.URL, "https://torture.test/"))
	if err != nil {
		t.Fatalf("stored item %s: %v", item, err)
	}
	return k, it.Rev
}

func (tt *torture) verify() {
	t := tt.t
	// A kill timer of the last processes may still fire and count; the
	// counts are the run's shared state.
	tt.mu.Lock()
	defer tt.mu.Unlock()
	out, err := exec.Command(tt.bin, "check", "--store", tt.store, "--config", tt.cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("crawlkeeper check after the run: %v\n%s", err, out)
	}
	ctx := context.Background()
	st, err := backends.OpenStore(ctx, tt.store, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored := map[int]int{}
	for _, archived := range []bool{false, true} {
		q := crawlkeeper.RecordQuery{Archived: archived, Source: "torture", Order: crawlkeeper.OrderID, Limit: 1000}
		for {
			page, err := st.List(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page.Records {
				k, rev := itemRev(t, r.Item)
				if _, dup := stored[k]; dup {
					t.Fatalf("item %d is stored twice", k)
				}
				stored[k] = rev
				tt.counts[map[bool]string{false: "records active", true: "records archived"}[archived]]++
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
	}
	exported := tt.exported()
	tt.counts["items only in exports"] = 0
	for k, acked := range tt.acked {
		got, inStore := stored[k]
		if !inStore {
			got = exported[k]
			tt.counts["items only in exports"]++
		}
		// A revision sent after the acknowledged one may have been
		// applied by a request that was killed before it answered.
		if got < acked || !sentRev(tt.sent[k], got) {
			t.Fatalf("item %d: acknowledged revision %d, found revision %d (in the store: %v): an acknowledged delivery was lost", k, acked, got, inStore)
		}
	}
	names := make([]string, 0, len(tt.counts))
	for n := range tt.counts {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s %d; ", n, tt.counts[n])
	}
	t.Logf("%d items acknowledged, every latest revision present; %s", len(tt.acked), b.String())
	if tt.counts["kills"] == 0 || tt.counts["deliveries acknowledged"] == 0 {
		t.Fatalf("the run killed %d processes and acknowledged %d deliveries: it tested nothing", tt.counts["kills"], tt.counts["deliveries acknowledged"])
	}
}

func sentRev(revs []int, rev int) bool {
	for _, r := range revs {
		if r == rev {
			return true
		}
	}
	return false
}
