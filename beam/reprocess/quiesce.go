package reprocess

import (
	"sync/atomic"
	"time"
)

// Before Run cancels a job on the in-process Prism, it quiesces the
// process's DoFns: the readers (the scan and the notification reader)
// park their bundles, and Run waits until no DoFn of the pipeline has run
// for a moment. The SDK harness of Beam v2.77.0 has races on the way
// down that the race detector reports when workers run in the process
// (loopback): a bundle that is still writing when the cancel breaks its
// data stream reads the stream from two goroutines (harness/datamgr.go,
// dataWriter.send), and a bundle that finishes as its worker stops sends
// its response on a channel the worker closes (harness.go). With the
// readers parked no new work enters the pipeline, and once every DoFn
// has been idle for quiesceSettle the bundles have reported.
var (
	// quiescing makes reader bundles end at once, resuming later.
	quiescing atomic.Bool
	// inFlight counts the pipeline's ProcessElement calls running, and
	// lastDone is when one last ended (Unix ns).
	inFlight atomic.Int64
	lastDone atomic.Int64
)

// quiesceWait bounds how long Run waits for the pipeline to be idle
// before cancelling anyway, and quiesceSettle is how long every DoFn must
// have been idle. A quiesced reader's bundle resumes after quiescePark:
// long enough for the cancel (cancelJob waits at most a minute), short
// enough that a job whose cancel failed is not left without readers for
// long.
//
// The flag is the process's: a process runs one in-process job at a time
// (crawlkeeper-beam, the tests).
const (
	quiesceWait   = 10 * time.Second
	quiesceSettle = 300 * time.Millisecond
	quiescePark   = time.Minute
)

// running marks a ProcessElement call; defer the returned function.
func running() (done func()) {
	inFlight.Add(1)
	return func() {
		lastDone.Store(time.Now().UnixNano())
		inFlight.Add(-1)
	}
}

// quiesce parks the process's reader bundles and waits until no DoFn has
// run for quiesceSettle, at most quiesceWait; the caller calls the
// returned function once the job is cancelled.
func quiesce() (resume func()) {
	quiescing.Store(true)
	deadline := time.Now().Add(quiesceWait)
	for time.Now().Before(deadline) {
		if inFlight.Load() == 0 && time.Since(time.Unix(0, lastDone.Load())) >= quiesceSettle {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func() { quiescing.Store(false) }
}
