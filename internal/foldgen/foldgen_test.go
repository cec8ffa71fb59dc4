package foldgen

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode"

	"github.com/crawlkeeper/crawlkeeper"
	"golang.org/x/text/unicode/norm"
)

// checkVersion skips when this Go release makes x/text use other Unicode
// tables than the committed folding was generated from: the table is
// generated with the project's toolchain (GOTOOLCHAIN in .ci/run).
func checkVersion(t *testing.T) {
	if v := crawlkeeper.FoldUnicodeVersion(); v != norm.Version {
		t.Skipf("searchfold_table.go was generated from Unicode %s tables; this Go release gives x/text Unicode %s: run with the project's toolchain (GOTOOLCHAIN in .ci/run)", v, norm.Version)
	}
}

// TestTableUpToDate fails when searchfold_table.go is not what the current
// golang.org/x/text gives: run `go generate` in the repository root.
func TestTableUpToDate(t *testing.T) {
	checkVersion(t)
	want, err := Source()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "searchfold_table.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("searchfold_table.go is out of date: run go generate in the repository root")
	}
}

// TestFoldMatchesXText compares the root package's folding with the x/text
// pipeline for every code point.
func TestFoldMatchesXText(t *testing.T) {
	checkVersion(t)
	bad := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if got, want := crawlkeeper.FoldSearchText(string(r)), Fold(r); got != want {
			if bad++; bad < 20 {
				t.Errorf("FoldSearchText(%U) = %q, want %q", r, got, want)
			}
		}
	}
}
