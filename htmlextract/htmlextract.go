// Package htmlextract is the pipeline's extract processor: fields pulled
// with CSS selectors from an HTML field stored in the item, through
// github.com/PuerkitoBio/goquery and its selector engine cascadia.
package htmlextract

import (
	"context"
	"fmt"
	"hash/crc32"
	"sort"
	"strings"
	"sync"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"

	"github.com/crawlkeeper/crawlkeeper"
)

// Extract applies each source's selectors (SourceConfig.Extract, field
// name to selector) to the item's HTML field (SourceConfig.HTMLField) and
// writes derived.extract = {field: value}. A value is the white-space
// collapsed text of the first matching element, or the value of an
// attribute when the selector ends with @name ("a.apply@href"); null when
// nothing matches. Sources without selectors, and items without the HTML
// field, get no extract.
type Extract struct {
	config  *crawlkeeper.Config
	version int

	mu    sync.RWMutex
	rules map[string][]rule
}

type rule struct {
	field string
	sel   cascadia.Selector
	attr  string
}

var _ crawlkeeper.Processor = (*Extract)(nil)

// New checks every selector of cfg and returns the processor. Its version
// is derived from the selectors, so changing them makes every record due.
func New(cfg *crawlkeeper.Config) (*Extract, error) {
	if cfg == nil {
		cfg = &crawlkeeper.Config{}
	}
	x := &Extract{config: cfg, rules: map[string][]rule{}}
	h := crc32.NewIEEE()
	check := func(where string, sc crawlkeeper.SourceConfig) error {
		fields := make([]string, 0, len(sc.Extract))
		for f := range sc.Extract {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		fmt.Fprintf(h, "%s|%s|", where, sc.HTMLField)
		for _, f := range fields {
			if _, err := compile(f, sc.Extract[f]); err != nil {
				return crawlkeeper.Errorf(crawlkeeper.EINVALID, "config %s: extract.%s: %v", where, f, err)
			}
			fmt.Fprintf(h, "%s=%s|", f, sc.Extract[f])
		}
		return nil
	}
	if err := check("defaults", cfg.Defaults); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(cfg.Sources))
	for n := range cfg.Sources {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := check(fmt.Sprintf("sources[%q]", n), cfg.Sources[n]); err != nil {
			return nil, err
		}
	}
	x.version = 1 + int(h.Sum32()%1000000)
	return x, nil
}

// compile reads "selector" or "selector@attribute".
func compile(field, spec string) (rule, error) {
	sel, attr := spec, ""
	if i := strings.LastIndexByte(spec, '@'); i >= 0 {
		sel, attr = spec[:i], strings.TrimSpace(spec[i+1:])
		if attr == "" {
			return rule{}, fmt.Errorf("%q: name an attribute after @", spec)
		}
	}
	s, err := cascadia.Compile(strings.TrimSpace(sel))
	if err != nil {
		return rule{}, fmt.Errorf("%q is not a CSS selector: %v", sel, err)
	}
	return rule{field: field, sel: s, attr: attr}, nil
}

// Name implements crawlkeeper.Processor.
func (x *Extract) Name() string { return "extract" }

// Version implements crawlkeeper.Processor.
func (x *Extract) Version() int { return x.version }

func (x *Extract) rulesFor(pol *crawlkeeper.SourcePolicy) ([]rule, error) {
	x.mu.RLock()
	rs, ok := x.rules[pol.Source]
	x.mu.RUnlock()
	if ok {
		return rs, nil
	}
	fields := make([]string, 0, len(pol.Extract))
	for f := range pol.Extract {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		r, err := compile(f, pol.Extract[f])
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	x.mu.Lock()
	x.rules[pol.Source] = rs
	x.mu.Unlock()
	return rs, nil
}

// Process implements crawlkeeper.Processor.
func (x *Extract) Process(_ context.Context, r *crawlkeeper.Record, derived map[string]any) error {
	pol, err := x.config.Policy(r.Source)
	if err != nil {
		return err
	}
	rs, err := x.rulesFor(pol)
	if err != nil || len(rs) == 0 {
		return err
	}
	html, ok, err := htmlField(r, pol.HTMLField)
	if err != nil || !ok {
		return err
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		return fmt.Errorf("record %d: parse %s: %w", r.ID, pol.HTMLField, err)
	}
	out := make(map[string]any, len(rs))
	for _, rl := range rs {
		s := doc.FindMatcher(rl.sel).First()
		switch {
		case s.Length() == 0:
			out[rl.field] = nil
		case rl.attr != "":
			if v, ok := s.Attr(rl.attr); ok {
				out[rl.field] = v
			} else {
				out[rl.field] = nil
			}
		default:
			out[rl.field] = strings.Join(strings.Fields(s.Text()), " ")
		}
	}
	derived["extract"] = out
	return nil
}
