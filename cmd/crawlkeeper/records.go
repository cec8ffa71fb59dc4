package main

import (
	"context"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func init() {
	register(&command{name: "records", summary: "print records as JSON lines", run: runRecords})
}

func runRecords(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("records", `records [--archived] [--source S] [--q TEXT] [--round R] [--target T] [--since TIME] [--newest] [--limit N]

--round and --target match the round and target of each record's last
delivery that carried them (_round, _target), exactly, as search's do.`)
	archived := fs.Bool("archived", false, "list archived records instead of active ones")
	source := fs.String("source", "", "only records of this `source`")
	q := fs.String("q", "", "only records whose title contains `text`")
	round := fs.String("round", "", "only records last delivered in this crawl `round`")
	target := fs.String("target", "", "only records last delivered for this crawl `target`")
	since := fs.String("since", "", "only records last updated at or after this RFC 3339 `time`")
	newest := fs.Bool("newest", false, "newest last_updated_at first (default: by id)")
	limit := fs.Int("limit", 0, "print at most `N` records (default: all)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("records takes no arguments, got %q", pos)
	}
	query := crawlkeeper.RecordQuery{Archived: *archived, Source: *source, Q: *q, Round: *round, Target: *target}
	if err := query.Validate(); err != nil {
		return err
	}
	if *since != "" {
		t, err := time.Parse(time.RFC3339Nano, *since)
		if err != nil {
			return usagef("--since %q: use an RFC 3339 time", *since)
		}
		query.Since = t
	}
	if *newest {
		query.Order = crawlkeeper.OrderNewest
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	printed := 0
	for {
		query.Limit = 1000
		if *limit > 0 && *limit-printed < query.Limit {
			query.Limit = *limit - printed
		}
		page, err := st.List(ctx, query)
		if err != nil {
			return err
		}
		for _, r := range page.Records {
			if err := a.printJSON(r); err != nil {
				return err
			}
			printed++
		}
		if page.Next == "" || (*limit > 0 && printed >= *limit) {
			return nil
		}
		query.Cursor = page.Next
	}
}
