package crawlkeeper

import "time"

// MarkKind is the state a crawl-round mark records for a target.
type MarkKind string

// Mark kinds.
const (
	MarkQueued MarkKind = "queued"
	MarkDone   MarkKind = "done"
	MarkFailed MarkKind = "failed"
)

// Mark records that a target reached a state in a round at a time.
type Mark struct {
	Round  string
	Target string
	Kind   MarkKind
	At     time.Time
}

// MarksFromItems returns the done marks implied by prepared items that
// carry both a target and a round, one per distinct (round, target).
// Items whose target is not a valid name (ValidateTarget) imply no mark:
// a bad _target must not stop the ingest of its batch.
func MarksFromItems(items []*Prepared, at time.Time) []Mark {
	var marks []Mark
	seen := map[[2]string]bool{}
	for _, it := range items {
		if it == nil || it.Target == "" || it.Round == "" || ValidateTarget(it.Target) != nil {
			continue
		}
		k := [2]string{it.Round, it.Target}
		if seen[k] {
			continue
		}
		seen[k] = true
		marks = append(marks, Mark{Round: it.Round, Target: it.Target, Kind: MarkDone, At: at})
	}
	return marks
}
