//go:build ignore

// gen_reference writes reference_gen.go from the crawlkeeper package's
// configuration types: go generate ./config.
package main

import (
	"log"
	"os"

	"github.com/crawlkeeper/crawlkeeper/config/internal/refgen"
)

func main() {
	src, err := refgen.Generate("..")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("reference_gen.go", src, 0o644); err != nil {
		log.Fatal(err)
	}
}
