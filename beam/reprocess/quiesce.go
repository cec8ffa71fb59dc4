package reprocess

import (
	"sync/atomic"
	"time"
)

// Before Run cancels a job on the in-process Prism, it quiesces the
// process's readers (the scan and the notification reader): the SDK
// harness of Beam v2.77.0 reads a data stream from two goroutines when
// the stream breaks under a bundle that is still writing
// (harness/datamgr.go, dataWriter.send), and cancelling a job breaks the
// streams of the bundles in flight. The readers' bundles are the long
// ones; with none in flight, the cancel finds nothing writing.
var (
	// quiescing makes reader bundles end at once, resuming later.
	quiescing atomic.Bool
	// bundlesInFlight counts reader ProcessElement calls running.
	bundlesInFlight atomic.Int64
)

// quiesceWait bounds how long Run waits for the scan bundles to end
// before cancelling anyway, and quiesceSettle is the time it leaves a
// bundle that ended to flush its output and report.
// A quiesced reader's bundle resumes after quiescePark: long enough for
// the cancel (cancelJob waits at most a minute), short enough that a
// job whose cancel failed is not left without readers for long.
//
// The flag is the process's: a process runs one in-process job at a time
// (crawlkeeper-beam, the tests). Write-stage bundles are not quiesced;
// they are short, and those still running when the cancel comes are the
// remaining window for the harness's race.
const (
	quiesceWait   = 10 * time.Second
	quiesceSettle = 200 * time.Millisecond
	quiescePark   = time.Minute
)

// quiesce makes the process's reader bundles end and waits until none runs,
// at most quiesceWait; the caller calls the returned function once the
// job is cancelled.
func quiesce() (resume func()) {
	quiescing.Store(true)
	deadline := time.Now().Add(quiesceWait)
	for bundlesInFlight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(quiesceSettle)
	return func() { quiescing.Store(false) }
}
