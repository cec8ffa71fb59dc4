package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func init() {
	register(&command{name: "dates", summary: "read date strings the way ingest does, to debug a source's dates", run: runDates})
}

// dateLine is one result of `crawlkeeper dates`.
type dateLine struct {
	Input    string  `json:"input"`
	Time     *string `json:"time"`
	DateOnly bool    `json:"date_only"`
	Error    *string `json:"error"`
}

func runDates(ctx context.Context, a *app, args []string) error {
	fs := a.newFlags("dates", "dates [--tz ZONE] [--order DMY|MDY|YMD] [--lang L] [--locale L] [--range-start] [--upcoming] [STRING...]")
	tz := fs.String("tz", "UTC", "time `zone` of dates without one (IANA name)")
	order := fs.String("order", "", "day/month `order` of ambiguous numeric dates: DMY, MDY or YMD (default: by locale)")
	lang := fs.String("lang", "", "comma-separated language `hints`, e.g. de,ja")
	locale := fs.String("locale", "", "`locale` such as en-US (hints language and order)")
	rangeStart := fs.Bool("range-start", false, "read ranges as their start (event fields) instead of their end (deadlines)")
	upcoming := fs.Bool("upcoming", false, "read a weekday alone or an amount without a direction forward, as ingest reads event fields")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	loc, err := time.LoadLocation(*tz)
	if err != nil {
		return usagef("--tz %q: use an IANA zone such as Europe/Berlin", *tz)
	}
	switch strings.ToUpper(*order) {
	case "", "DMY", "MDY", "YMD":
	default:
		return usagef("--order %q: use DMY, MDY or YMD", *order)
	}
	opts := crawlkeeper.DateOptions{Location: loc, Order: strings.ToUpper(*order), Locale: *locale, Now: a.now(), RangeStart: *rangeStart, Upcoming: *upcoming}
	if *lang != "" {
		opts.Languages = splitComma(*lang)
	}
	parser := newDateParser()
	emit := func(s string) error {
		line := dateLine{Input: s}
		d, err := parser.ParseDate(s, opts)
		if err != nil {
			msg := crawlkeeper.ErrorMessage(err)
			line.Error = &msg
		} else {
			v := d.Time.Format(time.RFC3339Nano)
			line.Time = &v
			line.DateOnly = d.DateOnly
		}
		if a.json {
			return a.printJSON(line)
		}
		if line.Error != nil {
			_, err := fmt.Fprintf(a.stdout, "%-40s  error: %s\n", s, *line.Error)
			return err
		}
		_, err = fmt.Fprintf(a.stdout, "%-40s  %s\n", s, *line.Time)
		return err
	}
	if len(pos) > 0 {
		for _, s := range pos {
			if err := emit(s); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(a.stdin)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}
