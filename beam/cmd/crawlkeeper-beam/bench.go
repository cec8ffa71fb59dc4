package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/crawlkeeper/crawlkeeper/beam/reprocess"
)

var (
	benchRecords = flag.Int("records", 20000, "bench: records in the scratch table")
	benchPasses  = flag.Int("passes", 3, "bench: timed passes per measurement")
	benchJSON    = flag.Bool("json", false, "bench: print the report as JSON")
)

// runBench compares the goroutine engine with the Beam pipeline on Prism
// over one scratch table.
func runBench(ctx context.Context, w io.Writer) error {
	b := *batch
	rep, err := reprocess.Bench(ctx, reprocess.BenchOptions{Store: *storeURL, NATS: *natsURL, Records: *benchRecords, Passes: *benchPasses,
		Batch: b, Shards: *shards, Progress: func(s string) { fmt.Fprintln(os.Stderr, "bench:", s) }})
	if err != nil {
		return err
	}
	if *benchJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(w, "records: %d\n", rep.Records)
	fmt.Fprintf(w, "goroutine engine: %.0f records/s, %.2f cores\n", rep.EngineRate, rep.EngineCPU)
	for _, r := range rep.Beam {
		what := "with the counted sink output"
		if !r.SinkOutput {
			what = "sink without output"
		}
		fmt.Fprintf(w, "beam on prism, %s: %.0f records/s, %.2f cores", what, r.Rate, r.CPU)
		if r.IdleCPU > 0 {
			fmt.Fprintf(w, ", idle %.2f cores", r.IdleCPU)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "beam/engine: %.2f\n", rep.Ratio())
	return nil
}
