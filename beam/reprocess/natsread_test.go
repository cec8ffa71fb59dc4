package reprocess

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The reader, run bundle after bundle as a runner checkpoints it, reads
// every message once and in order, and keeps one consumer on the server
// rather than leaving one behind per bundle.
func TestReaderBundles(t *testing.T) {
	ctx := context.Background()
	url := MustStartNATS(t)
	nc, err := natsgo.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "READ", Subjects: []string{"read.>"}})
	if err != nil {
		t.Fatal(err)
	}
	fn := &readFn{URL: url, Stream: "READ", Subject: "read.x"}
	if err := fn.Setup(); err != nil {
		t.Fatal(err)
	}
	defer fn.Teardown()

	const bundles = 8
	var got []string
	rest := fn.CreateInitialRestriction(nil)
	for i := 0; i < bundles; i++ {
		// A message of another subject between ours is not read.
		for _, subj := range []string{"read.x", "read.y"} {
			if _, err := js.Publish(ctx, subj, []byte(fmt.Sprintf("%s %d", subj, i))); err != nil {
				t.Fatal(err)
			}
		}
		rt, err := fn.CreateTracker(rest)
		if err != nil {
			t.Fatal(err)
		}
		cont, err := fn.ProcessElement(ctx, &sdf.WallTimeWatermarkEstimator{}, rt, nil, func(_ beam.EventTime, b []byte) { got = append(got, string(b)) })
		if err != nil {
			t.Fatal(err)
		}
		if !cont.ShouldResume() {
			t.Fatalf("bundle %d: the reader stopped", i)
		}
		// The runner checkpoints: the residual is the next bundle's.
		_, residual, err := rt.TrySplit(0)
		if err != nil || residual == nil {
			t.Fatalf("bundle %d: checkpoint: %v %v", i, residual, err)
		}
		rest = residual.(offsetrange.Restriction)
	}
	if len(got) != bundles {
		t.Fatalf("read %d messages, want %d: %q", len(got), bundles, got)
	}
	for i, m := range got {
		if want := fmt.Sprintf("read.x %d", i); m != want {
			t.Errorf("message %d is %q, want %q", i, m, want)
		}
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One consumer, and the one a fetch replaced while its deletion is
	// on its way.
	if n := info.State.Consumers; n > 2 {
		t.Errorf("%d consumers on the stream after %d bundles, want at most 2", n, bundles)
	}
}
