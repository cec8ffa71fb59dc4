package crawlkeeper_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/config"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestRulesGolden evaluates the archive rules for records at several
// moments. Each file in testdata/rules has a config section (YAML), a
// records section (one JSON record per line, with an "at" list of clock
// readings) and a want section: one line per record and moment.
func TestRulesGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/rules/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			head, want, ok := strings.Cut(string(raw), "-- want --\n")
			if !ok {
				t.Fatal("no want section")
			}
			cfgText, recText, ok := strings.Cut(head, "-- records --\n")
			if !ok {
				t.Fatal("no records section")
			}
			cfg, err := config.Parse([]byte(strings.TrimPrefix(cfgText[strings.Index(cfgText, "-- config --\n")+len("-- config --\n"):], "")))
			if err != nil {
				t.Fatal(err)
			}
			rules := crawlkeeper.NewRules(cfg)
			var got strings.Builder
			for i, line := range strings.Split(strings.TrimSpace(recText), "\n") {
				var in struct {
					Name          string      `json:"name"`
					Source        string      `json:"source"`
					CrawledAt     time.Time   `json:"crawled_at"`
					LastUpdatedAt time.Time   `json:"last_updated_at"`
					Deadline      string      `json:"deadline"`
					At            []time.Time `json:"at"`
				}
				if err := json.Unmarshal([]byte(line), &in); err != nil {
					t.Fatalf("record line %d: %v", i+1, err)
				}
				rec := &crawlkeeper.Record{Source: in.Source, CrawledAt: in.CrawledAt, LastUpdatedAt: in.LastUpdatedAt}
				if in.Deadline != "" {
					// Read the deadline as ingest does, so the golden files
					// cover the end-of-day rule in the source's zone too.
					pol, err := cfg.Policy(in.Source)
					if err != nil {
						t.Fatal(err)
					}
					rec.EventAt, _ = crawlkeeper.ReadEventFields(crawlkeeper.MachineDates{}, pol, map[string]any{"deadline": in.Deadline}, in.CrawledAt)
				}
				for _, at := range in.At {
					reason, due := rules.Due(rec, at)
					out := "keep"
					if due {
						out = "archive (" + string(reason) + ")"
					}
					fmt.Fprintf(&got, "%s at %s: %s\n", in.Name, at.Format(time.RFC3339), out)
				}
			}
			if *update {
				if err := os.WriteFile(path, []byte(head+"-- want --\n"+got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got.String() != want {
				t.Fatalf("decisions differ from %s (go test -run RulesGolden -update to accept):\n--- got\n%s--- want\n%s", path, got.String(), want)
			}
		})
	}
}
