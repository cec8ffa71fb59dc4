package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// buildBinary builds the crawlkeeper binary once per test run, for tests
// that must run it as a real process (to kill it, for instance).
func buildBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "crawlkeeper-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "crawlkeeper")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			t.Logf("go build: %s", out)
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
