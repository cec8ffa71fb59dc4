package crawlkeeper

import (
	"cmp"
	"slices"
)

// The ingest decision, written once: every store loads the stored state of
// a batch's keys, calls PlanIngest, and executes the writes it returns in
// its own way (prepared statements, multi-row statements, bulk writes). No
// store decides inserts, changes, refreshes or revivals by itself.

// IngestWrites are the row changes of one ingest batch, coalesced per
// record so that each kind of change can be one multi-row statement
// instead of one statement per item. Applying them in any order of kinds
// gives the same rows, because every record appears in at most one of the
// record lists (a revived record is in DeleteArchive and InsertActive).
type IngestWrites struct {
	// InsertActive are new and revived records in their final state.
	InsertActive []*Record
	// UpdateActive are active records whose content changed: every
	// column an ingest can change is written.
	UpdateActive []*Record
	// TouchActive are active records delivered with unchanged content:
	// only last_updated_at, event_at, date_errors, last_round and
	// last_target change.
	TouchActive []*Record
	// UpdateArchive and TouchArchive are the same for archived records
	// that stay archived (refreshed in the archive).
	UpdateArchive []*Record
	TouchArchive  []*Record
	// DeleteArchive are the ids of revived records leaving the archive.
	DeleteArchive []int64
	// History are the previous versions to keep, without those that the
	// history limit would trim at once. They replace any row with the
	// same (record_id, version).
	History []*HistoryEntry
	// TrimHistory deletes the versions that fell out of the history limit.
	TrimHistory []HistoryTrim
	// Deliveries are the batch's additions to the per-source delivery
	// counters (SourceStats.Deliveries), in source order. Stores add them
	// in the same transaction as the records, so the counters are as
	// durable as the records; a batch applied again after a failure is
	// counted again.
	Deliveries []DeliveryCount
	// ActiveDateErrors are the batch's changes to the per-source counts of
	// active records with date errors (SourceStats.ActiveDateErrors), in
	// source order, sources without a change left out. Stores that keep
	// the counts add them in the same transaction as the records, so an
	// archive pass reads them instead of counting the active table.
	ActiveDateErrors []SourceCount
}

// SourceCount is a number for one source.
type SourceCount struct {
	Source string `json:"source"`
	N      int64  `json:"n"`
}

// DateErrorCounts adds, per source, delta for each record whose date
// errors are counted (active records with any), and returns the non-zero
// sums in source order. Stores use it for every change to what is counted:
// a record that leaves the active set, enters it, or gains or loses date
// errors.
type DateErrorCounts map[string]int64

// Add counts r (active, with date errors) with delta; other records do
// not count.
func (c DateErrorCounts) Add(r *Record, delta int64) {
	if r != nil && !r.Archived() && len(r.DateErrors) > 0 {
		c[r.Source] += delta
	}
}

// AddSource counts delta for a record of source whose date errors count.
func (c DateErrorCounts) AddSource(source string, delta int64) { c[source] += delta }

// List returns the non-zero counts in source order.
func (c DateErrorCounts) List() []SourceCount {
	var out []SourceCount
	for src, n := range c {
		if n != 0 {
			out = append(out, SourceCount{Source: src, N: n})
		}
	}
	slices.SortFunc(out, func(a, b SourceCount) int { return cmp.Compare(a.Source, b.Source) })
	return out
}

// DeliveryCount is a number of deliveries of one source, and how many of
// them went to an existing record.
type DeliveryCount struct {
	Source     string `json:"source"`
	Deliveries int64  `json:"deliveries"`
	Duplicates int64  `json:"duplicates"`
}

// HistoryTrim deletes the history of RecordID with version <= UpTo.
type HistoryTrim struct {
	RecordID int64
	UpTo     int64
}

// NewKeyCount returns how many distinct keys of items state does not hold:
// the number of ids a batch needs.
func NewKeyCount(items []*Prepared, state map[string]*Record) int {
	seen := make(map[string]bool, len(items))
	n := 0
	for _, it := range items {
		if state[it.Key] == nil && !seen[it.Key] {
			seen[it.Key] = true
			n++
		}
	}
	return n
}

// DistinctKeys returns the distinct keys of items in order of first
// appearance.
func DistinctKeys(items []*Prepared) []string {
	seen := make(map[string]bool, len(items))
	keys := make([]string, 0, len(items))
	for _, it := range items {
		if !seen[it.Key] {
			seen[it.Key] = true
			keys = append(keys, it.Key)
		}
	}
	return keys
}

// PlanIngest decides every item of b in order against the stored state of
// its key with NewRecord and Merge, and returns the coalesced writes and the
// batch's result. state holds the
// stored record of each key found (archived ones with ArchivedAt set); ids
// are fresh ids in increasing order, at least NewKeys of them, handed to
// new keys in order of first appearance. state is not modified.
func PlanIngest(b *IngestBatch, state map[string]*Record, ids []int64) (*IngestWrites, *IngestResult) {
	res := &IngestResult{
		Outcomes: make([]Outcome, len(b.Items)),
		IDs:      make([]int64, len(b.Items)),
	}
	now := Truncate(b.Now)
	cur := make(map[string]*Record, len(state))
	for k, r := range state {
		cur[k] = r
	}
	var order []string // keys in order of first appearance
	seen := make(map[string]bool, len(b.Items))
	touched := map[int64]int{} // id → index in res.Touched
	touch := func(r *Record) {
		ref := RecordRef{ID: r.ID, Version: r.Version}
		if i, ok := touched[r.ID]; ok {
			res.Touched[i] = ref
			return
		}
		touched[r.ID] = len(res.Touched)
		res.Touched = append(res.Touched, ref)
	}
	var hist []*HistoryEntry
	for i, it := range b.Items {
		if !seen[it.Key] {
			seen[it.Key] = true
			order = append(order, it.Key)
		}
		r := cur[it.Key]
		switch {
		case r == nil:
			rec := NewRecord(it, now)
			rec.ID = ids[0]
			ids = ids[1:]
			cur[it.Key] = rec
			res.Outcomes[i] = OutcomeInserted
			touch(rec)

		case !r.Archived():
			next, h := Merge(r, it, now)
			if h != nil {
				hist = append(hist, h)
				res.Outcomes[i] = OutcomeChanged
				touch(next)
			} else {
				res.Outcomes[i] = OutcomeUnchanged
			}
			cur[it.Key] = next

		default:
			next, h := Merge(r, it, now)
			due := false
			if b.Due != nil {
				_, due = b.Due(next)
			}
			if h != nil {
				hist = append(hist, h)
			}
			if due {
				// Still expired by the rules: refresh the archived copy and
				// keep when and why it was archived.
				res.Outcomes[i] = OutcomeRefreshed
			} else {
				next.Reactivate()
				res.Outcomes[i] = OutcomeRevived
				touch(next)
			}
			cur[it.Key] = next
		}
		res.IDs[i] = cur[it.Key].ID
	}

	w := &IngestWrites{}
	errs := DateErrorCounts{}
	for _, k := range order {
		first, last := state[k], cur[k]
		errs.Add(first, -1)
		errs.Add(last, 1)
		switch {
		case first == nil:
			w.InsertActive = append(w.InsertActive, last)
		case !first.Archived() && last.Version != first.Version:
			w.UpdateActive = append(w.UpdateActive, last)
		case !first.Archived():
			w.TouchActive = append(w.TouchActive, last)
		case !last.Archived():
			w.DeleteArchive = append(w.DeleteArchive, last.ID)
			w.InsertActive = append(w.InsertActive, last)
		case last.Version != first.Version:
			w.UpdateArchive = append(w.UpdateArchive, last)
		default:
			w.TouchArchive = append(w.TouchArchive, last)
		}
	}
	// Rows are written in id order, the order in which version-checked
	// writers (processing results) lock them, so the two rarely deadlock.
	for _, rs := range [][]*Record{w.InsertActive, w.UpdateActive, w.TouchActive, w.UpdateArchive, w.TouchArchive} {
		slices.SortFunc(rs, func(a, b *Record) int { return cmp.Compare(a.ID, b.ID) })
	}
	slices.Sort(w.DeleteArchive)
	w.History, w.TrimHistory = trimHistory(b, hist, cur)
	w.Deliveries = countDeliveries(b.Items, res.Outcomes)
	w.ActiveDateErrors = errs.List()
	return w, res
}

// countDeliveries counts the items of a batch per source, and those that
// did not insert a record: duplicates of a stored record or of an earlier
// item of the batch.
func countDeliveries(items []*Prepared, outcomes []Outcome) []DeliveryCount {
	var out []DeliveryCount
	at := map[string]int{}
	for i, it := range items {
		j, ok := at[it.Source]
		if !ok {
			j = len(out)
			at[it.Source] = j
			out = append(out, DeliveryCount{Source: it.Source})
		}
		out[j].Deliveries++
		if outcomes[i] != OutcomeInserted {
			out[j].Duplicates++
		}
	}
	slices.SortFunc(out, func(a, b DeliveryCount) int { return cmp.Compare(a.Source, b.Source) })
	return out
}

// trimHistory applies the history limit of each record's source: the
// embedded store deletes versions <= v-limit after adding version v, so
// only the last new version of each record decides what goes.
func trimHistory(b *IngestBatch, hist []*HistoryEntry, cur map[string]*Record) ([]*HistoryEntry, []HistoryTrim) {
	if len(hist) == 0 {
		return nil, nil
	}
	source := make(map[int64]string, len(cur))
	for _, r := range cur {
		source[r.ID] = r.Source
	}
	last := map[int64]int64{}
	var ids []int64
	for _, h := range hist {
		if _, ok := last[h.RecordID]; !ok {
			ids = append(ids, h.RecordID)
		}
		last[h.RecordID] = max(last[h.RecordID], h.Version)
	}
	upTo := map[int64]int64{}
	var trims []HistoryTrim
	for _, id := range ids {
		limit := int64(b.HistoryLimitFor(source[id]))
		if limit > 0 && last[id] > limit {
			upTo[id] = last[id] - limit
			trims = append(trims, HistoryTrim{RecordID: id, UpTo: last[id] - limit})
		}
	}
	keep := hist[:0:0]
	for _, h := range hist {
		if u, ok := upTo[h.RecordID]; ok && h.Version <= u {
			continue
		}
		keep = append(keep, h)
	}
	return keep, trims
}
