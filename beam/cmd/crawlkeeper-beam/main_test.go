package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
)

func TestMain(m *testing.M) {
	flag.Parse()
	beam.Init()
	os.Exit(m.Run())
}

// logs keeps the SDK's log messages.
type logs struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logs) Log(_ context.Context, _ log.Severity, _ int, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, msg)
}

// setFlags sets command-line flags for the test and restores them after.
func setFlags(t *testing.T, kv map[string]string) {
	t.Helper()
	for k, v := range kv {
		f := flag.Lookup(k)
		if f == nil {
			t.Fatalf("no flag --%s", k)
		}
		old := f.Value.String()
		if err := flag.Set(k, v); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { flag.Set(k, old) })
	}
}

// TestDataflowDryRun translates the pipeline into a Dataflow job without
// credentials and checks that it is a streaming job with the scan, the
// notification read, the write-back and its counter.
func TestDataflowDryRun(t *testing.T) {
	l := &logs{}
	log.SetLogger(l)
	t.Cleanup(func() { log.SetLogger(&log.Standard{}) })
	setFlags(t, map[string]string{
		"runner":           "dataflow",
		"dry_run":          "true",
		"project":          "crawlkeeper-dry-run",
		"region":           "europe-west1",
		"staging_location": "gs://crawlkeeper-dry-run/staging",
		"store":            "postgres://crawlkeeper@db.internal:5432/crawlkeeper",
		"nats":             "nats://nats.internal:4222",
		"processors":       "dates,fingerprint,stats",
		"shards":           "8",
	})
	if err := run(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var job struct {
		Type        string `json:"type"`
		Environment struct {
			Experiments []string `json:"experiments"`
		} `json:"environment"`
	}
	var model string
	for _, m := range l.msgs {
		if strings.HasPrefix(strings.TrimSpace(m), "{") && strings.Contains(m, `"type"`) {
			if err := json.Unmarshal([]byte(m), &job); err != nil {
				t.Fatalf("job: %v\n%s", err, m)
			}
		}
		if !strings.HasPrefix(strings.TrimSpace(m), "{") && strings.Contains(m, "unique_name:") {
			model = m // the pipeline proto, in text form
		}
	}
	if job.Type != "JOB_TYPE_STREAMING" {
		t.Fatalf("job type %q, want JOB_TYPE_STREAMING; logs:\n%s", job.Type, strings.Join(l.msgs, "\n"))
	}
	if !strings.Contains(strings.Join(job.Environment.Experiments, ","), "enable_streaming_engine") {
		t.Errorf("experiments %v lack enable_streaming_engine", job.Environment.Experiments)
	}
	for _, name := range []string{"shards", "scan", "read", "notifications", "write", "count"} {
		if !strings.Contains(model, `unique_name:"`+name) && !strings.Contains(model, `unique_name: "`+name) && !strings.Contains(model, `unique_name:  "`+name) {
			t.Errorf("the pipeline has no transform %q", name)
		}
	}
	if t.Failed() {
		t.Log(model)
	}
}
