// Command crawlkeeper-beam runs crawlkeeper's reprocessing pipeline as an
// Apache Beam pipeline: in process on Prism by default, or submitted to
// Dataflow (--runner=dataflow) or a Flink job server (--runner=flink
// --endpoint=host:port) with the SDK's runner flags.
//
//	crawlkeeper-beam --store postgres://... --nats nats://... [flags]
//	crawlkeeper-beam bench --store postgres://... [--nats nats://...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	args := os.Args[1:]
	bench := len(args) > 0 && args[0] == "bench"
	if bench {
		args = args[1:]
	}
	// The SDK's flags (--runner, --endpoint, the Dataflow options, and the
	// worker's own when a runner starts this binary as a worker) live on
	// the command line's flag set, so the pipeline's flags do too.
	if err := flag.CommandLine.Parse(args); err != nil {
		os.Exit(2)
	}
	beam.Init()
	var err error
	if bench {
		err = runBench(ctx, os.Stdout)
	} else {
		err = run(ctx)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "crawlkeeper-beam:", err)
		os.Exit(1)
	}
}
