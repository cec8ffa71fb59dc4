package crawlkeeper

import (
	"context"
	"encoding/json"
	"time"
)

// StateStore keeps small pieces of state next to the records: checkpoints
// (the scanner's pass position), a journal of runs (archive passes, alerts)
// and leases that coordinate several processes sharing one store.
type StateStore interface {
	// GetState returns the value stored under name, or nil when none.
	GetState(ctx context.Context, name string) ([]byte, error)
	// PutState stores value under name, replacing any previous value.
	PutState(ctx context.Context, name string, value []byte) error
	// AppendJournal records an entry of a kind ("archive_run", "alert").
	AppendJournal(ctx context.Context, kind string, at time.Time, body json.RawMessage) error
	// Journal returns the newest entries of a kind, newest first.
	Journal(ctx context.Context, kind string, limit int) ([]JournalEntry, error)
	// AcquireLease takes or renews the named lease for owner until now+ttl
	// and reports whether owner holds it. A lease held by another owner is
	// taken over only once it has expired.
	AcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error)
	// ReleaseLease gives up the lease if owner holds it.
	ReleaseLease(ctx context.Context, name, owner string) error
	// AddDeadLetter records a record that keeps failing processing;
	// adding it again replaces the entry.
	AddDeadLetter(ctx context.Context, d DeadLetter) error
	// DeadLetters lists dead letters, oldest first.
	DeadLetters(ctx context.Context, limit int) ([]DeadLetter, error)
	// RemoveDeadLetters deletes the entries of ids (all when ids is nil)
	// and returns the ids removed.
	RemoveDeadLetters(ctx context.Context, ids []int64) ([]int64, error)
}

// JournalEntry is one journal record.
type JournalEntry struct {
	Seq  int64           `json:"seq"`
	Kind string          `json:"kind"`
	At   time.Time       `json:"at"`
	Body json.RawMessage `json:"body"`
}

// DeadLetter is a record version that failed processing too often.
type DeadLetter struct {
	ID        int64     `json:"id"`
	Version   int64     `json:"version"`
	Processor string    `json:"processor"`
	Error     string    `json:"error"`
	Failures  int       `json:"failures"`
	At        time.Time `json:"at"`
}
