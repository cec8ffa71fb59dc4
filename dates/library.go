package dates

import (
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	dps "github.com/markusmobius/go-dateparser"
	"github.com/markusmobius/go-dateparser/date"
)

// Library reads dates with github.com/markusmobius/go-dateparser alone:
// no hand-written forms, no guard, no cache. It is the baseline the
// benchmark compares Parser with (bench: date_parse_mixed), and not meant
// for ingest: it reads "N/A" and "$12.99" as dates.
type Library struct {
	lib dps.Parser
}

var _ crawlkeeper.DateParser = (*Library)(nil)

// NewLibrary returns go-dateparser behind the DateParser interface.
func NewLibrary() *Library { return &Library{} }

// ParseDate implements crawlkeeper.DateParser.
func (l *Library) ParseDate(s string, o crawlkeeper.DateOptions) (crawlkeeper.ParsedDate, error) {
	libraryUsed()
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	cfg := &dps.Configuration{CurrentTime: now.In(loc), DefaultTimezone: loc, Languages: o.Languages, ReturnTimeAsPeriod: true}
	switch o.Order {
	case "DMY":
		cfg.DateOrder = dps.DMY
	case "MDY":
		cfg.DateOrder = dps.MDY
	case "YMD":
		cfg.DateOrder = dps.YMD
	}
	d, err := l.lib.Parse(cfg, s)
	if err != nil || d.IsZero() {
		return crawlkeeper.ParsedDate{}, notADate(s)
	}
	return crawlkeeper.ParsedDate{Time: d.Time, DateOnly: d.Period >= date.Day}, nil
}
