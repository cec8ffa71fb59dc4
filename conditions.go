package crawlkeeper

import "time"

// The conditions under which a record may leave the active set, come back
// to it, or be deleted for good, written once. Every store finds the
// current state of the records concerned (locking them where its engine
// can), asks these functions which operations still apply, and executes
// only those. A store that checks the condition inside its engine instead
// (a conditional UPDATE or DELETE) must check exactly the fields that
// RecordState.Holds compares.

// RecordState names a record in the state a decision was made on: its id,
// content version and last delivery time. A re-crawl moves
// last_updated_at and a content change moves the version, so an operation
// conditioned on a RecordState never acts on data its decider did not see.
type RecordState struct {
	ID            int64     `json:"id"`
	Version       int64     `json:"version"`
	LastUpdatedAt time.Time `json:"last_updated_at"`
}

// StateOf returns the state r is in.
func StateOf(r *Record) RecordState {
	return RecordState{ID: r.ID, Version: r.Version, LastUpdatedAt: r.LastUpdatedAt}
}

// Holds reports whether a record stored with version and lastUpdatedAt is
// still in state s. Times compare at the stores' microsecond precision.
func (s RecordState) Holds(version int64, lastUpdatedAt time.Time) bool {
	return version == s.Version && Truncate(lastUpdatedAt).Equal(Truncate(s.LastUpdatedAt))
}

// State returns the state the move was selected in.
func (m Move) State() RecordState {
	return RecordState{ID: m.ID, Version: m.Version, LastUpdatedAt: m.LastUpdatedAt}
}

// Lookup reports the stored version and last_updated_at of the record with
// id in the table an operation reads from, and false when it is not there.
type Lookup func(id int64) (version int64, lastUpdatedAt time.Time, ok bool)

// RecordLookup returns a Lookup over records loaded by id.
func RecordLookup(recs map[int64]*Record) Lookup {
	return func(id int64) (int64, time.Time, bool) {
		r := recs[id]
		if r == nil {
			return 0, time.Time{}, false
		}
		return r.Version, r.LastUpdatedAt, true
	}
}

// EventLookup reports the stored event_at of the active record with id
// (nil when it has none).
type EventLookup func(id int64) *time.Time

// RecordEvents returns an EventLookup over records loaded by id.
func RecordEvents(recs map[int64]*Record) EventLookup {
	return func(id int64) *time.Time {
		if r := recs[id]; r != nil {
			return r.EventAt
		}
		return nil
	}
}

// EventStillDue reports whether a record whose event_at is eventAt is
// still due under m's event rule (always, for a move of another rule).
func (m Move) EventStillDue(eventAt *time.Time) bool {
	return m.EventBefore == nil || eventAt != nil && !Truncate(*eventAt).After(Truncate(*m.EventBefore))
}

// PlanMoves returns the moves that still apply, in their order: the record
// is active (current looks in the active set) in the state it was selected
// in, and, for a move of the event rule, its event_at (events) is still
// due. A move listed twice applies once. The others were archived,
// deleted, re-crawled, changed or re-dated since selection and wait for
// the next pass.
func PlanMoves(moves []Move, current Lookup, events EventLookup) []Move {
	out := make([]Move, 0, len(moves))
	seen := make(map[int64]bool, len(moves))
	for _, m := range moves {
		if seen[m.ID] {
			continue
		}
		v, at, ok := current(m.ID)
		if !ok || !m.State().Holds(v, at) || !m.EventStillDue(events(m.ID)) {
			continue
		}
		seen[m.ID] = true
		out = append(out, m)
	}
	return out
}

// PlanRestore returns the ids to move back to active, in their order, each
// once: those archived now (archived looks in the archive). A restore is
// the operator's explicit request, so it applies to the archived record
// whatever its version.
func PlanRestore(ids []int64, archived Lookup) []int64 {
	out := make([]int64, 0, len(ids))
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			continue
		}
		if _, _, ok := archived(id); !ok {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

// PlanPurge returns the ids to delete for good, in the order of targets,
// each once: records still archived (archived looks in the archive) in the
// state that was exported. Changed lists the targets still archived in
// another state — refreshed or changed by a crawl after the export — which
// must be exported again before a later purge deletes them; a target no
// longer archived (revived, restored or already purged) is in neither list.
func PlanPurge(targets []RecordState, archived Lookup) (purge, changed []int64) {
	purge = make([]int64, 0, len(targets))
	seen := make(map[int64]bool, len(targets))
	for _, t := range targets {
		if seen[t.ID] {
			continue
		}
		seen[t.ID] = true
		v, at, ok := archived(t.ID)
		switch {
		case !ok:
		case t.Holds(v, at):
			purge = append(purge, t.ID)
		default:
			changed = append(changed, t.ID)
		}
	}
	return purge, changed
}
