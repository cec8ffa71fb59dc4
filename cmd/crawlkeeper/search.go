package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func init() {
	register(&command{name: "search", summary: "full-text search over records", run: runSearch})
}

func runSearch(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("search", `search QUERY [--source S] [--round R] [--target T] [--since TIME] [--until TIME] [--archived] [--newest] [--limit N]
       crawlkeeper search --reindex

QUERY: words (all must match), "quoted phrases", prefix* and -excluded words;
quote the whole query ('open day -closed') or put it after -- so that an
excluded word is not read as a flag. Case and accents do not matter;
Chinese, Japanese and Korean work without spaces. --round and --target
match the round and target of each record's last delivery that carried
them (_round, _target), exactly.`)
	source := fs.String("source", "", "only records of this `source`")
	round := fs.String("round", "", "only records last delivered in this crawl `round`")
	target := fs.String("target", "", "only records last delivered for this crawl `target`")
	since := fs.String("since", "", "only records last updated at or after this RFC 3339 `time`")
	until := fs.String("until", "", "only records last updated before this RFC 3339 `time`")
	archived := fs.Bool("archived", false, "search the archive instead of the active records")
	newest := fs.Bool("newest", false, "newest last_updated_at first (default: best match first)")
	limit := fs.Int("limit", crawlkeeper.DefaultSearchLimit, "print at most `N` results")
	reindex := fs.Bool("reindex", false, "recompute every record's search text (after an upgrade or a change of search_fields)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	if *reindex {
		if len(pos) > 0 {
			return usagef("search --reindex takes no query")
		}
		sum, err := crawlkeeper.Reindex(ctx, st, a.cfg, 0, nil)
		if err != nil {
			return err
		}
		if a.json {
			return a.printJSON(sum)
		}
		fmt.Fprintf(a.stdout, "reindexed: %s read, %d rewritten, %d changed meanwhile (already indexed by their own write)\n", plural(sum.Read, "record"), sum.Rewritten, sum.Changed)
		return nil
	}
	if len(pos) == 0 {
		return usagef(`search needs a query, e.g. crawlkeeper search 'open day' or crawlkeeper search '"open day" -closed'`)
	}
	if *limit <= 0 {
		return usagef("--limit %d: give a positive number", *limit)
	}
	q := crawlkeeper.SearchQuery{Text: strings.Join(pos, " "), Archived: *archived, Source: *source, Round: *round, Target: *target}
	for _, f := range []struct {
		name, text string
		dst        *time.Time
	}{{"--since", *since, &q.Since}, {"--until", *until, &q.Until}} {
		if f.text == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, f.text)
		if err != nil {
			return usagef("%s %q: use an RFC 3339 time such as 2025-09-15T12:00:00Z", f.name, f.text)
		}
		*f.dst = t
	}
	if *newest {
		q.Order = crawlkeeper.SearchNewest
	}
	printed := 0
	for printed < *limit {
		q.Limit = min(*limit-printed, crawlkeeper.MaxSearchLimit)
		page, err := crawlkeeper.Search(ctx, st, a.cfg, q)
		if err != nil {
			return err
		}
		for _, h := range page.Hits {
			if a.json {
				if err := a.printJSON(h); err != nil {
					return err
				}
			} else {
				r := h.Record
				fmt.Fprintf(a.stdout, "%d\t%s\t%s\t%s\n", r.ID, r.Source, r.LastUpdatedAt.Format(time.RFC3339), r.Title)
				if s := crawlkeeper.SnippetString(h.Snippet, "«", "»"); s != "" {
					fmt.Fprintf(a.stdout, "\t%s\n", s)
				}
			}
			printed++
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if printed == 0 && !a.json {
		fmt.Fprintln(a.stderr, "no records match")
	}
	return nil
}
