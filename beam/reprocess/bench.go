package reprocess

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/backends"
	"github.com/crawlkeeper/crawlkeeper/bench"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
	"github.com/crawlkeeper/crawlkeeper/processors"
)

// BenchOptions configure Bench. Zero fields take the defaults named on
// them.
type BenchOptions struct {
	// Store is the PostgreSQL server; the benchmark works in a scratch
	// schema it drops afterwards.
	Store string
	// NATS, when set, adds the notification read to the pipeline, and an
	// idle measurement: with no records to scan, only the notification
	// reader's bundles run (each waits up to a second for messages).
	NATS string
	// Records is the table's size. Defaults to 20,000.
	Records int
	// Passes is how many passes each Beam measurement times, after a
	// first one that warms the job up. Defaults to 3.
	Passes int
	// Batch and Shards are the pipeline's; Shards is also the goroutine
	// engine's readers. Default to 500 and 2.
	Batch, Shards int
	// Idle is how long the idle measurement lasts. Defaults to 20s.
	Idle time.Duration
	// Progress, when set, receives a line per step.
	Progress func(string)
}

// BenchRun is one measurement of the Beam pipeline.
type BenchRun struct {
	// SinkOutput is whether the write-back had its counted output (the
	// default) or none.
	SinkOutput bool `json:"sink_output"`
	// Rate is records processed per second over the timed passes.
	Rate float64 `json:"rate"`
	// CPU is the process's CPU use over the timed passes, in cores
	// (1.0 is one core busy).
	CPU float64 `json:"cpu"`
	// IdleCPU is the process's CPU use, in cores, while the pipeline
	// waits for the next pass and reads notifications (with NATS only).
	IdleCPU float64 `json:"idle_cpu,omitempty"`
}

// BenchReport compares a pass of the goroutine engine with passes of the
// Beam pipeline on Prism, on the same table in one run.
type BenchReport struct {
	Records int `json:"records"`
	// EngineRate is the goroutine engine's records per second over a
	// pass (RunPass, no pacing), and EngineCPU its CPU use in cores.
	EngineRate float64 `json:"engine_rate"`
	EngineCPU  float64 `json:"engine_cpu"`
	// Beam holds the pipeline's measurements, with and without the sink
	// output.
	Beam []BenchRun `json:"beam"`
}

// Ratio is the Beam pipeline's rate (with the sink output) over the
// goroutine engine's.
func (r *BenchReport) Ratio() float64 {
	for _, b := range r.Beam {
		if b.SinkOutput && r.EngineRate > 0 {
			return b.Rate / r.EngineRate
		}
	}
	return 0
}

// Bench loads a scratch table and measures both engines over it with the
// noop processor, which leaves what the engines themselves cost: reads,
// hand-over, write-backs and checkpoints.
func Bench(ctx context.Context, o BenchOptions) (*BenchReport, error) {
	if o.Records <= 0 {
		o.Records = 20000
	}
	if o.Passes <= 0 {
		o.Passes = 3
	}
	if o.Batch <= 0 {
		o.Batch = crawlkeeper.DefaultPipelineBatch
	}
	if o.Shards <= 0 {
		o.Shards = crawlkeeper.DefaultReaders
	}
	if o.Idle <= 0 {
		o.Idle = 20 * time.Second
	}
	say := func(format string, args ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(format, args...))
		}
	}
	storeURL, drop, err := backends.NewScratch(ctx, o.Store, "", "beam")
	if err != nil {
		return nil, err
	}
	defer drop()
	st, err := backends.OpenStore(ctx, storeURL, "")
	if err != nil {
		return nil, err
	}
	defer st.Close()
	say("loading %d records", o.Records)
	g := &crawlkeeper.Ingester{Store: st}
	for from := 0; from < o.Records; from += 5000 {
		if _, err := g.Ingest(ctx, bytes.NewReader(bench.NDJSON(from, min(from+5000, o.Records), 0)), crawlkeeper.Meta{Source: "bench"}); err != nil {
			return nil, err
		}
	}
	rep := &BenchReport{Records: o.Records}

	say("goroutine engine: %d passes", o.Passes)
	e := &pipeline.Engine{Store: st, Processors: []crawlkeeper.Processor{processors.Noop{}}, Batch: o.Batch, Readers: o.Shards}
	if err := e.Init(ctx); err != nil {
		return nil, err
	}
	// A first pass warms the caches, as the Beam runs' first pass does.
	if _, err := e.RunPass(ctx); err != nil {
		return nil, err
	}
	c0, t0 := cpuTime(), time.Now()
	for i := 0; i < o.Passes; i++ {
		rp, err := e.RunPass(ctx)
		if err != nil {
			return nil, err
		}
		if rp.Processed != int64(o.Records) {
			return nil, fmt.Errorf("engine pass processed %d of %d records", rp.Processed, o.Records)
		}
	}
	wall := time.Since(t0)
	rep.EngineRate = float64(o.Passes*o.Records) / wall.Seconds()
	rep.EngineCPU = (cpuTime() - c0).Seconds() / wall.Seconds()

	for _, sinkOutput := range []bool{true, false} {
		say("beam on prism, sink output %v: %d passes", sinkOutput, o.Passes+1)
		run, err := benchBeam(ctx, o, storeURL, sinkOutput)
		if err != nil {
			return nil, err
		}
		rep.Beam = append(rep.Beam, *run)
	}
	return rep, nil
}

// benchBeam times passes of the pipeline run back to back (a period of a
// nanosecond: no pacing), then, with NATS, the idle pipeline.
func benchBeam(ctx context.Context, o BenchOptions, storeURL string, sinkOutput bool) (*BenchRun, error) {
	var mu sync.Mutex
	passes := map[int64]int{}
	doneAt := map[int64]time.Time{}
	cpuAt := map[int64]time.Duration{}
	unset := setObserve(func(store string, w Work, ids []int64, _ pipeline.Outcome) {
		if w.Kind != KindScan || store != storeURL {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		before := passes[w.Pass]
		passes[w.Pass] += len(ids)
		if before < o.Records && passes[w.Pass] >= o.Records {
			doneAt[w.Pass], cpuAt[w.Pass] = time.Now(), cpuTime()
		}
	})
	defer unset()
	opts := Options{Store: storeURL, NATS: o.NATS, Processors: []string{"noop"}, Period: time.Nanosecond,
		Batch: o.Batch, Shards: o.Shards, SinkWithoutOutput: !sinkOutput}
	if o.NATS != "" {
		// Streams of its own, so the benchmark never touches the ones a
		// deployment or the core's tests use on the same server.
		suffix := fmt.Sprintf("%d", time.Now().UnixNano())
		opts.Stream, opts.Subject = "CKBENCH_"+suffix, "ckbench."+suffix
		opts = opts.withDefaults()
		if err := EnsureReadStream(ctx, opts); err != nil {
			return nil, err
		}
		defer deleteStreams(o.NATS, opts.ReadStream, opts.Stream)
	}
	done, stop := startJob(ctx, opts)
	last := int64(1 + o.Passes)
	deadline := time.Now().Add(10 * time.Minute)
	for {
		mu.Lock()
		_, ok := doneAt[last]
		mu.Unlock()
		if ok {
			break
		}
		select {
		case err := <-done:
			return nil, fmt.Errorf("pipeline stopped: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("pass %d did not finish within 10 minutes", last)
		}
	}
	mu.Lock()
	for p := int64(1); p <= last; p++ {
		if passes[p] != o.Records {
			mu.Unlock()
			stop()
			return nil, fmt.Errorf("pass %d handled %d records, not %d", p, passes[p], o.Records)
		}
	}
	wall := doneAt[last].Sub(doneAt[1])
	cpu := cpuAt[last] - cpuAt[1]
	mu.Unlock()
	run := &BenchRun{SinkOutput: sinkOutput, Rate: float64(o.Passes*o.Records) / wall.Seconds(), CPU: cpu.Seconds() / wall.Seconds()}
	if err := stop(); err != nil {
		return nil, err
	}
	if o.NATS == "" {
		return run, nil
	}
	// Idle: a job whose only pass is over in its first batches (a period
	// of a day), so the scan waits and the reader polls the empty stream.
	opts.Period = 24 * time.Hour
	opts.Batch = o.Records
	opts.Block = int64(o.Records)
	mu.Lock()
	clear(passes)
	clear(doneAt)
	mu.Unlock()
	done, stop = startJob(ctx, opts)
	for {
		mu.Lock()
		_, ok := doneAt[1]
		mu.Unlock()
		if ok {
			break
		}
		select {
		case err := <-done:
			return nil, fmt.Errorf("pipeline stopped: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	c0, t0 := cpuTime(), time.Now()
	select {
	case <-time.After(o.Idle):
	case <-ctx.Done():
	}
	run.IdleCPU = (cpuTime() - c0).Seconds() / time.Since(t0).Seconds()
	return run, stop()
}

// startJob runs the pipeline on Prism in process; stop cancels it and
// waits for it to end.
func startJob(ctx context.Context, o Options) (done <-chan error, stop func() error) {
	p, s := beam.NewPipelineWithRoot()
	Build(s, o)
	rctx, cancel := context.WithCancel(ctx)
	ch := make(chan error, 1)
	go func() { ch <- Run(rctx, "", p) }()
	var once sync.Once
	var err error
	return ch, func() error {
		once.Do(func() {
			cancel()
			if err = <-ch; err == context.Canceled {
				err = nil
			}
		})
		return err
	}
}

// deleteStreams removes the benchmark's streams.
func deleteStreams(url string, names ...string) {
	nc, err := natsgo.Connect(url, natsgo.Timeout(5*time.Second))
	if err != nil {
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range names {
		js.DeleteStream(ctx, n)
	}
}

// cpuTime is the CPU time the process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
