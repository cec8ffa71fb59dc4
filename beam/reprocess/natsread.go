package reprocess

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/graph/mtime"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The notifications are read by a splittable DoFn of our own over the
// JetStream stream, rather than by the SDK's io/natsio: its watermark
// estimator is read by the harness's split requests while its reader
// writes it, unsynchronized (Beam v2.77.0, a race the race detector
// reports), and its bundles read for as long as messages come. This
// reader reports wall time as its watermark (its elements carry their
// processing time, as io/natsio's default policy does), and each bundle
// is one fetch, so a bundle is rarely in flight when a job is cancelled
// (see quiesce.go).

func init() {
	register.DoFn5x2[context.Context, *sdf.WallTimeWatermarkEstimator, *sdf.LockRTracker, []byte, func(beam.EventTime, []byte), sdf.ProcessContinuation, error](&readFn{})
	register.Emitter2[beam.EventTime, []byte]()
}

// Reader settings: messages per fetch, the longest a fetch waits for the
// first message, the pause after a fetch that found none, and how long
// the server keeps a consumer nobody fetches from (one left by a reader
// that stopped without deleting it).
const (
	readFetch      = 256
	readFetchWait  = time.Second
	readIdleResume = time.Second
	readInactive   = 30 * time.Second
)

// readNotifications reads the messages of subject on stream at url, each
// as its payload, from the stream's first sequence on, forever.
func readNotifications(s beam.Scope, url, stream, subject string) beam.PCollection {
	s = s.Scope("read")
	return beam.ParDo(s, &readFn{URL: url, Stream: stream, Subject: subject}, beam.Impulse(s))
}

// readFn reads a JetStream stream. Its restriction is the range of
// stream sequence numbers left to read; the end grows with the stream.
type readFn struct {
	URL, Stream, Subject string

	nc *natsgo.Conn
	js jetstream.JetStream
	// cons is the ordered consumer of this instance's last bundle, kept
	// while the next bundle starts where it stopped (next): each fetch
	// replaces its server-side consumer and deletes the previous one, so
	// a reader keeps one consumer on the server, not one per bundle.
	cons jetstream.Consumer
	next int64
}

func (fn *readFn) Setup() error {
	nc, err := natsgo.Connect(fn.URL, natsgo.Timeout(5*time.Second), natsgo.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("reprocess: notifications at %s: %w", fn.URL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return fmt.Errorf("reprocess: notifications at %s: %w", fn.URL, err)
	}
	fn.nc, fn.js = nc, js
	return nil
}

func (fn *readFn) Teardown() {
	fn.dropConsumer()
	if fn.nc != nil {
		fn.nc.Close()
	}
}

// dropConsumer deletes the instance's consumer from the server, at best:
// one it fails to delete expires after readInactive.
func (fn *readFn) dropConsumer() {
	if fn.cons == nil {
		return
	}
	if info := fn.cons.CachedInfo(); info != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = fn.js.DeleteConsumer(ctx, fn.Stream, info.Name)
		cancel()
	}
	fn.cons, fn.next = nil, 0
}

// CreateInitialRestriction reads from the stream's first message on.
func (fn *readFn) CreateInitialRestriction([]byte) offsetrange.Restriction {
	return offsetrange.Restriction{Start: 1, End: math.MaxInt64}
}

// SplitRestriction keeps the stream whole: one reader.
func (fn *readFn) SplitRestriction(_ []byte, r offsetrange.Restriction) []offsetrange.Restriction {
	return []offsetrange.Restriction{r}
}

// RestrictionSize is one unit: the reader always has work ahead.
func (fn *readFn) RestrictionSize([]byte, offsetrange.Restriction) float64 { return 1 }

// CreateTracker tracks the sequence numbers read, the end growing to the
// stream's last sequence.
func (fn *readFn) CreateTracker(r offsetrange.Restriction) (*sdf.LockRTracker, error) {
	if r.End < math.MaxInt64 {
		return sdf.NewLockRTracker(offsetrange.NewTracker(r)), nil
	}
	rt, err := offsetrange.NewGrowableTracker(r, &streamEnd{fn: fn})
	if err != nil {
		return nil, fmt.Errorf("reprocess: notification tracker: %w", err)
	}
	return sdf.NewLockRTracker(rt), nil
}

// TruncateRestriction ends the read when the job drains.
func (fn *readFn) TruncateRestriction(rt *sdf.LockRTracker, _ []byte) offsetrange.Restriction {
	start := rt.GetRestriction().(offsetrange.Restriction).Start
	return offsetrange.Restriction{Start: start, End: start}
}

// CreateWatermarkEstimator reports wall time: stateless, so the harness
// may read it from any goroutine.
func (fn *readFn) CreateWatermarkEstimator() *sdf.WallTimeWatermarkEstimator {
	return &sdf.WallTimeWatermarkEstimator{}
}

// ProcessElement fetches once from the restriction's start and emits the
// messages it claims, then resumes: at once after messages, after a
// pause when there were none.
func (fn *readFn) ProcessElement(ctx context.Context, _ *sdf.WallTimeWatermarkEstimator, rt *sdf.LockRTracker, _ []byte, emit func(beam.EventTime, []byte)) (sdf.ProcessContinuation, error) {
	defer running()()
	if quiescing.Load() {
		return sdf.ResumeProcessingIn(quiescePark), nil
	}
	start := rt.GetRestriction().(offsetrange.Restriction).Start
	if fn.cons == nil || start != fn.next {
		fn.dropConsumer()
		cons, err := fn.js.OrderedConsumer(ctx, fn.Stream, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{fn.Subject},
			DeliverPolicy:  jetstream.DeliverByStartSequencePolicy,
			OptStartSeq:    uint64(start),
			// One attempt per fetch: the default retries forever, which
			// would hold the bundle while the server is away.
			MaxResetAttempts:  1,
			InactiveThreshold: readInactive,
		})
		if err != nil {
			// The server may be restarting: try again later rather than
			// fail the bundle, which Prism would turn into a failed job.
			slog.Warn("reprocess: notifications: create a consumer; trying again", "stream", fn.Stream, "err", err)
			return sdf.ResumeProcessingIn(readIdleResume), nil
		}
		fn.cons, fn.next = cons, start
	}
	batch, err := fn.cons.Fetch(readFetch, jetstream.FetchMaxWait(readFetchWait))
	if err != nil {
		fn.dropConsumer()
		slog.Warn("reprocess: notifications: fetch; trying again", "stream", fn.Stream, "err", err)
		return sdf.ResumeProcessingIn(readIdleResume), nil
	}
	n := 0
	for msg := range batch.Messages() {
		md, err := msg.Metadata()
		if err != nil {
			fn.dropConsumer()
			slog.Warn("reprocess: notifications: message without metadata; reading again from it", "stream", fn.Stream, "err", err)
			return sdf.ResumeProcessingIn(readIdleResume), nil
		}
		seq := int64(md.Sequence.Stream)
		if !rt.TryClaim(seq) {
			// Split off: the rest is another restriction's, read by a
			// consumer of its own.
			fn.dropConsumer()
			return sdf.StopProcessing(), nil
		}
		emit(mtime.Now(), msg.Data())
		fn.next = seq + 1
		n++
	}
	if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, natsgo.ErrTimeout) {
		fn.dropConsumer()
		slog.Warn("reprocess: notifications: fetch ended early", "stream", fn.Stream, "err", err)
	}
	if n == 0 {
		return sdf.ResumeProcessingIn(readIdleResume), nil
	}
	return sdf.ResumeProcessingIn(0), nil
}

// streamEnd estimates the end of the growable restriction: one past the
// last sequence of the subject, or the last estimate when the server does
// not answer.
type streamEnd struct {
	fn   *readFn
	last atomic.Int64
}

func (e *streamEnd) Estimate() int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	last := max(e.last.Load(), 1)
	if e.fn.js == nil {
		return last
	}
	st, err := e.fn.js.Stream(ctx, e.fn.Stream)
	if err != nil {
		return last
	}
	msg, err := st.GetLastMsgForSubject(ctx, e.fn.Subject)
	if err != nil {
		return last
	}
	end := int64(msg.Sequence) + 1
	e.last.Store(end)
	return end
}
