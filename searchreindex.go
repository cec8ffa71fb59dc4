package crawlkeeper

import (
	"bytes"
	"context"
	"encoding/json"
	"time"
)

// ReindexSummary reports a Reindex run.
type ReindexSummary struct {
	Read      int `json:"read"`
	Rewritten int `json:"rewritten"`
	// Changed counts records that changed while Reindex ran; their new
	// version was written with its own search text, so nothing is left
	// to do for them.
	Changed int `json:"changed"`
}

// Reindex recomputes the search text of every record, active and
// archived, under cfg and rewrites it where it differs: after records were
// written before search existed (check reports them as search_missing),
// or after a source's search fields or search setting changed. Each
// rewrite is conditioned on the record's version, so a record changed
// meanwhile keeps the text its own write computed. It reads in pages of
// batch records and calls progress, when set, after each.
func Reindex(ctx context.Context, st Store, cfg *Config, batch int, progress func(read int)) (*ReindexSummary, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	if batch <= 0 {
		batch = DefaultBatchSize
	}
	sum := &ReindexSummary{}
	apply := func(recs []*Record, archived bool) error {
		var ups []SearchTextUpdate
		for _, r := range recs {
			pol, err := cfg.Policy(r.Source)
			if err != nil {
				return err
			}
			var item map[string]any
			dec := json.NewDecoder(bytes.NewReader(r.Item))
			dec.UseNumber()
			if err := dec.Decode(&item); err != nil {
				return Errorf(EINTERNAL, "reindex: record %d has an unreadable item: %v", r.ID, err)
			}
			text := SearchText(pol, r.Title, item)
			// An empty text is written again: the store cannot tell a
			// record indexed with nothing from one never indexed.
			if text != r.SearchText || text == "" || r.SearchLanguage != pol.SearchLanguage && !(r.SearchLanguage == "" && pol.SearchLanguage == "simple") {
				ups = append(ups, SearchTextUpdate{ID: r.ID, Version: r.Version, Archived: archived, Text: text, Language: pol.SearchLanguage})
			}
		}
		sum.Read += len(recs)
		if len(ups) > 0 {
			n, err := st.SetSearchText(ctx, ups)
			if err != nil {
				return err
			}
			sum.Rewritten += n
			sum.Changed += len(ups) - n
		}
		if progress != nil {
			progress(sum.Read)
		}
		return nil
	}
	var after int64
	for {
		recs, err := st.ScanActive(ctx, after, 0, batch)
		if err != nil {
			return sum, err
		}
		if len(recs) == 0 {
			break
		}
		if err := apply(recs, false); err != nil {
			return sum, err
		}
		after = recs[len(recs)-1].ID
	}
	after = 0
	future := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	for {
		recs, err := st.ArchivedBefore(ctx, nil, future, after, batch)
		if err != nil {
			return sum, err
		}
		if len(recs) == 0 {
			break
		}
		if err := apply(recs, true); err != nil {
			return sum, err
		}
		after = recs[len(recs)-1].ID
	}
	return sum, nil
}
