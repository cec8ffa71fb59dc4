package crawlkeeper

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Pipeline defaults. PipelineConfig documents which field falls back to
// which.
const (
	DefaultPipelinePeriod = 24 * time.Hour
	DefaultPipelineBatch  = 500
	DefaultReaders        = 2
	DefaultMaxFailures    = 3
	DefaultExecTimeout    = 10 * time.Second
)

// DefaultProcessors is the processor chain when the configuration names
// none.
var DefaultProcessors = []string{"dates", "fingerprint", "stats"}

// Processor computes derived data for one record. The pipeline runs a
// chain of processors over every record soon after it changes (real time)
// and again on every rescan pass.
type Processor interface {
	// Name identifies the processor in the chain signature, in derived and
	// in dead letters. "errors" is reserved.
	Name() string
	// Version must change whenever the processor's output for the same
	// record would change: a new version changes the chain signature,
	// which makes every record due again.
	Version() int
	// Process reads r and adds its results to derived, by convention under
	// its Name; it may read what earlier processors of the chain stored
	// there. It is called from several goroutines at once. It must not
	// modify r, except that an EventWriter sets r.EventAt and
	// r.DateErrors. An error counts as one failure of this processor on
	// this record; the other processors of the chain still run.
	Process(ctx context.Context, r *Record, derived map[string]any) error
}

// EventWriter is implemented by processors that rewrite a record's
// event_at and date_errors (the dates processor): when such a processor
// succeeds, the pipeline writes r.EventAt and r.DateErrors back with the
// derived data.
type EventWriter interface {
	Processor
	// WritesEvent reports whether Process sets the event fields.
	WritesEvent() bool
}

// CorpusProcessor is implemented by processors whose output depends on the
// whole active corpus (near-duplicate clusters, per-source counts). Their
// state lives in memory: the pipeline rebuilds it on start by loading every
// active record, keeps it current with every record it processes, and
// sweeps out records that left the active set after each complete pass.
type CorpusProcessor interface {
	Processor
	// Load adds or refreshes r in the corpus state without producing
	// output.
	Load(r *Record)
	// Mark starts a new epoch and returns it: records loaded or processed
	// from now on are marked with it.
	Mark() uint64
	// Sweep forgets records not loaded or processed since the epoch mark
	// and returns how many it forgot.
	Sweep(mark uint64) int
}

// StateSaver is implemented by processors that publish corpus state (per
// source statistics) in the store's state, where other processes and the
// CLI read it. The pipeline calls Save after each pass and when it stops.
type StateSaver interface {
	Save(ctx context.Context, st StateStore) error
}

// ChainSignature names the processors of a chain and their versions, in
// order ("dates@1+fingerprint@1"). It is stored as processed_chain: a
// record processed under another signature is due again.
func ChainSignature(ps []Processor) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s@%d", p.Name(), p.Version())
	}
	return strings.Join(parts, "+")
}

// ValidateChain checks that names in the chain are set, unique and not
// reserved.
func ValidateChain(ps []Processor) error {
	seen := map[string]bool{}
	for _, p := range ps {
		n := p.Name()
		switch {
		case n == "" || strings.ContainsAny(n, "@+"):
			return Errorf(EINVALID, "processor name %q: use letters, digits, - or _", n)
		case n == "errors":
			return Errorf(EINVALID, `processor name "errors" is reserved for failures in derived`)
		case seen[n]:
			return Errorf(EINVALID, "processor %q appears twice in the chain", n)
		}
		seen[n] = true
	}
	return nil
}

// Publisher hands notifications of committed records to the pipeline.
//
// Publish never fails and never blocks beyond a bounded buffer: when the
// buffer is full or the queue cannot be reached, the notification is
// dropped and counted. A dropped notification only delays its records to
// the next rescan pass, so an ingest never waits for, or fails because of,
// the queue.
type Publisher interface {
	Publish(refs []RecordRef)
	// Stats reports what Publish did so far.
	Stats() QueueStats
}

// Subscriber delivers notifications to the pipeline's real-time workers.
// Several goroutines, and with a server queue several processes, receive
// from one subscription; each notification goes to one of them.
type Subscriber interface {
	// Receive waits for the next notification. It returns ErrQueueClosed
	// once the queue is closed and every buffered notification has been
	// received, or ctx's error.
	Receive(ctx context.Context) (*Notification, error)
}

// Queue is a notification backend: in process by default, NATS JetStream
// for several processes. Every backend runs the queuetest suite.
type Queue interface {
	Publisher
	Subscriber
	// Close stops accepting notifications, delivers what is buffered to
	// Receive where the backend can, and releases resources.
	Close() error
}

// ErrQueueClosed is returned by Subscriber.Receive after Close.
var ErrQueueClosed = errors.New("notification queue closed")

// QueueStats counts a publisher's notifications, in records.
type QueueStats struct {
	// Published counts records handed on to the queue.
	Published int64 `json:"published"`
	// Dropped counts records whose notification was dropped because the
	// buffer was full or the queue failed; rescans process them.
	Dropped int64 `json:"dropped"`
}

// Notification names records that were inserted, changed or revived.
type Notification struct {
	Refs []RecordRef
	ack  func(ctx context.Context) error
}

// NewNotification returns a notification whose Ack calls ack (nil for
// backends without acknowledgements).
func NewNotification(refs []RecordRef, ack func(ctx context.Context) error) *Notification {
	return &Notification{Refs: refs, ack: ack}
}

// Ack acknowledges the notification once its records are processed. A
// backend with acknowledgements delivers an unacknowledged notification
// again after its ack wait, possibly to another process.
func (n *Notification) Ack(ctx context.Context) error {
	if n.ack == nil {
		return nil
	}
	return n.ack(ctx)
}

// PublishTouched returns an ingest hook that publishes the records each
// committed batch inserted, changed or revived.
func PublishTouched(p Publisher) AfterCommit {
	return func(_ context.Context, _ []*Prepared, res *IngestResult) {
		if len(res.Touched) > 0 {
			p.Publish(res.Touched)
		}
	}
}
