package crawlkeeper

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"time"
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
	DateErrors         []string
	Target             string
	Round              string
	// Fields lists the item's top-level fields and whether each had a
	// value, for the monitor's rare-field tracking.
	Fields []FieldFill
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
		return nil, Errorf(EINVALID, "item has no fields besides metadata")
	}
	out := &Prepared{Line: line, Source: meta.Source, Target: meta.Target, Round: meta.Round}
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
	out.EventAt, out.DateErrors = ReadEventFields(dates, pol, item, now)
	return out, nil
}

// ReadEventFields reads the source's event fields of item into the moment
// the record's event is over: the latest of the readable fields, with a
// date-only value meaning the end of that day in the source's zone.
// Unreadable strings are returned as date errors and never produce a time.
func ReadEventFields(dates DateParser, pol *SourcePolicy, item map[string]any, now time.Time) (*time.Time, []string) {
	var at *time.Time
	var errs []string
	for _, f := range pol.EventFields {
		v, ok := item[f]
		if !ok || v == nil {
			continue
		}
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case json.Number:
			s = x.String()
		default:
			errs = append(errs, fieldText(v))
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
			errs = append(errs, s)
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
