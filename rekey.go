package crawlkeeper

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Re-keying applies changed key rules to stored records (docs/KEYS.md):
// every key is recomputed from the stored item under the current policy
// of its source, and records whose keys now collide are merged into one.
// The decisions are made here, once; a store only applies them, each
// conditioned on the state the decision was made on (RekeyStore).

// RekeyJournal is the journal kind of one applied merge; RekeyRunJournal
// is the kind of a completed run's summary.
const (
	RekeyJournal    = "rekey_merge"
	RekeyRunJournal = "rekey_run"
)

// RekeyStore is the role that rewrites keys and merges records that
// collide under new key rules. Both methods are conditioned on the state
// each record was read in, so a record re-crawled or changed meanwhile is
// left for the next run, and rerunning after a crash converges.
type RekeyStore interface {
	// RewriteKeys gives each record its new key and key parts, only while
	// it is in the table (active or archive) and state of the change and
	// no other record holds the new key, in one transaction where the
	// engine has them. It returns the ids rewritten; a change left out
	// (its record changed, or a delivery under the new rules created a
	// record with the new key since the decision) is decided again by the
	// next run.
	RewriteKeys(ctx context.Context, changes []KeyChange) ([]int64, error)
	// MergeRecords applies merges (PlanRekeyMerge) of disjoint groups:
	// for each, the survivor is written in its final state to the table
	// its ArchivedAt names, the other records and every history entry of
	// the group are replaced by the merged history, and the merge is
	// journaled (RekeyJournal), all only while every record of the group
	// is still in the state of m.From and no record outside the group
	// holds the survivor's key. It reports, per merge, whether it was
	// applied (a merge whose group changed, or whose key a delivery took
	// meanwhile, writes nothing). A merge across sources is refused with
	// EINVALID before anything is written (RekeyMerge.Validate). Where the
	// engine has transactions all merges are one transaction; otherwise
	// each merge completes itself after a crash (an intent written first):
	// a later call of MergeRecords, RewriteKeys or Check rolls it forward.
	MergeRecords(ctx context.Context, ms []*RekeyMerge) ([]bool, error)
}

// KeyChange is the new key of one record.
type KeyChange struct {
	State    RecordState `json:"state"`
	Archived bool        `json:"archived"`
	Key      string      `json:"key"`
	KeyParts []string    `json:"key_parts"`
}

// MergeSource is one record of a merge group in the state it was read in.
type MergeSource struct {
	State    RecordState `json:"state"`
	Archived bool        `json:"archived"`
	Key      string      `json:"key"`
	// Source is the record's source: every record of a group has the
	// survivor's (see RekeyMerge.Validate).
	Source string `json:"source"`
}

// RekeyMerge is one merge of records whose keys collide.
type RekeyMerge struct {
	// Survivor is the merged record in its final state: the id, key and
	// table it keeps.
	Survivor *Record
	// From are the records of the group (the survivor's earlier state
	// among them), in the state the merge was decided on.
	From []MergeSource
	// History is the survivor's complete history after the merge: every
	// kept version of every record of the group, oldest first, numbered
	// up to Survivor.Version-1.
	History []HistoryEntry
	// At is when the merge was decided, for the journal.
	At time.Time
}

// Validate checks that the merge stays within one source: a key belongs to
// its source, so records of two sources (the empty name and names that
// differ only in case or white space included) are never one record.
// Stores refuse a merge that fails it with EINVALID, before writing
// anything.
func (m *RekeyMerge) Validate() error {
	for _, f := range m.From {
		if f.Source != m.Survivor.Source {
			return Errorf(EINVALID, "merge into record %d: record %d is of source %q, the survivor of %q; a merge never crosses sources",
				m.Survivor.ID, f.State.ID, f.Source, m.Survivor.Source)
		}
	}
	return nil
}

// Deleted returns the ids of the group that the merge deletes.
func (m *RekeyMerge) Deleted() []int64 {
	var out []int64
	for _, f := range m.From {
		if f.State.ID != m.Survivor.ID {
			out = append(out, f.State.ID)
		}
	}
	return out
}

// IDs returns the ids of every record of the group.
func (m *RekeyMerge) IDs() []int64 {
	out := make([]int64, len(m.From))
	for i, f := range m.From {
		out[i] = f.State.ID
	}
	return out
}

// Holds reports whether every record of the group is still as the merge
// saw it: current returns a record's table, version and last_updated_at.
func (m *RekeyMerge) Holds(current func(id int64) (archived bool, version int64, lastUpdatedAt time.Time, ok bool)) bool {
	for _, f := range m.From {
		archived, v, at, ok := current(f.State.ID)
		if !ok || archived != f.Archived || !f.State.Holds(v, at) {
			return false
		}
	}
	return true
}

// MergeJournalEntry is the journal body of one merge.
type MergeJournalEntry struct {
	Survivor int64    `json:"survivor"`
	Merged   []int64  `json:"merged"`
	Source   string   `json:"source"`
	Key      string   `json:"key"`
	KeyParts []string `json:"key_parts"`
	// OldKeys are the keys the group's records had, by id.
	OldKeys  map[int64]string `json:"old_keys"`
	Archived bool             `json:"archived"`
	Version  int64            `json:"version"`
}

// JournalBody returns the journal entry of the merge.
func (m *RekeyMerge) JournalBody() json.RawMessage {
	e := MergeJournalEntry{
		Survivor: m.Survivor.ID, Merged: m.Deleted(), Source: m.Survivor.Source, Key: m.Survivor.Key,
		KeyParts: m.Survivor.KeyParts, OldKeys: map[int64]string{}, Archived: m.Survivor.Archived(), Version: m.Survivor.Version,
	}
	for _, f := range m.From {
		e.OldKeys[f.State.ID] = f.Key
	}
	b, _ := json.Marshal(e)
	return b
}

// PlanRekeyMerge merges recs (two or more records of one source whose keys
// are now key) into one, with hist holding each record's kept history:
//
//   - the survivor keeps the smallest id (the record stored first);
//   - crawled_at is the earliest of the group, last_updated_at the latest;
//   - last_round and last_target are those of the most recently delivered
//     record of the group that has one (the latest last_updated_at, then
//     the highest id), each on its own, as a delivery without them keeps
//     the previous ones;
//   - the content (item, title, url, event and processing state) is the
//     newest one: the latest last_changed_at, then the latest
//     last_updated_at, then the highest id;
//   - every other version goes into the survivor's history: each record's
//     kept history and the current item of the others (unless it is the
//     surviving item byte for byte: the URL a crawler sent is kept even
//     when the content hash, which leaves key fields out, is the same),
//     ordered by when each became current, and
//     numbered so that the kept versions stay contiguous below the new
//     version, which is the sum of the group's versions (so it never moves
//     backwards and processors see the record as due);
//   - the survivor is active when any record of the group is active (a
//     crawler still delivers the page; the next archive pass applies the
//     rules to the merged record), archived otherwise, keeping the latest
//     archived_at and its reason.
func PlanRekeyMerge(recs []*Record, hist map[int64][]HistoryEntry, key string, parts []string, at time.Time) *RekeyMerge {
	byID := slices.Clone(recs)
	slices.SortFunc(byID, func(a, b *Record) int { return cmp.Compare(a.ID, b.ID) })
	winner := byID[0]
	for _, r := range byID[1:] {
		if c := cmp.Or(r.LastChangedAt.Compare(winner.LastChangedAt), r.LastUpdatedAt.Compare(winner.LastUpdatedAt)); c >= 0 {
			winner = r
		}
	}
	s := winner.Clone()
	s.ID, s.Key, s.KeyParts = byID[0].ID, key, slices.Clone(parts)
	var version int64
	var lastArchived *Record
	active := false
	m := &RekeyMerge{At: Truncate(at)}
	var roundAt, targetAt time.Time
	s.LastRound, s.LastTarget = "", ""
	type entry struct {
		h        HistoryEntry
		from     int64
		fromVers int64
	}
	var entries []entry
	// Every record's deliveries observed the one page: the survivor
	// counts them all.
	s.Fetches = nil
	for _, r := range byID {
		if r.Fetches != nil {
			if s.Fetches == nil {
				s.Fetches = &FetchCounts{}
			}
			s.Fetches.Refetches += r.Fetches.Refetches
			s.Fetches.Changes += r.Fetches.Changes
			s.Fetches.ChangedUS += r.Fetches.ChangedUS
			s.Fetches.UnchangedUS += r.Fetches.UnchangedUS
			s.Fetches.ChangedLog += r.Fetches.ChangedLog
		}
	}
	for _, r := range byID {
		version += r.Version
		if r.CrawledAt.Before(s.CrawledAt) {
			s.CrawledAt = r.CrawledAt
		}
		if r.LastUpdatedAt.After(s.LastUpdatedAt) {
			s.LastUpdatedAt = r.LastUpdatedAt
		}
		// byID is in id order, so on equal times the higher id wins.
		if r.LastRound != "" && !r.LastUpdatedAt.Before(roundAt) {
			s.LastRound, roundAt = r.LastRound, r.LastUpdatedAt
		}
		if r.LastTarget != "" && !r.LastUpdatedAt.Before(targetAt) {
			s.LastTarget, targetAt = r.LastTarget, r.LastUpdatedAt
		}
		if r.Archived() {
			if lastArchived == nil || r.ArchivedAt.After(*lastArchived.ArchivedAt) {
				lastArchived = r
			}
		} else {
			active = true
		}
		m.From = append(m.From, MergeSource{State: StateOf(r), Archived: r.Archived(), Key: r.Key, Source: r.Source})
		for _, h := range hist[r.ID] {
			if h.Version >= r.Version {
				continue // an entry a crashed change left behind (MongoDB)
			}
			entries = append(entries, entry{h: h, from: r.ID, fromVers: h.Version})
		}
		if r != winner && !bytes.Equal(r.Item, winner.Item) {
			to := r.LastUpdatedAt
			if to.Before(r.LastChangedAt) {
				to = r.LastChangedAt
			}
			entries = append(entries, entry{h: HistoryEntry{Item: r.Item, ContentHash: r.ContentHash, ValidFrom: r.LastChangedAt, ValidTo: to}, from: r.ID, fromVers: r.Version})
		}
	}
	slices.SortStableFunc(entries, func(a, b entry) int {
		return cmp.Or(a.h.ValidFrom.Compare(b.h.ValidFrom), a.h.ValidTo.Compare(b.h.ValidTo), cmp.Compare(a.from, b.from), cmp.Compare(a.fromVers, b.fromVers))
	})
	s.Version = version
	first := version - int64(len(entries))
	for i, e := range entries {
		h := e.h
		h.RecordID, h.Version = s.ID, first+int64(i)
		h.Item = slices.Clone(h.Item)
		m.History = append(m.History, h)
	}
	if active {
		s.ArchivedAt, s.ArchiveReason = nil, ""
	} else {
		s.ArchivedAt, s.ArchiveReason = cloneTime(lastArchived.ArchivedAt), lastArchived.ArchiveReason
	}
	m.Survivor = s
	return m
}

// RekeyBackend is what a rekey run needs of a store.
type RekeyBackend interface {
	RecordStore
	StateStore
	RekeyStore
}

// Rekeyer recomputes every stored key under the current key rules and
// merges the records whose keys collide. Records are read in pages in id
// order (active, then archive), and a collision is found by looking the
// new key up in the store's key index, so memory stays bounded by the
// page size (a dry run also remembers the keys it would change, as it
// cannot look them up). A run that completes for a source records the
// source's fingerprint (RecordKeyRules), so ingest stops warning.
type Rekeyer struct {
	Store  RekeyBackend
	Config *Config
	// Sources limits the run to these sources (the empty string is the
	// empty source name); nil runs every source that has records.
	Sources []string
	// DryRun reports what would be re-keyed and merged, writing nothing.
	DryRun bool
	// PageSize is how many records are read and re-keyed at once.
	// Defaults to 500.
	PageSize int
	// Now is the clock of journal entries. Defaults to time.Now.
	Now func() time.Time
	// Progress, when set, receives the running totals after every page.
	Progress func(RekeyReport)
	// OnMerge, when set, receives each merge (decided, in a dry run).
	OnMerge func(MergeJournalEntry)
}

// RekeyReport counts what a run did (or would do, in a dry run).
type RekeyReport struct {
	DryRun bool `json:"dry_run"`
	// Sources are the sources the run covered.
	Sources []string `json:"sources"`
	// Scanned records, Rekeyed (given a new key and no merge), Merged
	// (records deleted into a survivor), Merges (groups merged: a group of
	// three records is one merge of two records), Skipped (re-crawled or
	// changed during the run: a rerun covers them), Unreadable (stored
	// items that could not be decoded; they keep their keys).
	Scanned    int64 `json:"scanned"`
	Rekeyed    int64 `json:"rekeyed"`
	Merges     int64 `json:"merges"`
	Merged     int64 `json:"merged"`
	Skipped    int64 `json:"skipped"`
	Unreadable int64 `json:"unreadable"`
	// Total is how many records the run had to scan (the stores' counts
	// at the start), for progress.
	Total int64 `json:"total"`
	// Fingerprints are the fingerprints recorded, by source; a source is
	// absent when records were skipped (run again) or in a dry run.
	Fingerprints map[string]string `json:"fingerprints,omitempty"`
	Elapsed      time.Duration     `json:"elapsed_ns"`
}

// Run re-keys the store. It stops at the first store error; what was
// applied stays applied, and running again continues the work.
func (k *Rekeyer) Run(ctx context.Context) (*RekeyReport, error) {
	start := time.Now()
	rep := &RekeyReport{DryRun: k.DryRun, Fingerprints: map[string]string{}}
	st, err := k.Store.Stats(ctx)
	if err != nil {
		return nil, err
	}
	if k.Sources != nil {
		rep.Sources = slices.Compact(slices.Sorted(slices.Values(k.Sources)))
		for _, src := range rep.Sources {
			if ss := st.Sources[src]; ss != nil {
				rep.Total += ss.Active + ss.Archived
			}
		}
	} else {
		rep.Sources = slices.Sorted(maps.Keys(st.Sources))
		rep.Total = st.Active + st.Archived
	}
	run := &rekeyRun{k: k, rep: rep, ctx: ctx}
	if k.DryRun {
		run.dry = &dryState{keys: map[string]int64{}, moved: map[int64]string{}, gone: map[int64]bool{}}
	}
	for _, src := range rep.Sources {
		p, err := k.config().Policy(src)
		if err != nil {
			return rep, err
		}
		skipped := rep.Skipped + rep.Unreadable
		for _, archived := range []bool{false, true} {
			if err := run.source(p, archived); err != nil {
				return rep, err
			}
		}
		if !k.DryRun && rep.Skipped+rep.Unreadable == skipped {
			fp := p.KeyRulesFingerprint()
			if err := RecordKeyRules(ctx, k.Store, src, fp); err != nil {
				return rep, err
			}
			rep.Fingerprints[src] = fp
		}
	}
	rep.Elapsed = time.Since(start)
	if !k.DryRun {
		body, _ := json.Marshal(rep)
		if err := k.Store.AppendJournal(ctx, RekeyRunJournal, k.now(), body); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func (k *Rekeyer) config() *Config {
	if k.Config == nil {
		return &Config{}
	}
	return k.Config
}

func (k *Rekeyer) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

// rekeyRun is the state of one run.
type rekeyRun struct {
	k   *Rekeyer
	rep *RekeyReport
	ctx context.Context
	p   *SourcePolicy
	// pending are key changes without a collision, and merges, written in
	// one call each at the end of a page or before anything looks at their
	// keys or records (pendingKeys, pendingIDs).
	pending       map[string]KeyChange
	pendingRecs   map[string]*Record // the record of each pending key change
	pendingMerges []*RekeyMerge
	pendingKeys   map[string]bool
	pendingIDs    map[int64]bool
	// touched are the ids of this page merged or re-keyed early; their
	// copies in the page are stale and are read again.
	touched map[int64]bool
	dry     *dryState
}

// dryState stands in for the writes a dry run does not make: the new key
// of every record it would re-key, and the records it would merge away.
type dryState struct {
	keys  map[string]int64
	moved map[int64]string
	gone  map[int64]bool
}

func (r *rekeyRun) pageSize() int {
	if r.k.PageSize > 0 {
		return r.k.PageSize
	}
	return 500
}

// source re-keys the active or archived records of one source.
func (r *rekeyRun) source(p *SourcePolicy, archived bool) error {
	r.p = p
	cursor := ""
	for {
		page, err := r.k.Store.List(r.ctx, RecordQuery{Archived: archived, Source: p.Source, ExactSource: true, Order: OrderID, Limit: r.pageSize(), Cursor: cursor})
		if err != nil {
			return err
		}
		r.pending, r.pendingRecs = map[string]KeyChange{}, map[string]*Record{}
		r.pendingMerges, r.pendingKeys, r.pendingIDs = nil, map[string]bool{}, map[int64]bool{}
		r.touched = map[int64]bool{}
		for _, rec := range page.Records {
			r.rep.Scanned++
			if err := r.record(rec, 0); err != nil {
				return err
			}
		}
		if err := r.flush(); err != nil {
			return err
		}
		if r.k.Progress != nil {
			r.k.Progress(*r.rep)
		}
		if page.Next == "" || len(page.Records) == 0 {
			return nil
		}
		cursor = page.Next
	}
}

// errKeyCycle reports records whose new keys are each other's old keys.
var errKeyCycle = errors.New("rekey: records swap keys under the new rules")

// record re-keys one record. depth counts the records whose keys had to
// move first (a chain of records each taking the next one's old key).
func (r *rekeyRun) record(rec *Record, depth int) error {
	if rec.Source != r.p.Source {
		// Listings are by exact source, so this is a store that answered
		// with another source's record: leave it alone rather than key it
		// under rules that are not its own.
		return fmt.Errorf("rekey of source %q: the store listed record %d of source %q", r.p.Source, rec.ID, rec.Source)
	}
	if r.dry != nil && (r.dry.gone[rec.ID] || r.dry.moved[rec.ID] != "") {
		return nil
	}
	if r.pendingIDs[rec.ID] {
		if err := r.flush(); err != nil {
			return err
		}
	}
	if r.touched[rec.ID] {
		cur, err := r.k.Store.Get(r.ctx, rec.ID)
		if ErrorCode(err) == ENOTFOUND {
			return nil // merged into another record
		}
		if err != nil {
			return err
		}
		rec = cur
	}
	key, parts, err := RecomputeKey(r.p, rec.Item)
	if err != nil {
		r.rep.Unreadable++
		return nil
	}
	if key == rec.Key && slices.Equal(parts, rec.KeyParts) {
		return nil
	}
	if r.dry != nil {
		return r.dryRecord(rec, key, parts, depth)
	}
	if key == rec.Key {
		// Only the readable parts changed: no other record can hold the
		// key.
		r.pending[key] = KeyChange{State: StateOf(rec), Archived: rec.Archived(), Key: key, KeyParts: parts}
		r.pendingRecs[key] = rec
		return nil
	}
	if holder, ok := r.pendingRecs[key]; ok {
		// An earlier record of the page was to take the key: it is merged
		// with this one instead (duplicates often come next to each other,
		// and writing the key change first would cost a commit each).
		delete(r.pending, key)
		delete(r.pendingRecs, key)
		return r.merge(rec, holder, key, parts)
	}
	if r.pendingKeys[key] {
		if err := r.flush(); err != nil {
			return err
		}
	}
	holder, err := r.k.Store.GetByKey(r.ctx, key)
	switch {
	case ErrorCode(err) == ENOTFOUND:
		r.pending[key] = KeyChange{State: StateOf(rec), Archived: rec.Archived(), Key: key, KeyParts: parts}
		r.pendingRecs[key] = rec
		return nil
	case err != nil:
		return err
	case holder.ID == rec.ID:
		return nil
	case holder.Source != rec.Source:
		// Keys hash their source in, so only a store that broke that
		// rule can get here; a merge never crosses sources.
		return fmt.Errorf("rekey: record %d of source %q holds key %s, the new key of record %d of source %q", holder.ID, holder.Source, key, rec.ID, rec.Source)
	case r.pendingIDs[holder.ID]:
		// The holder is in a merge not written yet: write it and look
		// again.
		if err := r.flush(); err != nil {
			return err
		}
		r.touched[rec.ID] = true
		return r.record(rec, depth+1)
	}
	hk, _, err := RecomputeKey(r.p, holder.Item)
	if err == nil && hk != key {
		// The holder's key moves too: move it first, then look again.
		if err := r.flush(); err != nil {
			return err
		}
		if depth > 16 {
			return fmt.Errorf("%w (record %d and %d)", errKeyCycle, rec.ID, holder.ID)
		}
		if err := r.record(holder, depth+1); err != nil {
			return err
		}
		if err := r.flush(); err != nil {
			return err
		}
		r.touched[holder.ID] = true
		r.touched[rec.ID] = true
		return r.record(rec, depth+1)
	}
	return r.merge(rec, holder, key, parts)
}

// merge plans the merge of rec into the record holding its new key; the
// next flush writes it.
func (r *rekeyRun) merge(rec, holder *Record, key string, parts []string) error {
	hist, err := r.k.Store.HistoryMany(r.ctx, []int64{rec.ID, holder.ID})
	if err != nil {
		return err
	}
	m := PlanRekeyMerge([]*Record{rec, holder}, hist, key, parts, r.k.now())
	r.pendingMerges = append(r.pendingMerges, m)
	r.pendingKeys[key] = true
	for _, id := range m.IDs() {
		r.pendingIDs[id] = true
	}
	return nil
}

func (r *rekeyRun) notify(m *RekeyMerge) {
	if r.k.OnMerge == nil {
		return
	}
	var e MergeJournalEntry
	_ = json.Unmarshal(m.JournalBody(), &e)
	r.k.OnMerge(e)
}

// flush writes the pending key changes, then the pending merges (their
// records and keys are disjoint, so the order does not matter).
func (r *rekeyRun) flush() error {
	if len(r.pending) > 0 {
		changes := slices.SortedFunc(maps.Values(r.pending), func(a, b KeyChange) int { return cmp.Compare(a.State.ID, b.State.ID) })
		r.pending, r.pendingRecs = map[string]KeyChange{}, map[string]*Record{}
		done, err := r.k.Store.RewriteKeys(r.ctx, changes)
		if err != nil {
			return err
		}
		r.rep.Rekeyed += int64(len(done))
		r.rep.Skipped += int64(len(changes) - len(done))
		for _, id := range done {
			r.touched[id] = true
		}
	}
	if len(r.pendingMerges) > 0 {
		ms := r.pendingMerges
		r.pendingMerges, r.pendingKeys, r.pendingIDs = nil, map[string]bool{}, map[int64]bool{}
		applied, err := r.k.Store.MergeRecords(r.ctx, ms)
		if err != nil {
			return err
		}
		for i, m := range ms {
			for _, id := range m.IDs() {
				r.touched[id] = true
			}
			if !applied[i] {
				r.rep.Skipped++
				continue
			}
			r.rep.Merges++
			r.rep.Merged += int64(len(m.From) - 1)
			r.notify(m)
		}
	}
	return nil
}

// dryRecord decides what the run would do with rec, whose new key is key,
// without writing: the keys it would give are remembered in place of the
// store's key index.
func (r *rekeyRun) dryRecord(rec *Record, key string, parts []string, depth int) error {
	holderID, found := r.dry.keys[key]
	if !found {
		holder, err := r.k.Store.GetByKey(r.ctx, key)
		switch {
		case ErrorCode(err) == ENOTFOUND:
		case err != nil:
			return err
		case holder.ID == rec.ID || r.dry.gone[holder.ID] || r.dry.moved[holder.ID] != "":
		case holder.Source != rec.Source:
			return fmt.Errorf("rekey: record %d of source %q holds key %s, the new key of record %d of source %q", holder.ID, holder.Source, key, rec.ID, rec.Source)
		default:
			hk, hparts, err := RecomputeKey(r.p, holder.Item)
			if err == nil && hk != key {
				if depth > 16 {
					return fmt.Errorf("%w (record %d and %d)", errKeyCycle, rec.ID, holder.ID)
				}
				// The holder moves away first.
				if err := r.dryRecord(holder, hk, hparts, depth+1); err != nil {
					return err
				}
				return r.dryRecord(rec, key, parts, depth+1)
			}
			holderID, found = holder.ID, true
		}
	}
	if !found || holderID == rec.ID {
		r.dry.keys[key] = rec.ID
		r.dry.moved[rec.ID] = key
		r.rep.Rekeyed++
		return nil
	}
	survivor, gone := min(holderID, rec.ID), max(holderID, rec.ID)
	r.dry.gone[gone] = true
	r.dry.keys[key] = survivor
	r.dry.moved[survivor] = key
	r.rep.Merges++
	r.rep.Merged++
	if r.k.OnMerge != nil {
		r.k.OnMerge(MergeJournalEntry{Survivor: survivor, Merged: []int64{gone}, Source: rec.Source, Key: key, KeyParts: parts, OldKeys: map[int64]string{rec.ID: rec.Key}})
	}
	return nil
}
