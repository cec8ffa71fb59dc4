// Package nats carries the pipeline's notifications through NATS
// JetStream, so that several crawlkeeper processes share the real-time
// work: ingests publish to a stream, and every process pulls from one
// durable consumer with explicit acknowledgements. A notification that is
// not acknowledged (its process died, its store write failed) is
// delivered again after the ack wait, possibly to another process.
//
// Publishing never fails or stalls an ingest: Publish puts the
// notification in a bounded local buffer that one goroutine sends on, and
// drops (and counts) it when the buffer is full or the server cannot be
// reached. Records of a dropped notification are processed by the next
// rescan pass.
package nats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crawlkeeper/crawlkeeper"
)

// Defaults of Options.
const (
	DefaultStream   = "CRAWLKEEPER"
	DefaultSubject  = "crawlkeeper.records"
	DefaultConsumer = "crawlkeeper-pipeline"
	DefaultBuffer   = 1024
	DefaultAckWait  = 30 * time.Second
	DefaultMaxAge   = 24 * time.Hour
)

// maxRefsPerMessage keeps messages well under NATS's default 1 MiB
// payload limit.
const maxRefsPerMessage = 2000

// Options configure a Queue. Zero fields take the defaults named on them.
type Options struct {
	// URL is the server, nats://host:port.
	URL string
	// Stream is the JetStream stream. Defaults to CRAWLKEEPER.
	Stream string
	// Subject is the subject notifications are published on. Defaults to
	// crawlkeeper.records.
	Subject string
	// Consumer is the durable consumer the processes share. Defaults to
	// crawlkeeper-pipeline.
	Consumer string
	// Buffer is how many notifications wait locally to be sent before
	// Publish drops. Defaults to 1024.
	Buffer int
	// AckWait is how long a delivered notification may stay
	// unacknowledged before it is delivered again. Defaults to 30s.
	AckWait time.Duration
	// MaxAge bounds how long the stream keeps a notification nobody
	// received: passes cover older ones. Defaults to 24h.
	MaxAge time.Duration
	// Logger receives connection warnings. Defaults to none.
	Logger *slog.Logger
}

// ParseURL reads a queue URL: nats://host:port, with optional query
// parameters stream, subject and consumer.
func ParseURL(raw string) (Options, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return Options{}, crawlkeeper.Errorf(crawlkeeper.EINVALID, "queue URL %q: use nats://host:port", raw)
	}
	q := u.Query()
	o := Options{Stream: q.Get("stream"), Subject: q.Get("subject"), Consumer: q.Get("consumer")}
	u.RawQuery = ""
	o.URL = u.String()
	return o, nil
}

// Queue is the JetStream implementation of crawlkeeper.Queue.
type Queue struct {
	o  Options
	nc *natsgo.Conn
	js jetstream.JetStream

	pub       chan []crawlkeeper.RecordRef
	pubDone   chan struct{}
	published atomic.Int64
	dropped   atomic.Int64

	mu        sync.RWMutex // guards closed against sends on pub
	closed    bool
	streamOK  atomic.Bool
	streamMu  sync.Mutex
	subMu     sync.Mutex
	iter      jetstream.MessagesContext
	closeOnce sync.Once
}

var _ crawlkeeper.Queue = (*Queue)(nil)

// Open connects to the server. It does not fail when the server is down:
// the connection keeps retrying in the background, notifications are
// dropped meanwhile, and Receive reports the outage.
func Open(ctx context.Context, o Options) (*Queue, error) {
	if o.Stream == "" {
		o.Stream = DefaultStream
	}
	if o.Subject == "" {
		o.Subject = DefaultSubject
	}
	if o.Consumer == "" {
		o.Consumer = DefaultConsumer
	}
	if o.Buffer <= 0 {
		o.Buffer = DefaultBuffer
	}
	if o.AckWait <= 0 {
		o.AckWait = DefaultAckWait
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	nc, err := natsgo.Connect(o.URL,
		natsgo.Name("crawlkeeper"),
		natsgo.RetryOnFailedConnect(true),
		natsgo.MaxReconnects(-1),
		natsgo.ReconnectWait(time.Second),
		natsgo.Timeout(2*time.Second),
	)
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EINVALID, "queue %s: %v", o.URL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("queue %s: %w", o.URL, err)
	}
	q := &Queue{o: o, nc: nc, js: js, pub: make(chan []crawlkeeper.RecordRef, o.Buffer), pubDone: make(chan struct{})}
	if err := q.ensureStream(ctx); err != nil {
		o.Logger.Warn("notification stream not ready; notifications are dropped until the server answers", "url", o.URL, "err", err)
	}
	go q.publishLoop()
	return q, nil
}

// ensureStream creates or updates the stream once per connection life.
func (q *Queue) ensureStream(ctx context.Context) error {
	if q.streamOK.Load() {
		return nil
	}
	q.streamMu.Lock()
	defer q.streamMu.Unlock()
	if q.streamOK.Load() {
		return nil
	}
	if !q.nc.IsConnected() {
		return fmt.Errorf("not connected to %s", q.o.URL)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := q.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:      q.o.Stream,
		Subjects:  []string{q.o.Subject},
		Retention: jetstream.WorkQueuePolicy,
		MaxAge:    q.o.MaxAge,
		Discard:   jetstream.DiscardOld,
		Storage:   jetstream.FileStorage,
	})
	if err != nil {
		return fmt.Errorf("create stream %s: %w", q.o.Stream, err)
	}
	q.streamOK.Store(true)
	return nil
}

// Publish implements crawlkeeper.Publisher.
func (q *Queue) Publish(refs []crawlkeeper.RecordRef) {
	for len(refs) > 0 {
		n := min(len(refs), maxRefsPerMessage)
		q.publishOne(refs[:n])
		refs = refs[n:]
	}
}

func (q *Queue) publishOne(refs []crawlkeeper.RecordRef) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		q.dropped.Add(int64(len(refs)))
		return
	}
	select {
	case q.pub <- append([]crawlkeeper.RecordRef(nil), refs...):
	default:
		q.dropped.Add(int64(len(refs)))
	}
}

// publishLoop sends buffered notifications one by one, waiting for each
// acknowledgement from the stream; while the server is unreachable it
// drops them at once instead of waiting, so the buffer keeps moving.
func (q *Queue) publishLoop() {
	defer close(q.pubDone)
	for refs := range q.pub {
		n := int64(len(refs))
		if err := q.send(refs); err != nil {
			q.dropped.Add(n)
			continue
		}
		q.published.Add(n)
	}
}

func (q *Queue) send(refs []crawlkeeper.RecordRef) error {
	if !q.nc.IsConnected() {
		return natsgo.ErrConnectionClosed
	}
	if err := q.ensureStream(context.Background()); err != nil {
		return err
	}
	data, err := json.Marshal(refs)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := q.js.Publish(ctx, q.o.Subject, data); err != nil {
		if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, jetstream.ErrStreamNotFound) {
			q.streamOK.Store(false) // deleted or lost: recreate on the next send
		}
		return err
	}
	return nil
}

// Stats implements crawlkeeper.Publisher.
func (q *Queue) Stats() crawlkeeper.QueueStats {
	return crawlkeeper.QueueStats{Published: q.published.Load(), Dropped: q.dropped.Load()}
}

// iterator returns the message iterator of the durable consumer,
// creating both on first use.
func (q *Queue) iterator(ctx context.Context) (jetstream.MessagesContext, error) {
	q.subMu.Lock()
	defer q.subMu.Unlock()
	if q.iter != nil {
		return q.iter, nil
	}
	if err := q.ensureStream(ctx); err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EUNAVAILABLE, "notification queue %s: %v", q.o.URL, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cons, err := q.js.CreateOrUpdateConsumer(cctx, q.o.Stream, jetstream.ConsumerConfig{
		Durable:       q.o.Consumer,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       q.o.AckWait,
		MaxAckPending: 1000,
		// A notification that keeps failing is given up after a few
		// deliveries: the next pass processes its records anyway.
		MaxDeliver: 5,
	})
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EUNAVAILABLE, "notification queue %s: consumer %s: %v", q.o.URL, q.o.Consumer, err)
	}
	// A small pull buffer, so that notifications spread over processes
	// instead of piling up in the first one.
	it, err := cons.Messages(jetstream.PullMaxMessages(16))
	if err != nil {
		return nil, crawlkeeper.Errorf(crawlkeeper.EUNAVAILABLE, "notification queue %s: %v", q.o.URL, err)
	}
	q.iter = it
	return it, nil
}

// Receive implements crawlkeeper.Subscriber.
func (q *Queue) Receive(ctx context.Context) (*crawlkeeper.Notification, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q.mu.RLock()
		closed := q.closed
		q.mu.RUnlock()
		if closed {
			return nil, crawlkeeper.ErrQueueClosed
		}
		it, err := q.iterator(ctx)
		if err != nil {
			return nil, err
		}
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil, crawlkeeper.ErrQueueClosed
			}
			return nil, crawlkeeper.Errorf(crawlkeeper.EUNAVAILABLE, "notification queue %s: %v", q.o.URL, err)
		}
		var refs []crawlkeeper.RecordRef
		if err := json.Unmarshal(msg.Data(), &refs); err != nil {
			// Not ours: never deliver it again.
			q.o.Logger.Warn("dropping a malformed notification", "subject", msg.Subject(), "err", err)
			msg.Term()
			continue
		}
		return crawlkeeper.NewNotification(refs, func(context.Context) error { return msg.Ack() }), nil
	}
}

// Close implements crawlkeeper.Queue: it sends what is buffered (for at
// most ten seconds; the rest counts as dropped), stops receiving and
// closes the connection. Notifications received but not acknowledged are
// delivered again to another process after the ack wait.
func (q *Queue) Close() error {
	q.closeOnce.Do(func() {
		q.mu.Lock()
		q.closed = true
		close(q.pub)
		q.mu.Unlock()
		select {
		case <-q.pubDone:
		case <-time.After(10 * time.Second):
			// Stop waiting for a stuck server: everything still buffered
			// counts as dropped, and the loop sees a closed connection.
			q.nc.Close()
			<-q.pubDone
		}
		q.subMu.Lock()
		if q.iter != nil {
			q.iter.Stop()
		}
		q.subMu.Unlock()
		q.nc.Close()
	})
	return nil
}

// String names the queue for messages.
func (q *Queue) String() string {
	return strings.Join([]string{q.o.URL, q.o.Stream, q.o.Subject, q.o.Consumer}, " ")
}
