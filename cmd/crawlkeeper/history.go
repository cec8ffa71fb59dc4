package main

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func init() {
	register(&command{name: "history", summary: "print the versions of one record, oldest first", run: runHistory})
}

// versionLine is one version of a record as `history` prints it; the
// current version has no valid_to.
type versionLine struct {
	ID          int64           `json:"id"`
	Version     int64           `json:"version"`
	Current     bool            `json:"current"`
	ContentHash string          `json:"content_hash"`
	ValidFrom   time.Time       `json:"valid_from"`
	ValidTo     *time.Time      `json:"valid_to"`
	Item        json.RawMessage `json:"item"`
}

func runHistory(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("history", "history KEY_OR_ID")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("history needs one record id or key")
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	rec, err := lookupRecord(ctx, st, pos[0])
	if err != nil {
		return err
	}
	hist, err := st.History(ctx, rec.ID)
	if err != nil {
		return err
	}
	for _, h := range hist {
		to := h.ValidTo
		if err := a.printJSON(versionLine{ID: rec.ID, Version: h.Version, ContentHash: h.ContentHash, ValidFrom: h.ValidFrom, ValidTo: &to, Item: h.Item}); err != nil {
			return err
		}
	}
	return a.printJSON(versionLine{ID: rec.ID, Version: rec.Version, Current: true, ContentHash: rec.ContentHash, ValidFrom: rec.LastChangedAt, Item: rec.Item})
}

// lookupRecord finds a record by id (all digits) or by key. A number that
// is no record's id is tried as a key too, and the error names both.
func lookupRecord(ctx context.Context, st crawlkeeper.Store, ref string) (*crawlkeeper.Record, error) {
	id, perr := strconv.ParseInt(ref, 10, 64)
	if perr == nil {
		r, err := st.Get(ctx, id)
		if crawlkeeper.ErrorCode(err) != crawlkeeper.ENOTFOUND {
			return r, err
		}
	}
	r, err := st.GetByKey(ctx, ref)
	if perr == nil && crawlkeeper.ErrorCode(err) == crawlkeeper.ENOTFOUND {
		return nil, crawlkeeper.Errorf(crawlkeeper.ENOTFOUND, "no record with id %d (and no record with the key %q); `crawlkeeper records` lists ids and keys", id, ref)
	}
	return r, err
}
