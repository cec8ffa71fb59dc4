package pipeline

import (
	"context"
	"time"
)

// HandleIDs reads the active records among ids and processes those not
// yet processed at their current version and chain, writing them back
// like Handle. It is how notifications are handled: a notification
// delivered twice, or late, names records that were already processed,
// and they are left be. Gone counts the ids that are no longer active.
//
// It lets a runner other than this package's goroutines (the Beam
// pipeline) apply the same real-time semantics to the ids it receives.
func (e *Engine) HandleIDs(ctx context.Context, ids []int64) (out Outcome, gone int64, err error) {
	if err := e.Init(ctx); err != nil {
		return Outcome{}, 0, err
	}
	out, gone, _, err = e.handleIDs(ctx, ids)
	return out, gone, err
}

// handleIDs is HandleIDs; it also returns the latest last_updated_at of
// the records it read, the commit time of the batch that named them.
func (e *Engine) handleIDs(ctx context.Context, ids []int64) (Outcome, int64, time.Time, error) {
	uniq := make([]int64, 0, len(ids))
	seen := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	recs, err := e.Store.GetMany(ctx, uniq)
	if err != nil {
		return Outcome{}, 0, time.Time{}, err
	}
	gone := int64(len(uniq) - len(recs))
	var committed time.Time
	todo := recs[:0]
	for _, r := range recs {
		if r.LastUpdatedAt.After(committed) {
			committed = r.LastUpdatedAt
		}
		if r.ProcessedAt != nil && r.ProcessedVersion == r.Version && r.ProcessedChain == e.chain && !r.ProcessedAt.Before(r.LastUpdatedAt) {
			continue
		}
		todo = append(todo, r)
	}
	out, err := e.handle(ctx, todo, false)
	return out, gone, committed, err
}

// ReloadDeadLetters reads the dead letters again, so that letters removed
// or added by other processes take effect. RunPass does it at the start
// of every pass; runners that drive Handle themselves call it as often as
// they see fit.
func (e *Engine) ReloadDeadLetters(ctx context.Context) error {
	if err := e.Init(ctx); err != nil {
		return err
	}
	return e.reloadDead(ctx)
}
