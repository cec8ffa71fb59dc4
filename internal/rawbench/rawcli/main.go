// Command rawcli is the minimal program the whole-path rows of
// `crawlkeeper bench` compare crawlkeeper's commands with: a fresh process
// that opens a store with its engine's driver alone and prints the count
// of active records (rawcli count URL), or runs the search benchmark's
// hand-written full-text query (package rawsql) and prints its hits
// (rawcli search URL [-phrase] [-source S] [-limit N] WORD...). The
// benchmark builds it for one engine at a time, with -tags sqlite,
// postgres or mysql, so that it links that driver and nothing else.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/crawlkeeper/crawlkeeper/internal/rawbench/rawsql"
)

// engine is the driver this build links, set by the engine's file.
var engine struct {
	count  func(ctx context.Context, url string) (int64, error)
	search func(ctx context.Context, url string, q rawsql.Query) ([]hit, error)
	// archive selects what an age rule with cutoff selects (Unix
	// microseconds) and, unless dry, moves it to the archive in batches
	// of rawsql.MoveBatch, a transaction each; it returns the count.
	archive func(ctx context.Context, url string, cutoff, now int64, dry bool) (int, error)
	// next runs NextSQL for the source and hands the rows to rankNext.
	next func(ctx context.Context, url string, a nextArgs) error
}

// hit is what the program prints of a search result.
type hit struct {
	id            any
	source, title any
}

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "rawcli:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if engine.count == nil {
		return errors.New("built without an engine: build with -tags sqlite, postgres or mysql")
	}
	if len(args) >= 3 && args[0] == "rss" {
		return runRSS(args[1], args[2], args[3:])
	}
	if len(args) < 2 || (args[0] != "count" && args[0] != "search" && args[0] != "archive" && args[0] != "next") {
		return errors.New("usage: rawcli count URL | rawcli search URL [-phrase] [-source S] [-limit N] WORD... | rawcli archive URL [-dry] CUTOFF NOW | rawcli next URL -source S -budget N -now MICROS [-limit K] | rawcli rss FILE PROGRAM ARG...")
	}
	url := args[1]
	if args[0] == "next" {
		a, err := parseNext(args[2:])
		if err != nil {
			return err
		}
		return engine.next(ctx, url, a)
	}
	if args[0] == "archive" {
		fs := flag.NewFlagSet("archive", flag.ContinueOnError)
		dry := fs.Bool("dry", false, "select only")
		if err := fs.Parse(args[2:]); err != nil {
			return err
		}
		var cutoff, now int64
		if _, err := fmt.Sscan(strings.Join(fs.Args(), " "), &cutoff, &now); err != nil {
			return fmt.Errorf("archive: CUTOFF and NOW are Unix microseconds: %v", err)
		}
		n, err := engine.archive(ctx, url, cutoff, now, *dry)
		if err != nil {
			return err
		}
		fmt.Println(n)
		return nil
	}
	if args[0] == "count" {
		n, err := engine.count(ctx, url)
		if err != nil {
			return err
		}
		fmt.Println(n)
		return nil
	}
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	phrase := fs.Bool("phrase", false, "the words as one phrase")
	source := fs.String("source", "", "only records of this source")
	limit := fs.Int("limit", 20, "at most this many hits")
	if err := fs.Parse(args[2:]); err != nil {
		return err
	}
	hits, err := engine.search(ctx, url, rawsql.Query{Words: fs.Args(), Phrase: *phrase, Source: *source, Limit: *limit})
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	for _, h := range hits {
		fmt.Fprintf(w, "%s\t%s\t%s\n", text(h.id), text(h.source), text(h.title))
	}
	return w.Flush()
}

// text prints a column value as the drivers return it.
func text(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

// pick returns the values of the named columns of a whole row.
func pick(cols []string, vals []any) hit {
	var h hit
	for i, c := range cols {
		switch c {
		case "id":
			h.id = vals[i]
		case "source":
			h.source = vals[i]
		case "title":
			h.title = vals[i]
		}
	}
	return h
}

// runRSS runs a program with the standard streams passed through and
// writes its peak resident memory in kilobytes to file. A process forked
// from a big one (the benchmark) is charged the parent's memory until it
// execs, so the benchmark measures its commands' memory through this
// small program instead.
func runRSS(file, program string, args []string) error {
	cmd := exec.Command(program, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState != nil {
		if werr := os.WriteFile(file, []byte(strconv.FormatInt(maxRSS(cmd.ProcessState), 10)), 0o644); werr != nil {
			return werr
		}
	}
	return err
}
