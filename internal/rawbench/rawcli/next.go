package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper/recrawl"
)

// NextSQL is the raw read of `rawcli next`: a source's active records with
// the columns the advisor ranks on, through the engine's (source, ...)
// index. PostgreSQL's driver reads $1 for ?.
const NextSQL = `SELECT id, url, last_target, crawled_at, last_updated_at, last_changed_at, event_at,
	fetch_refetches, fetch_changes, fetch_changed_us, fetch_unchanged_us, fetch_changed_log
	FROM active WHERE source = ?`

// rowScanner is what database/sql's and pgx's rows have in common.
type rowScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// nextArgs are the arguments of rawcli next after the URL.
type nextArgs struct {
	source string
	budget float64
	limit  int
	now    time.Time
}

func parseNext(args []string) (nextArgs, error) {
	fs := flag.NewFlagSet("next", flag.ContinueOnError)
	var a nextArgs
	fs.StringVar(&a.source, "source", "", "the source")
	fs.Float64Var(&a.budget, "budget", 0, "fetches per day")
	fs.IntVar(&a.limit, "limit", 100, "at most this many pages")
	now := fs.Int64("now", 0, "the time of the decision, Unix microseconds")
	if err := fs.Parse(args); err != nil {
		return a, err
	}
	if !(a.budget > 0) || *now == 0 {
		return a, fmt.Errorf("next: give -budget and -now")
	}
	a.now = time.UnixMicro(*now).UTC()
	return a, nil
}

// rankNext reads the rows of NextSQL, fits the source's prior and ranks
// the records as the advisor does (package recrawl), and prints the names
// of the pages to fetch, one per line.
func rankNext(rows rowScanner, a nextArgs) error {
	var recs []recrawl.Record
	for rows.Next() {
		var (
			id                        int64
			url, target               string
			crawled, updated, changed int64
			eventAt                   *int64
			f                         [4]*int64
			changedLog                *float64
		)
		if err := rows.Scan(&id, &url, &target, &crawled, &updated, &changed, &eventAt, &f[0], &f[1], &f[2], &f[3], &changedLog); err != nil {
			return err
		}
		s := recrawl.FetchStats{FirstFetch: time.UnixMicro(crawled), LastFetch: time.UnixMicro(updated), LastChange: time.UnixMicro(changed)}
		if eventAt != nil {
			t := time.UnixMicro(*eventAt)
			s.EventAt = &t
		}
		if f[0] != nil && f[1] != nil && f[2] != nil && f[3] != nil {
			s.Known, s.Refetches, s.Changes = true, *f[0], *f[1]
			s.ChangedSeconds, s.UnchangedSeconds = float64(*f[2])/1e6, float64(*f[3])/1e6
			if changedLog != nil {
				s.ChangedLogSeconds = *changedLog
			}
		}
		name := url
		if target != "" {
			name = target
		}
		recs = append(recs, recrawl.Record{ID: id, Name: name, Stats: s})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	stats := make([]recrawl.FetchStats, len(recs))
	for i := range recs {
		stats[i] = recs[i].Stats
	}
	prior := recrawl.FitPrior(stats)
	plan, err := recrawl.Advise(recrawl.Request{Records: recs, Budget: a.budget, Now: a.now, Limit: a.limit, Prior: &prior})
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	for _, it := range plan.Items {
		fmt.Fprintln(w, it.Name)
	}
	fmt.Fprintf(w, "due %d fresh %.4f\n", plan.Due, math.Round(plan.FreshNow*1e4)/1e4)
	return w.Flush()
}

// pgNextSQL is NextSQL with PostgreSQL's placeholder.
var pgNextSQL = strings.Replace(NextSQL, "?", "$1", 1)
