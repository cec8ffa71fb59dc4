package storetest

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/config"
)

// update rewrites the golden files from the current output:
// go test ./sqlite -run Conformance/Golden -update
var update = flag.Bool("update", false, "rewrite storetest golden files")

//go:embed testdata/golden/*.txt
var goldenFS embed.FS

// A golden file has three sections, each introduced by a line "-- name --":
// config (YAML, may be empty), steps (one JSON object per line) and want
// (the expected report). A step is
//
//	{"now": RFC 3339, "meta": {"source": "...", ...}, "ingest": [items...]}
//
// and the report lists each step's ingest summary, then every record and
// its history at the end.
type goldenStep struct {
	Now    time.Time         `json:"now"`
	Meta   map[string]string `json:"meta"`
	Ingest []json.RawMessage `json:"ingest"`
}

func testGolden(t *testing.T, open RecordOpener) {
	names, err := goldenFS.ReadDir("testdata/golden")
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range names {
		name := de.Name()
		t.Run(strings.TrimSuffix(name, ".txt"), func(t *testing.T) {
			raw, err := goldenFS.ReadFile("testdata/golden/" + name)
			if err != nil {
				t.Fatal(err)
			}
			sections := splitSections(t, string(raw))
			cfg, err := config.Parse([]byte(sections["config"]))
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			got := runGolden(t, open, cfg, sections["steps"])
			if *update {
				writeGolden(t, name, raw, got)
				return
			}
			if want := strings.TrimSpace(sections["want"]); got != want {
				t.Fatalf("report differs from %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
			}
		})
	}
}

func splitSections(t *testing.T, s string) map[string]string {
	out := map[string]string{}
	cur := ""
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "-- ") && strings.HasSuffix(trim, " --") {
			if cur != "" {
				out[cur] = b.String()
			}
			cur = strings.TrimSuffix(strings.TrimPrefix(trim, "-- "), " --")
			b.Reset()
			continue
		}
		if cur != "" {
			b.WriteString(line)
		}
	}
	if cur != "" {
		out[cur] = b.String()
	}
	for _, need := range []string{"config", "steps", "want"} {
		if _, ok := out[need]; !ok {
			t.Fatalf("golden file has no %q section", need)
		}
	}
	return out
}

func runGolden(t *testing.T, open RecordOpener, cfg *crawlkeeper.Config, steps string) string {
	s := open(t)
	defer s.Close()
	ctx := context.Background()
	var now time.Time
	g := &crawlkeeper.Ingester{Store: s, Config: cfg, Rules: crawlkeeper.NewRules(cfg), Now: func() time.Time { return now }}
	var rep strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(steps), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var st goldenStep
		if err := json.Unmarshal([]byte(line), &st); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		now = st.Now
		var in bytes.Buffer
		for _, it := range st.Ingest {
			in.Write(it)
			in.WriteByte('\n')
		}
		meta := crawlkeeper.Meta{Source: st.Meta["source"], Round: st.Meta["round"], Target: st.Meta["target"]}
		sum, err := g.Ingest(ctx, &in, meta)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		b, _ := json.Marshal(sum)
		fmt.Fprintf(&rep, "step %d %s\n", i+1, b)
	}
	for _, archived := range []bool{false, true} {
		page, err := s.List(ctx, crawlkeeper.RecordQuery{Archived: archived, Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Records {
			b, _ := json.Marshal(r)
			fmt.Fprintf(&rep, "record %s\n", b)
			hist, err := s.History(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hist {
				b, _ := json.Marshal(h)
				fmt.Fprintf(&rep, "history %s\n", b)
			}
		}
	}
	chk, err := s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(chk)
	fmt.Fprintf(&rep, "check %s", b)
	return rep.String()
}

func writeGolden(t *testing.T, name string, raw []byte, got string) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "testdata", "golden", name)
	s := string(raw)
	i := strings.Index(s, "-- want --")
	if i < 0 {
		t.Fatal("no want section")
	}
	out := s[:i] + "-- want --\n" + got + "\n"
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("updated %s", path)
}
