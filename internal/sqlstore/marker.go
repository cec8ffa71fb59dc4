package sqlstore

import (
	"sync/atomic"

	"github.com/crawlkeeper/crawlkeeper"
)

// Marker holds the crawlkeeper.TxMarker through which a server store's
// Ingest commits a batch's crawl marks with its records. It can be set
// while ingests run; the zero value holds none.
type Marker struct {
	p atomic.Pointer[markerBox]
}

type markerBox struct{ m crawlkeeper.TxMarker }

// Set makes m the marker of every later Ingest.
func (x *Marker) Set(m crawlkeeper.TxMarker) { x.p.Store(&markerBox{m: m}) }

// Get returns the marker, nil when none was set.
func (x *Marker) Get() crawlkeeper.TxMarker {
	if b := x.p.Load(); b != nil {
		return b.m
	}
	return nil
}
