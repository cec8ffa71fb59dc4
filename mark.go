package crawlkeeper

import (
	"strings"
	"time"
	"unicode/utf8"
)

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
	// Reason says why a failed mark failed ("HTTP 503", "timeout"), as the
	// crawler reported it; empty when it sent none. Monitors keep the
	// latest reason of each target in each round, cut to MaxReasonBytes.
	// Only failed marks carry one.
	Reason string
}

// MaxReasonBytes bounds a failure reason: a reason is a short message for
// an operator deciding what to re-queue, not a log.
const MaxReasonBytes = 200

// CleanReason makes a crawler's failure reason fit for keeping and
// printing one per line: white space (newlines and tabs included) is
// collapsed to single spaces, other control characters are dropped, and
// the text is cut to MaxReasonBytes on a character boundary.
func CleanReason(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			r = '?'
		case r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f':
			space = b.Len() > 0
			continue
		case r < 0x20 || r == 0x7f:
			continue
		}
		n := utf8.RuneLen(r)
		if space {
			n++
		}
		if b.Len()+n > MaxReasonBytes {
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MarksFromItems returns the marks implied by prepared items that carry
// both a target and a round, one per distinct (round, target, kind): done
// for an item, failed with its reason for an item that carries _error.
// Items whose target is not a valid name (ValidateTarget) imply no mark: a
// bad _target must not stop the ingest of its batch.
func MarksFromItems(items []*Prepared, at time.Time) []Mark {
	var marks []Mark
	seen := map[[3]string]int{}
	for _, it := range items {
		if it == nil || it.Target == "" || it.Round == "" || ValidateTarget(it.Target) != nil {
			continue
		}
		kind := MarkDone
		if it.Error != "" {
			kind = MarkFailed
		}
		k := [3]string{it.Round, it.Target, string(kind)}
		if i, ok := seen[k]; ok {
			// The last reason of a batch is the latest one.
			marks[i].Reason = CleanReason(it.Error)
			continue
		}
		seen[k] = len(marks)
		marks = append(marks, Mark{Round: it.Round, Target: it.Target, Kind: kind, At: at, Reason: CleanReason(it.Error)})
	}
	return marks
}
