package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper/internal/longtest"
)

// TestLoad runs 8 concurrent ingest clients, the archiver, the scanner and
// dashboard-style reads against one serve for CRAWLKEEPER_LOAD_SECONDS
// (CI: 60) with the race detector on in CI: no request may fail, the
// store's invariants must hold afterwards, and the p99 ingest latency is
// reported.
func TestLoad(t *testing.T) {
	longtest.Skip(t, "ingest and reads against one serve for CRAWLKEEPER_LOAD_SECONDS")
	if testing.Short() {
		t.Skip("runs a load for several seconds")
	}
	seconds := envInt("CRAWLKEEPER_LOAD_SECONDS", 5)
	c := newCLI(t)
	cfg := filepath.Join(t.TempDir(), "load.yaml")
	// Short periods so that archive passes and rescans keep running during
	// the load; old items get archived while clients re-deliver them.
	os.WriteFile(cfg, []byte("defaults:\n  max_age: 2s\npipeline:\n  period: 3s\n"), 0o644)
	base := startServeWith(t, c, serveOptions{archiveEvery: time.Second}, "--config", cfg)
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	var mu sync.Mutex
	var latencies []time.Duration
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				var b strings.Builder
				for j := 0; j < 50; j++ {
					// Keys repeat across clients and batches: re-deliveries,
					// changes and revivals race with the archiver.
					k := (w*7 + i*50 + j) % 3000
					fmt.Fprintf(&b, `{"title":"load %d","url":"https://load.test/%d","v":%d,"deadline":"2031-01-%02d"}`+"\n", k, k, i%5, 1+k%28)
				}
				start := time.Now()
				res, err := http.Post(fmt.Sprintf("%s/api/v1/items?source=load&round=%d&target=client-%d", base, 1+i%3, w), "application/x-ndjson", strings.NewReader(b.String()))
				if err != nil {
					fail("ingest: %v", err)
					return
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					fail("ingest: %d %s", res.StatusCode, body)
					continue
				}
				mu.Lock()
				latencies = append(latencies, time.Since(start))
				mu.Unlock()
			}
		}(w)
	}
	// Dashboard-style reads.
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths := []string{"/api/v1/records?limit=50", "/api/v1/records?archived=true&limit=50", "/api/v1/stats", "/api/v1/rounds",
				"/api/v1/rounds/1", "/api/v1/scan", "/api/v1/archive/runs", "/api/v1/fields", "/metrics", "/"}
			for i := 0; time.Now().Before(deadline); i++ {
				p := paths[i%len(paths)]
				res, err := http.Get(base + p)
				if err != nil {
					fail("GET %s: %v", p, err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode >= 500 {
					fail("GET %s: %d", p, res.StatusCode)
				}
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d failures, first: %v", len(failures), failures)
	}
	if len(latencies) == 0 {
		t.Fatal("no ingest completed")
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	p := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
	t.Logf("%ds of load: %d ingest requests of 50 items, latency p50 %v p99 %v max %v",
		seconds, len(latencies), p(0.5), p(0.99), latencies[len(latencies)-1])
	var chk map[string]any
	getJSON(t, base+"/api/v1/stats", &chk)
	out, _, code := c.run("", "check", "--json")
	if code != 0 || !strings.Contains(out, `"ok":true`) {
		t.Fatalf("check after the load: %s", out)
	}
	if chk["archived"].(float64) == 0 {
		t.Fatalf("the archiver never moved anything during the load: %v", chk)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
