package crawlkeeper

import (
	"context"
	"encoding/json"
	"time"
)

// ScanStore is the part of Store the reprocessing pipeline reads and
// writes: keyset reads in id order and version-checked write-backs.
type ScanStore interface {
	// ScanActive returns up to limit active records with afterID < id and,
	// when maxID > 0, id <= maxID, in id order.
	ScanActive(ctx context.Context, afterID, maxID int64, limit int) ([]*Record, error)
	// GetMany returns the active records among ids, in id order; missing
	// ids are skipped.
	GetMany(ctx context.Context, ids []int64) ([]*Record, error)
	// MaxID returns the highest id ever assigned, 0 for an empty store.
	MaxID(ctx context.Context) (int64, error)
	// WriteProcessed writes each result only if the record is still active
	// with the version that was processed, and returns the ids whose write
	// was skipped because the record changed (they must be processed
	// again) or left the active set.
	WriteProcessed(ctx context.Context, ws []ProcessedWrite) (skipped []int64, err error)
	// Freshness reports the oldest processed time among active records
	// and how many are due: never processed, processed at another version
	// or chain, or processed before q.DueBefore. A record's processed time
	// is its processed_at, or the covering span's time when that is later
	// and the record is current (see FreshnessQuery).
	Freshness(ctx context.Context, q FreshnessQuery) (*Freshness, error)
}

// ProcessedWrite is the result of processing one record version.
type ProcessedWrite struct {
	ID          int64
	Version     int64
	ProcessedAt time.Time
	// Chain identifies the processor chain and versions that produced
	// Derived; a different chain makes the record due again.
	Chain   string
	Derived json.RawMessage
	// SetEvent writes EventAt and DateErrors too (the dates processor).
	SetEvent   bool
	EventAt    *time.Time
	DateErrors []string
}

// Freshness summarises how current processing is. OldestProcessedAt is
// the oldest processed time as FreshnessQuery defines it.
type Freshness struct {
	OldestProcessedAt *time.Time `json:"oldest_processed_at"`
	NeverProcessed    int64      `json:"never_processed"`
	Due               int64      `json:"due"`
	Active            int64      `json:"active"`
}
