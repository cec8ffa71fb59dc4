package crawlkeeper

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"
)

// Prepared is an item ready to be written: validated, keyed, hashed and
// with its dates read. Preparing is pure CPU work and runs in parallel
// before the store's single write per batch.
type Prepared struct {
	// Line is the item's position in its input, for error messages.
	Line     int
	Key      string
	KeyParts []string
	Source   string
	Title    string
	URL      string
	// Item is the canonical JSON of the item without metadata.
	Item        json.RawMessage
	ContentHash string
	// CrawledAt is the crawler's fetch time from _crawled_at; zero when it
	// was missing or unreadable (see CrawledAtDefaulted).
	CrawledAt          time.Time
	CrawledAtDefaulted bool
	EventAt            *time.Time
	// DateErrors are the raw strings of the event fields that could not
	// be read, as stored (see Record.DateErrors); DateFailures name their
	// fields, in the same order.
	DateErrors   []string
	DateFailures []DateError
	Target       string
	Round        string
	// Error is the failure reason of _error (see MetaError). Report is
	// set when the item had no fields besides metadata: it reports a
	// failed target and is not stored.
	Error  string
	Report bool
	// Fields lists the item's top-level fields and whether each had a
	// value, for the monitor's rare-field tracking.
	Fields []FieldFill
	// SearchText is the folded, tokenised text the full-text index reads
	// (see SearchText); empty when the source's search is off.
	SearchText string
	// SearchLanguage is the source's PostgreSQL text search configuration.
	SearchLanguage string
}

// FieldFill says whether a field present in an item had a value.
type FieldFill struct {
	Name   string
	Filled bool
}

// Preparer turns raw items into Prepared ones under a configuration.
type Preparer struct {
	Config *Config
	// Dates reads event fields and _crawled_at. Defaults to MachineDates.
	Dates DateParser
}

// Prepare validates and prepares one raw item. base is the request's
// metadata; now resolves relative dates. Errors are *Error with EINVALID
// and a message that names the problem.
func (p *Preparer) Prepare(data []byte, line int, base Meta, now time.Time) (*Prepared, error) {
	item, meta, err := DecodeItem(data, base)
	if err != nil {
		return nil, err
	}
	return p.PrepareDecoded(item, meta, line, now)
}

// PrepareDecoded prepares an item that has already been decoded by
// DecodeItem.
func (p *Preparer) PrepareDecoded(item map[string]any, meta Meta, line int, now time.Time) (*Prepared, error) {
	cfg := p.Config
	if cfg == nil {
		cfg = &Config{}
	}
	pol, err := cfg.Policy(meta.Source)
	if err != nil {
		return nil, err
	}
	if len(item) == 0 {
		if meta.Error == "" {
			return nil, Errorf(EINVALID, "item has no fields besides metadata")
		}
		if meta.Target == "" || meta.Round == "" {
			return nil, Errorf(EINVALID, "an item with only _error reports a failed target: give it _target and _round (or --target and --round)")
		}
		if err := ValidateTarget(meta.Target); err != nil {
			return nil, err
		}
		return &Prepared{Line: line, Source: meta.Source, Target: meta.Target, Round: meta.Round, Error: meta.Error, Report: true}, nil
	}
	out := &Prepared{Line: line, Source: meta.Source, Target: meta.Target, Round: meta.Round, Error: meta.Error}
	var keyed bool
	out.Key, out.KeyParts, keyed = buildKey(pol, item)
	if s, ok := item["title"].(string); ok {
		out.Title = NormalizeText(s)
	}
	if s, ok := item["url"].(string); ok {
		out.URL = NormalizeURL(s)
	}

	// One pass over the sorted fields writes the stored item and feeds the
	// content hash with the non-volatile ones.
	names := make([]string, 0, len(item))
	for k := range item {
		names = append(names, k)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	buf.Grow(256)
	h := sha256.New()
	buf.WriteByte('{')
	h.Write([]byte{'{'})
	firstHashed := true
	out.Fields = make([]FieldFill, 0, len(names))
	for i, k := range names {
		if i > 0 {
			buf.WriteByte(',')
		}
		valStart := buf.Len()
		writeString(&buf, k)
		buf.WriteByte(':')
		v := item[k]
		if err := writeCanonical(&buf, v); err != nil {
			return nil, Errorf(EINVALID, "field %q: %v", k, err)
		}
		// Key fields are left out of the content hash when the key was
		// built from them: records with equal keys have equal key fields
		// after normalisation, so white-space or URL noise in them is
		// not a content change.
		if !pol.IsVolatile(k) && !(keyed && pol.isKeyField(k)) {
			if !firstHashed {
				h.Write([]byte{','})
			}
			firstHashed = false
			h.Write(buf.Bytes()[valStart:])
		}
		out.Fields = append(out.Fields, FieldFill{Name: k, Filled: filled(v)})
	}
	buf.WriteByte('}')
	h.Write([]byte{'}'})
	out.Item = buf.Bytes()
	var sum [sha256.Size]byte
	out.ContentHash = hex.EncodeToString(h.Sum(sum[:0])[:16])

	dates := p.Dates
	if dates == nil {
		dates = MachineDates{}
	}
	opts := DateOptions{Location: pol.Location, Order: pol.DateOrder, Locale: pol.Locale, Languages: pol.Languages, Now: now}
	if meta.CrawledAt != nil {
		s := fieldText(meta.CrawledAt)
		if d, err := dates.ParseDate(s, opts); err == nil {
			out.CrawledAt = Truncate(d.Time)
		} else {
			out.CrawledAtDefaulted = true
		}
	} else {
		out.CrawledAtDefaulted = true
	}
	out.EventAt, out.DateFailures = ReadEventDates(dates, pol, item, now)
	out.DateErrors = DateErrorValues(out.DateFailures)
	out.SearchText = SearchText(pol, out.Title, item)
	out.SearchLanguage = pol.SearchLanguage
	return out, nil
}

// DateError is an event field whose value could not be read as a date.
// Records store the raw value alone (Record.DateErrors), exactly as the
// item has it, so that a later parser reads it again from the item; the
// field is named in messages (DateErrorFields recovers it for stored
// records).
type DateError struct {
	Field string `json:"field"`
	Value string `json:"value"`
}

// String names the field and quotes the value: `deadline: cannot read
// "Rolling"`.
func (e DateError) String() string {
	return fmt.Sprintf("%s: cannot read %s", e.Field, quoteValue(e.Value))
}

// quoteValue quotes a raw value for a message, cut when it is too long to
// be a date.
func quoteValue(s string) string {
	const max = 120
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}

// DateErrorValues returns the raw values of errs, as records store them.
func DateErrorValues(errs []DateError) []string {
	if len(errs) == 0 {
		return nil
	}
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Value
	}
	return out
}

// ReadEventFields reads the source's event fields of item into the moment
// the record's event is over: the latest of the readable fields, with a
// date-only value meaning the end of that day in the source's zone.
// Unreadable strings are returned as date errors (raw values, as records
// store them) and never produce a time.
func ReadEventFields(dates DateParser, pol *SourcePolicy, item map[string]any, now time.Time) (*time.Time, []string) {
	at, errs := ReadEventDates(dates, pol, item, now)
	return at, DateErrorValues(errs)
}

// ReadEventDates is ReadEventFields with the date errors naming their
// fields. Event fields are upcoming dates (DateOptions.Upcoming): a
// deadline "Friday" is the Friday to come.
func ReadEventDates(dates DateParser, pol *SourcePolicy, item map[string]any, now time.Time) (*time.Time, []DateError) {
	var at *time.Time
	var errs []DateError
	for _, f := range pol.EventFields {
		v, ok := item[f]
		if !ok || v == nil {
			continue
		}
		s, isText := eventText(v)
		if !isText {
			errs = append(errs, DateError{Field: f, Value: s})
			continue
		}
		if NormalizeText(s) == "" {
			continue
		}
		d, err := dates.ParseDate(s, DateOptions{
			Location: pol.Location, Order: pol.DateOrder, Locale: pol.Locale,
			Languages: pol.Languages, Now: now, RangeStart: pol.TakesRangeStart(f),
			Upcoming: true,
		})
		if err != nil {
			errs = append(errs, DateError{Field: f, Value: s})
			continue
		}
		t := d.Time
		if d.DateOnly {
			t = EndOfDay(t, pol.Location)
		}
		t = Truncate(t)
		if at == nil || t.After(*at) {
			at = &t
		}
	}
	return at, errs
}

// eventText returns the text of an event field's value and whether it is
// text a parser may read (a string or a number); other values are errors
// as they are.
func eventText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	}
	return fieldText(v), false
}

// DateErrorFields names the fields of a stored record's date errors: each
// raw value is matched to the event field of item that holds it. A value
// no event field holds any more (the configuration changed) is named "?".
func DateErrorFields(pol *SourcePolicy, item map[string]any, raws []string) []DateError {
	out := make([]DateError, 0, len(raws))
	used := map[string]bool{}
	for _, raw := range raws {
		e := DateError{Field: "?", Value: raw}
		for _, f := range pol.EventFields {
			v, ok := item[f]
			if !ok || v == nil || used[f] {
				continue
			}
			if s, _ := eventText(v); s == raw {
				e.Field = f
				used[f] = true
				break
			}
		}
		out = append(out, e)
	}
	return out
}

// filled reports whether a field value counts as present: not null, not an
// empty or blank string, not an empty array or object.
func filled(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return NormalizeText(x) != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}
