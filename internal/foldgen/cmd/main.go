// Command foldgen writes searchfold_table.go (see package foldgen).
package main

import (
	"fmt"
	"os"

	"github.com/crawlkeeper/crawlkeeper/internal/foldgen"
)

func main() {
	src, err := foldgen.Source()
	if err != nil {
		fmt.Fprintln(os.Stderr, "foldgen:", err)
		os.Exit(1)
	}
	out := "searchfold_table.go"
	if len(os.Args) > 1 {
		out = os.Args[1]
	}
	if err := os.WriteFile(out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "foldgen:", err)
		os.Exit(1)
	}
}
