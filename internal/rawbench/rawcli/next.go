package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper/recrawl"
)

// The raw reads of `rawcli next`: a source's active records with the
// columns the advisor ranks on, through the engine's (source, ...) index,
// then the names of the records listed. On SQLite the index carries the
// columns packed in one value (its migration 021), and the competent read
// takes them from there.
const (
	nextSQL = `SELECT id, last_updated_at, event_at, fetch_refetches, fetch_changes, fetch_changed_us, fetch_unchanged_us, fetch_changed_log
	FROM active WHERE source = ?`
	nextSQLitePacked = `SELECT unhex(printf('%016x%016x%016x%016x%016x%016x%016x%016x', id, last_updated_at,
	coalesce(event_at, -9223372036854775807 - 1), coalesce(fetch_refetches, -1), coalesce(fetch_changes, 0),
	coalesce(fetch_changed_us, 0), coalesce(fetch_unchanged_us, 0), CAST(round(coalesce(fetch_changed_log, 0) * 1000000) AS INTEGER)))
	FROM active WHERE source = ?`
)

// namesSQL reads the names of n records; PostgreSQL's driver reads $n.
func namesSQL(n int, dollar bool) string {
	var b strings.Builder
	b.WriteString("SELECT id, url, last_target FROM active WHERE id IN (")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if dollar {
			b.WriteString("$" + strconv.Itoa(i+1))
		} else {
			b.WriteByte('?')
		}
	}
	b.WriteByte(')')
	return b.String()
}

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

func micros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// readRows reads the rows of nextSQL.
func readRows(rows rowScanner) ([]recrawl.Record, error) {
	var recs []recrawl.Record
	for rows.Next() {
		var (
			id, updated int64
			eventAt     *int64
			f           [4]*int64
			changedLog  *float64
		)
		if err := rows.Scan(&id, &updated, &eventAt, &f[0], &f[1], &f[2], &f[3], &changedLog); err != nil {
			return nil, err
		}
		s := recrawl.FetchStats{LastFetch: micros(updated)}
		if eventAt != nil {
			t := micros(*eventAt)
			s.EventAt = &t
		}
		if f[0] != nil && f[1] != nil && f[2] != nil && f[3] != nil {
			s.Known, s.Refetches, s.Changes = true, *f[0], *f[1]
			s.ChangedSeconds, s.UnchangedSeconds = float64(*f[2])/1e6, float64(*f[3])/1e6
			if changedLog != nil {
				s.ChangedLogSeconds = *changedLog
			}
		}
		recs = append(recs, recrawl.Record{ID: id, Stats: s})
	}
	return recs, rows.Err()
}

// readPacked reads the rows of nextSQLitePacked.
func readPacked(rows rowScanner) ([]recrawl.Record, error) {
	var recs []recrawl.Record
	for rows.Next() {
		var b sql.RawBytes
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		if len(b) != 64 {
			return nil, fmt.Errorf("packed value of %d bytes", len(b))
		}
		id := int64(binary.BigEndian.Uint64(b))
		var v [7]int64
		for i := range v {
			v[i] = int64(binary.BigEndian.Uint64(b[8+8*i:]))
		}
		s := recrawl.FetchStats{LastFetch: micros(v[0])}
		if v[1] != math.MinInt64 {
			t := micros(v[1])
			s.EventAt = &t
		}
		if v[2] != -1 {
			s.Known, s.Refetches, s.Changes = true, v[2], v[3]
			s.ChangedSeconds, s.UnchangedSeconds, s.ChangedLogSeconds = float64(v[4])/1e6, float64(v[5])/1e6, float64(v[6])/1e6
		}
		recs = append(recs, recrawl.Record{ID: id, Stats: s})
	}
	return recs, rows.Err()
}

// rank fits the source's prior and ranks the records as the advisor does
// (package recrawl); it returns the plan and the ids of the records listed.
func rank(recs []recrawl.Record, a nextArgs) (recrawl.Plan, []int64, error) {
	prior := recrawl.FitPriorRecords(recs)
	plan, err := recrawl.Advise(recrawl.Request{Records: recs, Budget: a.budget, Now: a.now, Limit: a.limit, Prior: &prior})
	ids := make([]int64, len(plan.Items))
	for i, it := range plan.Items {
		ids[i] = it.ID
	}
	return plan, ids, err
}

// printNames prints each listed record's name (its last target, or its
// URL), in the plan's order, then a summary line.
func printNames(plan recrawl.Plan, rows rowScanner) error {
	names := map[int64]string{}
	for rows.Next() {
		var id int64
		var url, target string
		if err := rows.Scan(&id, &url, &target); err != nil {
			return err
		}
		if target != "" {
			url = target
		}
		names[id] = url
	}
	if err := rows.Err(); err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	for _, it := range plan.Items {
		fmt.Fprintln(w, names[it.ID])
	}
	fmt.Fprintf(w, "due %d fresh %.4f\n", plan.Due, plan.FreshNow)
	return w.Flush()
}

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// sqlNext is next on a database/sql engine (SQLite, MySQL): the source's
// records by query, read by read, ranked, then the listed ones' names.
func sqlNext(ctx context.Context, db *sql.DB, query string, read func(rowScanner) ([]recrawl.Record, error), a nextArgs) error {
	rows, err := db.QueryContext(ctx, query, a.source)
	if err != nil {
		return err
	}
	recs, err := read(rows)
	rows.Close()
	if err != nil {
		return err
	}
	plan, ids, err := rank(recs, a)
	if err != nil || len(ids) == 0 {
		return err
	}
	rows, err = db.QueryContext(ctx, namesSQL(len(ids), false), int64Args(ids)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	return printNames(plan, rows)
}
