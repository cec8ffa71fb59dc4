// Package sqlstore holds the little that the server SQL stores (postgres
// and mysql) share: the plan of an ingest batch's row writes, the text
// encodings of the JSON columns and a few helpers. Everything here is
// engine-neutral; each store turns it into its own SQL.
package sqlstore

import (
	"cmp"
	"slices"

	"github.com/crawlkeeper/crawlkeeper"
)

// Writes are the row changes of one ingest batch, coalesced per record so
// that each kind of change is one multi-row statement instead of one
// statement per item. Applying them in any order of kinds gives the same
// rows as the embedded store's item-by-item writes, because every record
// appears in at most one of the record lists (a revived record is in
// DeleteArchive and InsertActive).
type Writes struct {
	// InsertActive are new and revived records in their final state.
	InsertActive []*crawlkeeper.Record
	// UpdateActive are active records whose content changed: every
	// column an ingest can change is written.
	UpdateActive []*crawlkeeper.Record
	// TouchActive are active records delivered with unchanged content:
	// only last_updated_at, event_at and date_errors change.
	TouchActive []*crawlkeeper.Record
	// UpdateArchive and TouchArchive are the same for archived records
	// that stay archived (refreshed in the archive).
	UpdateArchive []*crawlkeeper.Record
	TouchArchive  []*crawlkeeper.Record
	// DeleteArchive are the ids of revived records leaving the archive.
	DeleteArchive []int64
	// History are the previous versions to keep, without those that the
	// history limit would trim at once. They replace any row with the
	// same (record_id, version).
	History []*crawlkeeper.HistoryEntry
	// TrimHistory deletes the versions that fell out of the history limit.
	TrimHistory []Trim
}

// Trim deletes the history of RecordID with version <= UpTo.
type Trim struct {
	RecordID int64
	UpTo     int64
}

// NewKeys returns how many distinct keys of items state does not hold:
// the number of ids a batch needs.
func NewKeys(items []*crawlkeeper.Prepared, state map[string]*crawlkeeper.Record) int {
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
func DistinctKeys(items []*crawlkeeper.Prepared) []string {
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

// Plan decides every item of b against the stored state of its key, with
// the domain's NewRecord and Merge exactly as the embedded store does, and
// returns the coalesced writes and the batch's result. state holds the
// stored record of each key found (archived ones with ArchivedAt set); ids
// are fresh ids in increasing order, at least NewKeys of them, handed to
// new keys in order of first appearance. state is not modified.
func Plan(b *crawlkeeper.IngestBatch, state map[string]*crawlkeeper.Record, ids []int64) (*Writes, *crawlkeeper.IngestResult) {
	res := &crawlkeeper.IngestResult{
		Outcomes: make([]crawlkeeper.Outcome, len(b.Items)),
		IDs:      make([]int64, len(b.Items)),
	}
	now := crawlkeeper.Truncate(b.Now)
	cur := make(map[string]*crawlkeeper.Record, len(state))
	for k, r := range state {
		cur[k] = r
	}
	var order []string // keys in order of first appearance
	seen := make(map[string]bool, len(b.Items))
	touched := map[int64]int{} // id → index in res.Touched
	touch := func(r *crawlkeeper.Record) {
		ref := crawlkeeper.RecordRef{ID: r.ID, Version: r.Version}
		if i, ok := touched[r.ID]; ok {
			res.Touched[i] = ref
			return
		}
		touched[r.ID] = len(res.Touched)
		res.Touched = append(res.Touched, ref)
	}
	var hist []*crawlkeeper.HistoryEntry
	for i, it := range b.Items {
		if !seen[it.Key] {
			seen[it.Key] = true
			order = append(order, it.Key)
		}
		r := cur[it.Key]
		switch {
		case r == nil:
			rec := crawlkeeper.NewRecord(it, now)
			rec.ID = ids[0]
			ids = ids[1:]
			cur[it.Key] = rec
			res.Outcomes[i] = crawlkeeper.OutcomeInserted
			touch(rec)

		case !r.Archived():
			next, h := crawlkeeper.Merge(r, it, now)
			if h != nil {
				hist = append(hist, h)
				res.Outcomes[i] = crawlkeeper.OutcomeChanged
				touch(next)
			} else {
				res.Outcomes[i] = crawlkeeper.OutcomeUnchanged
			}
			cur[it.Key] = next

		default:
			next, h := crawlkeeper.Merge(r, it, now)
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
				res.Outcomes[i] = crawlkeeper.OutcomeRefreshed
			} else {
				next.ArchivedAt = nil
				next.ArchiveReason = ""
				res.Outcomes[i] = crawlkeeper.OutcomeRevived
				touch(next)
			}
			cur[it.Key] = next
		}
		res.IDs[i] = cur[it.Key].ID
	}

	w := &Writes{}
	for _, k := range order {
		first, last := state[k], cur[k]
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
	for _, rs := range [][]*crawlkeeper.Record{w.InsertActive, w.UpdateActive, w.TouchActive, w.UpdateArchive, w.TouchArchive} {
		slices.SortFunc(rs, func(a, b *crawlkeeper.Record) int { return cmp.Compare(a.ID, b.ID) })
	}
	slices.Sort(w.DeleteArchive)
	w.History, w.TrimHistory = trimHistory(b, hist, cur)
	return w, res
}

// trimHistory applies the history limit of each record's source: the
// embedded store deletes versions <= v-limit after adding version v, so
// only the last new version of each record decides what goes.
func trimHistory(b *crawlkeeper.IngestBatch, hist []*crawlkeeper.HistoryEntry, cur map[string]*crawlkeeper.Record) ([]*crawlkeeper.HistoryEntry, []Trim) {
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
	var trims []Trim
	for _, id := range ids {
		limit := int64(b.HistoryLimitFor(source[id]))
		if limit > 0 && last[id] > limit {
			upTo[id] = last[id] - limit
			trims = append(trims, Trim{RecordID: id, UpTo: last[id] - limit})
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
