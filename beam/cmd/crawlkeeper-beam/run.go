package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	// Runners the command submits to, besides Prism.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/dataflow"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/flink"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/universal"
	// The reflection-free runtime and the file systems a worker stages
	// through.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/exec/optimized"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/beam/reprocess"
	"github.com/crawlkeeper/crawlkeeper/chain"
	"github.com/crawlkeeper/crawlkeeper/nats"
)

// The pipeline's flags. The notification flags take the core's names and
// defaults, so the pipeline reads what crawlkeeper serve publishes.
var (
	storeURL   = flag.String("store", "", "server store URL: postgres://user:password@host:5432/db or mysql://user:password@host:3306/db")
	natsURL    = flag.String("nats", "", "NATS server with the notification stream, nats://host:4222 (default: none; passes alone reach every record)")
	stream     = flag.String("stream", nats.DefaultStream, "the core's notification stream")
	subject    = flag.String("subject", nats.DefaultSubject, "the core's notification subject")
	readStream = flag.String("read_stream", "", "the stream the pipeline reads, sourcing --stream (default: --stream plus _BEAM)")
	procs      = flag.String("processors", "", "comma-separated processor chain (default: the configuration's pipeline.processors, else dates,fingerprint,stats)")
	configPath = flag.String("config", "", "crawlkeeper configuration file (per-source policies, the exec program); its text travels with the job")
	period     = flag.String("period", "", "deadline of one pass, such as 24h or 7d (default: the configuration's pipeline.period, else 24h)")
	batch      = flag.Int("batch", 0, "records per read and write-back (default: the configuration's pipeline.batch, else 500)")
	shards     = flag.Int("shards", reprocess.DefaultShards, "id shards scanned in parallel")
)

// options reads the pipeline's flags, and the configuration file they
// name, into reprocess.Options.
func options() (reprocess.Options, error) {
	o := reprocess.Options{Store: *storeURL, NATS: *natsURL, Stream: *stream, Subject: *subject, ReadStream: *readStream,
		Processors: chain.Names(*procs), Batch: *batch, Shards: *shards}
	if *configPath != "" {
		b, err := os.ReadFile(*configPath)
		if err != nil {
			return o, crawlkeeper.Errorf(crawlkeeper.EINVALID, "--config: %v", err)
		}
		o.ConfigYAML = string(b)
	}
	if *period != "" {
		d, err := crawlkeeper.ParseDuration(*period)
		if err != nil || d <= 0 {
			return o, crawlkeeper.Errorf(crawlkeeper.EINVALID, "--period %q: use a duration such as 24h or 7d", *period)
		}
		o.Period = d.D()
	}
	if *batch < 0 || *shards < 0 {
		return o, crawlkeeper.Errorf(crawlkeeper.EINVALID, "--batch and --shards must not be negative")
	}
	if err := o.ApplyConfig(); err != nil {
		return o, err
	}
	return o, o.Validate()
}

// run builds the pipeline from the flags and runs it on the selected
// runner until ctx ends (Prism) or the job is submitted and ends.
func run(ctx context.Context) error {
	o, err := options()
	if err != nil {
		return err
	}
	if !dryRun() {
		// The stream the pipeline reads must exist before its
		// readers start.
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := reprocess.EnsureReadStream(sctx, o)
		cancel()
		if err != nil {
			return err
		}
	}
	p, s := beam.NewPipelineWithRoot()
	reprocess.Build(s, o)
	if err := reprocess.Run(ctx, *runners.Runner, p); err != nil {
		return fmt.Errorf("%s: %w", runnerName(), err)
	}
	return nil
}

func runnerName() string {
	if *runners.Runner == "" {
		return "prism"
	}
	return *runners.Runner
}

// dryRun reports whether the Dataflow runner only prints the job.
func dryRun() bool {
	f := flag.Lookup("dry_run")
	return f != nil && f.Value.String() == "true"
}
