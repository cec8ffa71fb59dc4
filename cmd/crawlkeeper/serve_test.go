package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startServe runs serve in process on a free port and returns its base
// URL; the server stops when the test ends.
func startServe(t *testing.T, c *cli, extra ...string) string {
	t.Helper()
	return startServeWith(t, c, serveOptions{}, extra...)
}

// startServeWith is startServe with serve options (the flag-only knobs).
func startServeWith(t *testing.T, c *cli, opts serveOptions, extra ...string) string {
	t.Helper()
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	fs := a.newFlags("serve", "serve")
	if _, err := a.parse(fs, append([]string{"--data", c.data}, extra...)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		opts.addr = "127.0.0.1:0"
		opts.ready = func(addr string) { addrc <- addr }
		done <- serve(ctx, a, opts)
	}()
	var base string
	select {
	case addr := <-addrc:
		base = "http://" + addr
	case err := <-done:
		t.Fatalf("serve stopped before listening: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve shut down with %v", err)
		}
	})
	return base
}

func getJSON(t *testing.T, url string, out any) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return res.StatusCode
}

// TestServeEndToEnd ingests through the API of a running serve and reads
// back: records are processed in real time, rounds track the crawl, the
// pipeline reports its status.
func TestServeEndToEnd(t *testing.T) {
	c := newCLI(t)
	base := startServe(t, c)
	body := `{"title":"Data Engineer","url":"https://jobs.example/1","deadline":"2031-05-01"}
{"title":"SRE","url":"https://jobs.example/2"}`
	res, err := http.Post(base+"/api/v1/items?source=jobs&round=1&target=acme", "application/x-ndjson", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var sum map[string]any
	json.NewDecoder(res.Body).Decode(&sum)
	res.Body.Close()
	if res.StatusCode != 200 || sum["inserted"] != float64(2) || sum["marked"] != float64(1) {
		t.Fatalf("POST items: %d %v", res.StatusCode, sum)
	}
	// Real time: both records get processed without a rescan.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var page struct {
			Records []struct {
				ProcessedAt *time.Time `json:"processed_at"`
			} `json:"records"`
		}
		getJSON(t, base+"/api/v1/records?source=jobs", &page)
		n := 0
		for _, r := range page.Records {
			if r.ProcessedAt != nil {
				n++
			}
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 2 records processed in real time", n)
		}
		<-time.After(10 * time.Millisecond)
	}
	var scan map[string]any
	if code := getJSON(t, base+"/api/v1/scan", &scan); code != 200 || scan["chain"] == "" || scan["active"] != float64(2) {
		t.Fatalf("scan: %d %v", code, scan)
	}
	var round map[string]any
	if code := getJSON(t, base+"/api/v1/rounds/1", &round); code != 200 || round["done"] != float64(1) {
		t.Fatalf("round: %d %v", code, round)
	}
	var dls map[string]any
	if code := getJSON(t, base+"/api/v1/deadletters", &dls); code != 200 {
		t.Fatalf("deadletters: %d", code)
	}
	res, err = http.Post(base+"/api/v1/deadletters/retry", "application/json", bytes.NewReader(nil))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("retry: %v %v", res.StatusCode, err)
	}
	res.Body.Close()
	if code := getJSON(t, base+"/readyz", nil); code != 200 {
		t.Fatalf("readyz: %d", code)
	}
}

func TestServeRefusesOpenAddressWithoutTokens(t *testing.T) {
	c := newCLI(t)
	t.Setenv("CRAWLKEEPER_TOKENS", "")
	_, errs, code := c.run("", "serve", "--addr", "0.0.0.0:0")
	if code != 2 || !strings.Contains(errs, "refusing to listen on 0.0.0.0:0 without API tokens") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	t.Setenv("CRAWLKEEPER_TOKENS", "broken")
	_, errs, code = c.run("", "serve", "--addr", "127.0.0.1:0")
	if code != 2 || !strings.Contains(errs, "CRAWLKEEPER_TOKENS") {
		t.Fatalf("bad token env: exit %d: %s", code, errs)
	}
}
