package pipeline

import (
	"bytes"
	"slices"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// unchanged reports whether writing w would leave r's stored result as it
// is: r was processed at its version by the same chain, into the same
// derived value, and (when w sets them) the same event fields. Only
// processed_at would move, and a pass's checkpoint says that instead.
func unchanged(r *crawlkeeper.Record, w *crawlkeeper.ProcessedWrite) bool {
	if r.ProcessedAt == nil || r.ProcessedVersion != r.Version || w.Version != r.Version || r.ProcessedChain != w.Chain {
		return false
	}
	if !bytes.Equal(r.Derived, w.Derived) {
		return false
	}
	if w.SetEvent && (!sameTime(r.EventAt, w.EventAt) || !slices.Equal(r.DateErrors, w.DateErrors)) {
		return false
	}
	return true
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return crawlkeeper.Truncate(*a).Equal(crawlkeeper.Truncate(*b))
}
