package jsonlz_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/crawlkeeper/crawlkeeper/internal/jsonlz"
)

// readLines decodes every line of a file written by a Writer.
func readLines(t *testing.T, path string) []int {
	t.Helper()
	r, err := jsonlz.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var v int
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return out
}

// A durable file is readable after each Sync, with every synced line,
// even when the writer is never closed (the process died): each Sync ends
// a zstd frame.
func TestDurableSyncIsReadableWithoutClose(t *testing.T) {
	for _, name := range []string{"export.jsonl", "export.jsonl.zst"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			w, err := jsonlz.CreateDurable(path)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 3; i++ {
				if err := w.Write(i); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			if got := readLines(t, path); len(got) != 3 || got[2] != 3 {
				t.Fatalf("after the first sync: %v", got)
			}
			for i := 4; i <= 5; i++ {
				if err := w.Write(i); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			if got := readLines(t, path); len(got) != 5 || got[4] != 5 {
				t.Fatalf("after the second sync: %v", got)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := readLines(t, path); len(got) != 5 {
				t.Fatalf("after close: %v", got)
			}
		})
	}
}

func TestDurableRefusesAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	if err := os.WriteFile(path, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := jsonlz.CreateDurable(path); !errors.Is(err, os.ErrExist) {
		t.Fatalf("CreateDurable over an existing file = %v, want os.ErrExist", err)
	}
	if got := readLines(t, path); len(got) != 1 {
		t.Fatalf("existing file changed: %v", got)
	}
}

// Create shows nothing under the final name until Close, and Abort leaves
// nothing behind.
func TestCreateIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.jsonl.zst")
	w, err := jsonlz.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(1)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("final name exists before Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readLines(t, path); len(got) != 1 {
		t.Fatalf("after close: %v", got)
	}
	w, err = jsonlz.Create(filepath.Join(dir, "y.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w.Write(2)
	w.Abort()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("abort left files: %v", entries)
	}
}
