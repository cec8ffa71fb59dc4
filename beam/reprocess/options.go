// Package reprocess is crawlkeeper's reprocessing pipeline as an Apache
// Beam pipeline, for corpora one machine cannot rescan within the period.
//
// An unbounded splittable DoFn scans the server store in id order, one
// restriction per shard: each shard owns every shards-th block of ids,
// reads its blocks in batches, checkpoints itself with the last id it
// read as the restriction's state, and wraps to the next pass at the end,
// pacing itself so that a pass meets the period. Its batches are
// flattened with the notifications read from NATS JetStream (natsread.go),
// processed by the core's processor chain and written back with the
// core's version check (pipeline.Engine), so a record that changed while
// it was processed is read and processed again instead of overwritten.
//
// The same pipeline runs in process on Prism (tests, one machine) and is
// submitted unchanged to Dataflow or a Flink job server.
package reprocess

import (
	"fmt"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/chain"
	"github.com/crawlkeeper/crawlkeeper/nats"
)

// Defaults of Options.
const (
	DefaultShards = 4
	// DefaultBlocksPerBatch sets the block size, in batches: a shard reads
	// whole blocks of ids, so blocks spread the ids over shards evenly
	// while each keyset read stays within one block.
	DefaultBlocksPerBatch = 8
	// DefaultSlice is how long a shard reads before it checkpoints: each
	// checkpoint commits the shard's output and position, and costs a
	// round trip through the runner.
	DefaultSlice = time.Second
	// DefaultReadStreamSuffix names the stream the pipeline reads
	// notifications from, after the core's stream.
	DefaultReadStreamSuffix = "_BEAM"
)

// Options configure the pipeline. Zero fields take the defaults named on
// them. They are copied into the pipeline's DoFns, so they travel to the
// workers with the job.
type Options struct {
	// Store is the server store's URL (postgres://, mysql://).
	Store string
	// NATS is the NATS server (nats://host:port); empty reads no
	// notifications, and rescans alone reach every record.
	NATS string
	// Stream and Subject are the core's notification stream and subject.
	// Default to the nats package's defaults.
	Stream, Subject string
	// ReadStream is the stream the pipeline reads. The core's stream is a
	// work queue, which admits only consumers with acknowledgements, and
	// the pipeline reads with an ordered consumer; so it reads a
	// stream that sources the core's one (EnsureReadStream creates it).
	// Defaults to Stream plus "_BEAM".
	ReadStream string
	// Processors names the processor chain. Defaults to
	// crawlkeeper.DefaultProcessors.
	Processors []string
	// ConfigYAML is the crawlkeeper configuration (per-source policies,
	// the exec program), as the file's text. Defaults to none.
	ConfigYAML string
	// Period is the deadline of one pass. Defaults to 24h.
	Period time.Duration
	// Batch is the number of records per read and per write-back.
	// Defaults to 500.
	Batch int
	// Shards is the number of id shards scanned in parallel. Defaults
	// to 4.
	Shards int
	// Block is the number of consecutive ids a shard owns before the next
	// shard's block. Defaults to DefaultBlocksPerBatch times Batch.
	Block int64
	// Slice is how long a shard reads before it checkpoints. Defaults to
	// one second.
	Slice time.Duration
	// SinkWithoutOutput makes the write-back stage the pipeline's last one
	// (no output). Prism's progress loop then spins during every bundle
	// of that stage; the default gives the write-back an output that a
	// separate stage counts. Only for measuring that difference.
	SinkWithoutOutput bool
}

// withDefaults returns o with its zero fields set.
func (o Options) withDefaults() Options {
	if o.Stream == "" {
		o.Stream = nats.DefaultStream
	}
	if o.Subject == "" {
		o.Subject = nats.DefaultSubject
	}
	if o.ReadStream == "" {
		o.ReadStream = o.Stream + DefaultReadStreamSuffix
	}
	if len(o.Processors) == 0 {
		o.Processors = crawlkeeper.DefaultProcessors
	}
	if o.Period <= 0 {
		o.Period = crawlkeeper.DefaultPipelinePeriod
	}
	if o.Batch <= 0 {
		o.Batch = crawlkeeper.DefaultPipelineBatch
	}
	if o.Shards <= 0 {
		o.Shards = DefaultShards
	}
	if o.Block <= 0 {
		o.Block = DefaultBlocksPerBatch * int64(o.Batch)
	}
	if o.Slice <= 0 {
		o.Slice = DefaultSlice
	}
	return o
}

// Validate checks what can be checked before the job starts: a store URL
// is set and the processor chain builds.
func (o Options) Validate() error {
	if o.Store == "" {
		return crawlkeeper.Errorf(crawlkeeper.EINVALID, "no store: give --store postgres://... or mysql://...")
	}
	o = o.withDefaults()
	cfg, err := parseConfig(o.ConfigYAML)
	if err != nil {
		return err
	}
	procs, release, err := chainFor(o.Processors, cfg, 1)
	if err != nil {
		return err
	}
	release()
	if len(procs) == 0 {
		return crawlkeeper.Errorf(crawlkeeper.EINVALID, "the processor chain is empty")
	}
	return nil
}

// chainFor builds the processors named, looking up the processors
// registered with RegisterProcessor before the core's.
func chainFor(names []string, cfg *crawlkeeper.Config, workers int) ([]crawlkeeper.Processor, func(), error) {
	registryMu.Lock()
	defer registryMu.Unlock()
	var core []string
	var extra []crawlkeeper.Processor
	pos := map[int]crawlkeeper.Processor{}
	for i, n := range names {
		if f, ok := registry[n]; ok {
			p := f()
			pos[i] = p
			extra = append(extra, p)
			continue
		}
		core = append(core, n)
	}
	procs, release, err := chain.Build(core, chain.Options{Config: cfg, Workers: workers})
	if err != nil {
		return nil, nil, err
	}
	if len(extra) == 0 {
		return procs, release, nil
	}
	// Put the registered processors back where they were named.
	out := make([]crawlkeeper.Processor, 0, len(names))
	for i := range names {
		if p, ok := pos[i]; ok {
			out = append(out, p)
			continue
		}
		out = append(out, procs[0])
		procs = procs[1:]
	}
	if err := crawlkeeper.ValidateChain(out); err != nil {
		release()
		return nil, nil, err
	}
	return out, release, nil
}

// RegisterProcessor makes name in a processor chain build a processor
// with f, before the core's processors are considered. Call it from an
// init function of the binary that runs the pipeline: workers of a
// distributed runner run that same binary, so they know the name too.
func RegisterProcessor(name string, f func() crawlkeeper.Processor) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, ok := registry[name]; ok {
		panic(fmt.Sprintf("reprocess: processor %q registered twice", name))
	}
	registry[name] = f
}

var (
	registryMu sync.Mutex
	registry   = map[string]func() crawlkeeper.Processor{}
)

// ApplyConfig sets the fields that are still zero from the pipeline
// section of ConfigYAML, so the pipeline follows the same configuration
// file as crawlkeeper serve.
func (o *Options) ApplyConfig() error {
	cfg, err := parseConfig(o.ConfigYAML)
	if err != nil || cfg == nil {
		return err
	}
	if len(o.Processors) == 0 {
		o.Processors = cfg.Pipeline.Processors
	}
	if o.Period == 0 {
		o.Period = cfg.Pipeline.Period.D()
	}
	if o.Batch == 0 {
		o.Batch = cfg.Pipeline.Batch
	}
	return nil
}
