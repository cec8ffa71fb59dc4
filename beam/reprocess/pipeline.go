package reprocess

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/nats-io/nats.go/jetstream"

	natsgo "github.com/nats-io/nats.go"

	"github.com/crawlkeeper/crawlkeeper/nats"
)

// Build adds the reprocessing pipeline to s.
func Build(s beam.Scope, o Options) {
	o = o.withDefaults()
	sh := beam.Create(s.Scope("shards"), toAny(shards(o))...)
	work := []beam.PCollection{beam.ParDo(s.Scope("scan"), &scanFn{Opts: o}, sh)}
	if o.NATS != "" {
		msgs := readNotifications(s, o.NATS, o.ReadStream, o.Subject)
		work = append(work, beam.ParDo(s.Scope("notifications"), &notifyFn{}, msgs))
	}
	all := work[0]
	if len(work) > 1 {
		all = beam.Flatten(s, work...)
	}
	if o.SinkWithoutOutput {
		beam.ParDo0(s.Scope("write"), &writeFn{Opts: o}, all)
		return
	}
	counts := beam.ParDo(s.Scope("write"), &processFn{Opts: o}, all)
	beam.ParDo0(s.Scope("count"), &countFn{}, beam.Reshuffle(s.Scope("reshuffle"), counts))
}

func toAny(sh []Shard) []any {
	out := make([]any, len(sh))
	for i, s := range sh {
		out[i] = s
	}
	return out
}

// EnsureReadStream makes the core's notification stream exist (as its
// publishers would create it) and a stream that sources it, which the
// pipeline reads. Call it before the job starts; it does nothing without
// a NATS URL.
//
// The core's stream keeps each notification until one consumer
// acknowledges it, and such a work-queue stream refuses the ordered
// consumers the pipeline reads with (natsread.go). A sourcing stream gets
// a copy of every notification and keeps it for the core's MaxAge, which
// the pipeline can read from any sequence.
func EnsureReadStream(ctx context.Context, o Options) error {
	o = o.withDefaults()
	if o.NATS == "" {
		return nil
	}
	q, err := nats.Open(ctx, nats.Options{URL: o.NATS, Stream: o.Stream, Subject: o.Subject})
	if err != nil {
		return err
	}
	q.Close()
	nc, err := natsgo.Connect(o.NATS, natsgo.Timeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("notification stream %s: %w", o.NATS, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("notification stream %s: %w", o.NATS, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := js.Stream(cctx, o.Stream); err != nil {
		return fmt.Errorf("notification stream %s on %s: %w", o.Stream, o.NATS, err)
	}
	_, err = js.CreateOrUpdateStream(cctx, jetstream.StreamConfig{
		Name:      o.ReadStream,
		Sources:   []*jetstream.StreamSource{{Name: o.Stream}},
		Retention: jetstream.LimitsPolicy,
		MaxAge:    nats.DefaultMaxAge,
		Discard:   jetstream.DiscardOld,
		Storage:   jetstream.FileStorage,
	})
	if err != nil {
		return fmt.Errorf("create stream %s sourcing %s: %w", o.ReadStream, o.Stream, err)
	}
	return nil
}
