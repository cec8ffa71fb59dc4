package reprocess

import (
	"sync/atomic"
	"time"
)

// Before Run cancels a job on the in-process Prism, it quiesces the
// process's scan: the SDK harness of Beam v2.77.0 reads a data stream
// from two goroutines when the stream breaks under a bundle that is still
// writing (harness/datamgr.go, dataWriter.send), and cancelling a job
// breaks the streams of the bundles in flight. The scan's bundles are the
// long ones; with none in flight, the cancel finds nothing writing.
var (
	// quiescing makes scan bundles end at once, resuming later.
	quiescing atomic.Bool
	// scansInFlight counts scan ProcessElement calls running.
	scansInFlight atomic.Int64
)

// quiesceWait bounds how long Run waits for the scan bundles to end
// before cancelling anyway, and quiesceSettle is the time it leaves a
// bundle that ended to flush its output and report.
const (
	quiesceWait   = 10 * time.Second
	quiesceSettle = 200 * time.Millisecond
)

// quiesce makes the process's scan bundles end and waits until none runs,
// at most quiesceWait; the caller calls the returned function once the
// job is cancelled.
func quiesce() (resume func()) {
	quiescing.Store(true)
	deadline := time.Now().Add(quiesceWait)
	for scansInFlight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(quiesceSettle)
	return func() { quiescing.Store(false) }
}
