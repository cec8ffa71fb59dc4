package dates

import (
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/crawlkeeper/crawlkeeper"
)

// Parser reads dates. It is safe for concurrent use; its only shared
// state is the cache of fallback results and the fallback library, which
// serialises its own calls.
type Parser struct {
	cache    *cache
	noCache  bool
	fallback *fallback
}

// Options configure a Parser.
type Options struct {
	// CacheSize bounds how many results of the fallback library are
	// remembered, per string and the options that change its reading.
	// Defaults to 65536.
	CacheSize int
	// NoFallback turns the fallback library off: only the hand-written
	// forms are read and everything else is an error. Defaults to false.
	NoFallback bool
	// NoCache makes every fallback read ask the library, for measuring
	// what the cache saves. Defaults to false.
	NoCache bool
}

var _ crawlkeeper.DateParser = (*Parser)(nil)

// New returns a Parser with the default options.
func New() *Parser { return NewWithOptions(Options{}) }

// NewWithOptions returns a Parser configured by o.
func NewWithOptions(o Options) *Parser {
	if o.CacheSize <= 0 {
		o.CacheSize = 65536
	}
	p := &Parser{cache: newCache(o.CacheSize), noCache: o.NoCache}
	if !o.NoFallback {
		p.fallback = newFallback()
	}
	return p
}

// opts are the options of one call, resolved.
type opts struct {
	loc           *time.Location
	order         byte // 'D', 'M' or 'Y'
	orderExplicit bool // the order came from the options, not the default
	now           time.Time
	rangeStart    bool
	upcoming      bool
	locale        string   // language hint for the fallback
	langs         []string // language hints for the fallback
}

// lexers recycles lexers: their buffers are too large to allocate per
// call, and they cannot live on the stack since they point into themselves.
var lexers = sync.Pool{New: func() any { return new(lexer) }}

// ParseDate implements crawlkeeper.DateParser. A date without a year
// ("May 15", "5月15日") is read in the year of o.Now, in the zone it is
// read in: a crawl sees such dates close to when they are published, and
// the year of the crawl is the only year the text allows. A zero o.Now
// means the current time. Text that is not a date is an error with code
// crawlkeeper.EINVALID, never a guess.
func (p *Parser) ParseDate(s string, o crawlkeeper.DateOptions) (crawlkeeper.ParsedDate, error) {
	loc := o.Location
	if loc == nil {
		loc = time.UTC
	}
	t := s
	if len(t) > 0 && (t[0] <= ' ' || t[len(t)-1] <= ' ' || t[0] >= utf8.RuneSelf || t[len(t)-1] >= utf8.RuneSelf) {
		t = strings.TrimSpace(t)
	}
	if d, ok := parseMachine(t, loc); ok {
		return d, nil
	}
	return p.parseText(s, t, o, loc)
}

// parseText reads everything that is not a machine format.
func (p *Parser) parseText(orig, s string, o crawlkeeper.DateOptions, loc *time.Location) (crawlkeeper.ParsedDate, error) {
	if s == "" || len(s) > maxInput || signOfNonDate(s) {
		return crawlkeeper.ParsedDate{}, notADate(orig)
	}
	order, explicit, ok := resolveOrder(o.Order, o.Locale)
	if !ok {
		return crawlkeeper.ParsedDate{}, crawlkeeper.Errorf(crawlkeeper.EINVALID, "cannot read %s as a date: unknown date order %q, use DMY, MDY or YMD", quote(orig), o.Order)
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	op := opts{loc: loc, order: order, orderExplicit: explicit, now: now.In(loc), rangeStart: o.RangeStart, upcoming: o.Upcoming,
		locale: o.Locale, langs: o.Languages}
	// Go's time.Time.String ends with the monotonic clock reading.
	if i := strings.Index(s, " m="); i > 0 && i+3 < len(s) && (s[i+3] == '+' || s[i+3] == '-') {
		s = s[:i]
	}
	lx := lexers.Get().(*lexer)
	defer lexers.Put(lx)
	if !lx.lex(s) {
		return crawlkeeper.ParsedDate{}, notADate(orig)
	}
	if d, ok := readTokens(lx, &op); ok {
		return d, nil
	}
	// A second pass of our own: a label before a colon ("Deadline:",
	// "Date de clôture :") names the field, not the date.
	if rest, ok := afterLabel(s); ok && lx.lex(rest) {
		if d, ok := readTokens(lx, &op); ok {
			return d, nil
		}
		s = rest
	}
	// Labels before the date: words the tables do not know, or know as
	// words of some other language's formats ("Mis à jour le"). A
	// complete day has a number.
	if lx.hasDigit && lx.toks[0].kind == tWord {
		if d, ok := readAfterWords(lx, &op); ok {
			return d, nil
		}
	}
	// Everything else goes to the library, behind the guard (guard.go).
	if p.fallback != nil && worthAsking(s, lx) {
		if d, ok := p.viaFallback(s, lx, &op); ok {
			return d, nil
		}
	}
	return crawlkeeper.ParsedDate{}, notADate(orig)
}

// readTokens reads lexed text with the hand-written rules.
func readTokens(lx *lexer, op *opts) (crawlkeeper.ParsedDate, bool) {
	if lx.relative {
		if d, ok := readRelative(lx, op); ok {
			return d, true
		}
	}
	return readAbsolute(lx, op)
}

// afterLabel returns the text after a leading label: up to four words
// without digits, ended by a colon and a space ("Deadline: 15 May",
// "Posted on: yesterday").
func afterLabel(s string) (string, bool) {
	i := strings.Index(s, ":")
	if i <= 0 || i+1 >= len(s) || s[i+1] != ' ' && s[i+1] != '\t' {
		return "", false
	}
	label := s[:i]
	if strings.ContainsAny(label, "0123456789") || strings.Count(strings.TrimSpace(label), " ") > 3 {
		return "", false
	}
	return strings.TrimSpace(s[i+1:]), true
}

// readAbsolute reads one date or a range of two.
func readAbsolute(lx *lexer, op *opts) (crawlkeeper.ParsedDate, bool) {
	return readAbsoluteIn(lx, op, lx.toks, true)
}

// readAbsoluteIn reads tokens ts as one date or a range. Partial dates (a
// month, a weekday, a time alone) are read only when partial is set.
func readAbsoluteIn(lx *lexer, op *opts, ts []token, partial bool) (crawlkeeper.ParsedDate, bool) {
	split := -1
	for k := range ts {
		if isRangeSep(&ts[k]) {
			if split >= 0 {
				return crawlkeeper.ParsedDate{}, false
			}
			split = k
		}
	}
	if split >= 0 {
		// An open range: "until May 15" is its end, "May 15 to" its start.
		// Fillers around it ("valid until", "ends by") do not count.
		first, last := -1, -1
		for k := range ts {
			if t := &ts[k]; t.kind != tSep && !(t.kind == tWord && t.w != nil && t.w.kind == kFiller && t.w.kind2 == kNone) {
				if first < 0 {
					first = k
				}
				last = k
			}
		}
		switch {
		case split == first && split < last:
			return readOne(lx, op, ts[split+1:], partial)
		case split == last && split > first:
			if !op.rangeStart {
				return crawlkeeper.ParsedDate{}, false
			}
			return readOne(lx, op, ts[:split], partial)
		}
		return readRange(lx, op, split)
	}
	sp := segParser{ts: ts, buf: lx.buf, order: op.order}
	if sp.parse() {
		if t, ok := sp.f.build(op.loc, op.now); ok {
			return crawlkeeper.ParsedDate{Time: t, DateOnly: !sp.f.hasTime}, true
		}
		if !partial {
			return crawlkeeper.ParsedDate{}, false
		}
		if d, ok := sp.partial(op); ok {
			return d, true
		}
	}
	// A bare hyphen joins the parts of a date ("15-May-2024") or the ends
	// of a range ("15-17 May 2024"); when the whole is not a date, try
	// each as a range.
	for k := range ts {
		if t := &ts[k]; t.kind == tSep && t.c == '-' && !t.multi {
			if d, ok := readRange(lx, op, k); ok {
				return d, true
			}
		}
	}
	return crawlkeeper.ParsedDate{}, false
}

// readOne reads the tokens ts as one date.
func readOne(lx *lexer, op *opts, ts []token, partial bool) (crawlkeeper.ParsedDate, bool) {
	sp := segParser{ts: ts, buf: lx.buf, order: op.order}
	if !sp.parse() {
		return crawlkeeper.ParsedDate{}, false
	}
	if t, ok := sp.f.build(op.loc, op.now); ok {
		return crawlkeeper.ParsedDate{Time: t, DateOnly: !sp.f.hasTime}, true
	}
	if !partial {
		return crawlkeeper.ParsedDate{}, false
	}
	return sp.partial(op)
}

// readAfterWords reads a full date after up to four leading words the
// tables do not need ("Offer ends 31 May 2024", "Veröffentlicht am 15.
// Mai 2024", "Delivery by Fri, May 24"): labels that name the field. Only
// a complete day (or a range) counts, so that the words skipped cannot
// turn a count into a date.
func readAfterWords(lx *lexer, op *opts) (crawlkeeper.ParsedDate, bool) {
	words := 0
	for k := range lx.toks {
		t := &lx.toks[k]
		switch t.kind {
		case tNum:
			return crawlkeeper.ParsedDate{}, false
		case tSep:
			continue
		}
		if words++; words > 4 {
			return crawlkeeper.ParsedDate{}, false
		}
		if d, ok := readAbsoluteIn(lx, op, lx.toks[k+1:], false); ok {
			return d, true
		}
	}
	return crawlkeeper.ParsedDate{}, false
}

// isRangeSep reports whether t can only join the two ends of a range.
func isRangeSep(t *token) bool {
	switch t.kind {
	case tSep:
		// "12.-14. Juni": a German day's dot, then the range's hyphen.
		return t.tilde || t.c == '-' && !t.multi && t.spB && t.spA || t.c == '.' && t.last == '-' && !t.spB && !t.spA
	case tWord:
		return t.w != nil && t.w.is(kRangeSep)
	}
	return false
}

// readRange reads the two ends of a range split at token k. The ends
// complete each other ("May 15–17, 2024": the start takes the month and
// year of the end, the end the month of the start), and the options pick
// one.
func readRange(lx *lexer, op *opts, k int) (crawlkeeper.ParsedDate, bool) {
	fail := crawlkeeper.ParsedDate{}
	ls := segParser{ts: lx.toks[:k], buf: lx.buf, order: op.order}
	rs := segParser{ts: lx.toks[k+1:], buf: lx.buf, order: op.order}
	if !ls.parse() || !rs.parse() {
		return fail, false
	}
	l, r := &ls.f, &rs.f
	if !l.hasDate() && !l.hasTime || !r.hasDate() && !r.hasTime {
		return fail, false
	}
	// After a year-first date, "5/17" is month then day.
	rOrder := op.order
	if l.ymdForm {
		rOrder = 'Y'
	}
	if !l.resolvePair(op.order) || !r.resolvePair(rOrder) {
		return fail, false
	}
	// A time alone takes the other end's day ("10:00–12:00, May 15").
	if !r.hasDate() {
		r.y, r.m, r.d, r.yND, r.jalali, r.hasY, r.hasM, r.hasD = l.y, l.m, l.d, l.yND, l.jalali, l.hasY, l.hasM, l.hasD
	}
	if !l.hasDate() {
		l.y, l.m, l.d, l.yND, l.jalali, l.hasY, l.hasM, l.hasD = r.y, r.m, r.d, r.yND, r.jalali, r.hasY, r.hasM, r.hasD
	}
	if !r.hasM && l.hasM {
		r.m, r.jalali, r.hasM = l.m, l.jalali, true
	}
	if !l.hasM && r.hasM {
		l.m, l.jalali, l.hasM = r.m, r.jalali, true
	}
	lBorrowed, rBorrowed := false, false
	if !r.hasY && l.hasY {
		r.y, r.yND, r.hasY, rBorrowed = l.y, l.yND, true, true
	}
	if !l.hasY && r.hasY {
		l.y, l.yND, l.hasY, lBorrowed = r.y, r.yND, true, true
	}
	if !l.hasZone && r.hasZone {
		l.hasZone, l.zone = true, r.zone
	}
	if !r.hasZone && l.hasZone {
		r.hasZone, r.zone = true, l.zone
	}
	tl, ok1 := l.build(op.loc, op.now)
	tr, ok2 := r.build(op.loc, op.now)
	if !ok1 || !ok2 {
		return fail, false
	}
	// "Dec 30 – Jan 2, 2025" starts in the year before the one written.
	if tl.After(tr) {
		switch {
		case lBorrowed && l.m > r.m:
			l.y--
			tl, ok1 = l.build(op.loc, op.now)
		case rBorrowed && l.m > r.m:
			r.y++
			tr, ok2 = r.build(op.loc, op.now)
		}
		if !ok1 || !ok2 || tl.After(tr) {
			return fail, false
		}
	}
	if op.rangeStart {
		return crawlkeeper.ParsedDate{Time: tl, DateOnly: !l.hasTime}, true
	}
	return crawlkeeper.ParsedDate{Time: tr, DateOnly: !r.hasTime}, true
}

// resolveOrder returns the day/month order for ambiguous numeric dates:
// the explicit order, else by locale. Only the United States and a few
// places that follow it write the month first; everywhere else the day
// comes first, and the year-first forms are recognised by their four-digit
// year whatever the order.
func resolveOrder(order, locale string) (o byte, explicit, ok bool) {
	switch strings.ToUpper(order) {
	case "DMY":
		return 'D', true, true
	case "MDY":
		return 'M', true, true
	case "YMD":
		return 'Y', true, true
	case "":
	default:
		return 0, false, false
	}
	if mdyLocale(locale) {
		return 'M', true, true
	}
	return 'D', locale != "", true
}

// mdyLocale reports whether a locale writes numeric dates month first.
func mdyLocale(locale string) bool {
	l := strings.ToLower(strings.ReplaceAll(locale, "_", "-"))
	switch l {
	case "en-us", "en-ph", "en-as", "en-gu", "en-mp", "en-pr", "en-um", "en-vi", "en-fm", "en-mh", "en-pw", "en-bz",
		"es-us", "fil", "fil-ph", "tl", "tl-ph":
		return true
	}
	return false
}

// languageHints returns the language codes to pass to the fallback: the
// explicit hints, else the language of the locale.
func languageHints(op *opts) []string {
	if len(op.langs) > 0 {
		return op.langs
	}
	if op.locale == "" {
		return nil
	}
	l := strings.ToLower(strings.ReplaceAll(op.locale, "_", "-"))
	if i := strings.IndexByte(l, '-'); i > 0 {
		l = l[:i]
	}
	return []string{l}
}

func notADate(s string) error {
	return crawlkeeper.Errorf(crawlkeeper.EINVALID, "cannot read %s as a date", quote(s))
}

// quote quotes s for a message, cutting text too long to be a date.
func quote(s string) string {
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
