package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
)

// serveUntilStopped starts serve in process and returns its base URL and a stop
// function that waits for the shutdown.
func serveUntilStopped(t *testing.T, c *cli, args ...string) (string, func()) {
	t.Helper()
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard}
	if _, err := a.parse(a.newFlags("serve", "serve"), append([]string{"--data", c.data}, args...)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- serve(ctx, a, serveOptions{addr: "127.0.0.1:0", archiveEvery: -1, ready: func(addr string) { addrc <- addr }})
	}()
	select {
	case addr := <-addrc:
		return "http://" + addr, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		}
	case err := <-done:
		t.Fatalf("serve stopped before listening: %v", err)
	}
	return "", nil
}

type alertListing struct {
	EvaluatedAt *time.Time `json:"evaluated_at"`
	Firing      []struct {
		Rule    string `json:"rule"`
		Message string `json:"message"`
	} `json:"firing"`
	Recent []struct {
		Status string `json:"status"`
	} `json:"recent"`
}

// TestServeDeliversAlertsOnceAcrossRestarts: serve evaluates the rules at
// start, delivers a firing alert to the webhook, lists it in the API, and
// a restarted serve does not deliver it again.
func TestServeDeliversAlertsOnceAcrossRestarts(t *testing.T) {
	c := newCLI(t)
	hooks := make(chan []byte, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks <- b
	}))
	defer receiver.Close()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte(`
alerts:
  every: 1h
  webhooks: [{url: "`+receiver.URL+`", format: slack}]
  rules: [{name: dlq, kind: dead_letters}]
`), 0o644)
	ctx := context.Background()
	st, err := backends.OpenStore(ctx, "", c.data)
	if err != nil {
		t.Fatal(err)
	}
	st.AddDeadLetter(ctx, crawlkeeper.DeadLetter{ID: 7, Version: 1, Processor: "exec", Error: "exit status 1", Failures: 3, At: time.Now()})
	st.Close()

	base, stop := serveUntilStopped(t, c, "--config", cfg)
	select {
	case b := <-hooks:
		if !strings.Contains(string(b), `"text":":rotating_light: [crawlkeeper] FIRING dlq (dead_letters): 1 records in the dead letters`) {
			t.Fatalf("webhook body %s", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook call within 30s of serve starting")
	}
	var l alertListing
	if code := getJSON(t, base+"/api/v1/alerts", &l); code != 200 || len(l.Firing) != 1 || l.Firing[0].Rule != "dlq" || len(l.Recent) != 1 {
		t.Fatalf("GET /api/v1/alerts: %d %+v", code, l)
	}
	first := *l.EvaluatedAt
	var bad map[string]map[string]string
	if code := getJSON(t, base+"/api/v1/alerts?limit=0", &bad); code != 400 || !strings.Contains(bad["error"]["message"], "limit") {
		t.Fatalf("limit=0: %d %v", code, bad)
	}
	stop()

	// Restarted, serve evaluates again at once; the alert still fires and
	// is not delivered a second time.
	base, stop = serveUntilStopped(t, c, "--config", cfg)
	defer stop()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l = alertListing{}
		getJSON(t, base+"/api/v1/alerts", &l)
		if l.EvaluatedAt != nil && l.EvaluatedAt.After(first) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve did not evaluate the alerts after the restart")
		}
		<-time.After(10 * time.Millisecond)
	}
	if len(l.Firing) != 1 || len(hooks) != 0 {
		t.Fatalf("after the restart: %d firing, %d webhook calls: %s", len(l.Firing), len(hooks), <-hooks)
	}
	out := c.ok("", "alerts", "--config", cfg)
	if !strings.Contains(out, "FIRING dlq") {
		t.Fatalf("crawlkeeper alerts: %s", out)
	}
	var raw map[string]any
	json.Unmarshal([]byte(c.ok("", "alerts", "eval", "--json", "--config", cfg)), &raw)
	if raw["fired"] == nil || len(raw["fired"].([]any)) != 0 {
		t.Fatalf("alerts eval: %v", raw)
	}
}
