package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIngestWarnsAboutOtherKeyRules changes a source's key rules between
// two ingests: the second warns once, naming rekey.
func TestIngestWarnsAboutOtherKeyRules(t *testing.T) {
	c := newCLI(t)
	items := `{"title":"A","url":"https://x.example/a/"}` + "\n" + `{"title":"B","url":"https://x.example/b"}` + "\n"
	if _, errs, code := c.run(items, "ingest", "--source", "jobs", "-"); code != 0 || strings.Contains(errs, "warning") {
		t.Fatalf("first ingest: exit %d, stderr %q", code, errs)
	}
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(cfg, []byte("sources:\n  jobs:\n    key_rules:\n      url: {keep_trailing_slash: true}\n"), 0o644)
	_, errs, code := c.run(items, "ingest", "--config", cfg, "--batch", "1", "--source", "jobs", "-")
	if code != 0 || strings.Count(errs, "warning") != 1 || !strings.Contains(errs, "crawlkeeper rekey --source jobs") {
		t.Fatalf("ingest under other rules: exit %d, stderr %q", code, errs)
	}
	// The same rules as the store's: no warning.
	if _, errs, _ := c.run(items, "ingest", "--source", "jobs", "-"); strings.Contains(errs, "warning") {
		t.Fatalf("warning under the store's rules: %q", errs)
	}
}
