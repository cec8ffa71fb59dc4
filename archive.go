package crawlkeeper

import (
	"context"
	"time"
)

// ArchiveStore is the part of Store that moves records between the active
// set and the archive.
type ArchiveStore interface {
	// SelectDue returns up to q.Limit active records that one rule makes
	// due, in (rule column, id) order after q.After, through that column's
	// index. Moving records does not disturb the pagination.
	SelectDue(ctx context.Context, q DueQuery) ([]DueRecord, error)
	// Archive moves each record to the archive only if its version and
	// last_updated_at still equal those in the move (it was not re-crawled
	// or changed since selection), keeping its id, timestamps and history.
	// It returns the ids moved; the others were left for the next pass.
	// Re-running a move that already happened is a no-op.
	Archive(ctx context.Context, moves []Move, now time.Time) ([]int64, error)
	// Restore moves archived records back to active unchanged and returns
	// the ids restored; ids that are not archived are skipped.
	Restore(ctx context.Context, ids []int64) ([]int64, error)
	// UpdateEvents writes re-read event fields of active records whose
	// version is unchanged and returns how many were written.
	UpdateEvents(ctx context.Context, updates []EventUpdate) (int, error)
	// ArchivedBefore returns up to limit archived records of source (all
	// sources when source is nil) archived before the time, in id order
	// after afterID, for retention.
	ArchivedBefore(ctx context.Context, source *string, before time.Time, afterID int64, limit int) ([]*Record, error)
	// Purge deletes archived records and their history for good, each
	// only while it is archived in the state given (the state that was
	// exported): the decision is PlanPurge's. Targets archived in another
	// state are reported as Changed and kept; targets no longer archived
	// are neither.
	Purge(ctx context.Context, targets []RecordState) (*PurgeResult, error)
	// ArchiveStats returns the archive's analytics per source: median
	// lifetime of archived records and content changes per week.
	ArchiveStats(ctx context.Context, now time.Time) (map[string]*SourceStats, error)
}

// DueRule is the column an archive selection walks.
type DueRule string

// Due rules and the column each selects on.
const (
	DueByAge   DueRule = "age"   // crawled_at <= cutoff
	DueByStale DueRule = "stale" // last_updated_at <= cutoff
	DueByEvent DueRule = "event" // event_at <= cutoff
)

// DueQuery selects active records that one rule makes due.
type DueQuery struct {
	Rule   DueRule
	Cutoff time.Time
	// Sources limits the selection to these sources; Exclude leaves these
	// out. Both empty selects every source.
	Sources []string
	Exclude []string
	// Except leaves out records that these rules make due too. A dry run
	// walks the rules one after another and counts each record under the
	// first rule that selects it without remembering what it saw: each
	// rule's selection excepts the rules walked before it.
	Except []DueCondition
	// After continues a previous page: the rule column's value and the id
	// of its last record.
	After *DueCursor
	Limit int
}

// DueCondition is one rule and its cutoff: the records whose rule column
// is at or before the cutoff.
type DueCondition struct {
	Rule   DueRule
	Cutoff time.Time
}

// DueCursor is the position of a SelectDue page.
type DueCursor struct {
	At time.Time
	ID int64
}

// DueRecord is what selection needs to move a record: its id and the
// state it was selected in. Selection reads nothing else, so a store can
// answer from a covering index without touching the records.
type DueRecord struct {
	ID            int64     `json:"id"`
	Version       int64     `json:"version"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
	// At is the rule column's value (crawled_at, last_updated_at or
	// event_at). It is only guaranteed on the last record of a page, for
	// the cursor; stores may leave it zero elsewhere.
	At time.Time `json:"at"`
}

// Cursor returns the position after d, to continue a selection.
func (d *DueRecord) Cursor() *DueCursor { return &DueCursor{At: d.At, ID: d.ID} }

// Move is one record to archive, with the state it was selected in.
type Move struct {
	ID            int64
	Version       int64
	LastUpdatedAt time.Time
	Reason        ArchiveReason
	// EventBefore, when set, is the cutoff of the event rule the record
	// was selected under: the move applies only while its event_at is
	// still at or before it. A re-read of the record's dates
	// (UpdateEvents) changes event_at without a new version, so the
	// state check alone would not see it.
	EventBefore *time.Time
}

// PurgeResult says what a Purge did.
type PurgeResult struct {
	// Purged are the ids deleted, Changed those kept because a crawl
	// refreshed or changed them after they were exported.
	Purged  []int64
	Changed []int64
}

// EventUpdate is a re-read of a record's event fields.
type EventUpdate struct {
	ID         int64
	Version    int64
	EventAt    *time.Time
	DateErrors []string
}

// DateErrorCounter is implemented by stores that keep the per-source
// counts of active records with date errors (SourceStats.ActiveDateErrors)
// up to date as records change, so that an archive pass reads them instead
// of counting the active table.
type DateErrorCounter interface {
	// ActiveDateErrors returns the counts by source; sources without
	// such records are absent.
	ActiveDateErrors(ctx context.Context) (map[string]int64, error)
	// RecountDateErrors rebuilds the counts from the active records. It
	// is a repair for counts that check finds wrong, for a store no
	// process writes to meanwhile.
	RecountDateErrors(ctx context.Context) error
}
