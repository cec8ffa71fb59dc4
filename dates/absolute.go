package dates

import (
	"time"
	"unicode/utf8"

	"github.com/crawlkeeper/crawlkeeper"
)

// fields are the parts of one date read from a segment of text, before
// missing parts are filled in and the result is checked.
type fields struct {
	y, m, d    int
	yND        int // digits the year was written with; 1 or 2 is a two-digit year
	hasY, hasM bool
	hasD       bool
	jalali     bool // the month is from the Persian solar calendar
	ymdForm    bool // the date was numeric with the year first ("2024/5/15")
	pair       bool // month and day are an unresolved numeric pair ("5/17")
	pa, pb     int  // the pair's numbers, in the order written

	hh, mm, ss, ns int
	hasTime        bool
	ampm           int8 // -1 none, 0 am, 1 pm

	hasZone bool
	zone    *time.Location
}

func (f *fields) hasDate() bool { return f.hasY || f.hasM || f.hasD || f.pair }

// looseNum is a number the segment parser could not place at once: a day or
// a year next to a month name.
type looseNum struct {
	v       int
	nd      int
	ordinal bool
	before  bool // written before the month name
}

// segParser reads one date (one end of a range) from tokens. Its result is
// unvalidated: callers decide which parts a complete date needs.
type segParser struct {
	ts      []token
	buf     []byte
	order   byte // 'D', 'M' or 'Y'
	skipRel bool // relative day words ("yesterday") are read by the caller

	f         fields
	loose     [6]looseNum
	nLoose    int
	named     bool // the month came from a name
	timeEnd   int  // index of the last token of the time, -1 before one
	markTime  bool // the hour came with a CJK marker, so minutes may follow
	seconds   bool // the clock was written with seconds
	skipTo    int  // tokens up to this index were used by a word before them
	eraBase   int
	eraNumber bool // the era's year number has been read

	wd         int  // the weekday named, 0 (Sunday) to 6
	hasWD      bool // a weekday was named
	wdShort    bool // ... with a word of one or two letters ("Mo", "Fr")
	shortClock bool // the minutes or seconds were written with one digit ("4:8")
	offsetRead bool // the zone came from a numeric offset
	numMonth   bool // a numeric month and year without a day ("05/2024")
	monthPlain bool // the month's name has no other role ("ago" is also "ago")
	weakName   bool // a month or weekday was a weak word (word.weak)
}

func (p *segParser) tok(i int) *token {
	if i < 0 || i >= len(p.ts) {
		return nil
	}
	return &p.ts[i]
}

// next returns the index of the token after i, skipping one separator that
// is only white space, or -1.
func (p *segParser) next(i int) int {
	i++
	if t := p.tok(i); t != nil && t.kind == tSep && t.c == ' ' {
		i++
	}
	if i >= len(p.ts) {
		return -1
	}
	return i
}

// wordAt returns the word at index i, or nil.
func (p *segParser) wordAt(i int) *word {
	if t := p.tok(i); t != nil && t.kind == tWord {
		return t.w
	}
	return nil
}

// prevNonSep returns the index of the last non-separator token before i.
func (p *segParser) prevNonSep(i int) int {
	for i--; i >= 0; i-- {
		if p.ts[i].kind != tSep {
			return i
		}
	}
	return -1
}

// parse reads the tokens. It returns false when they cannot be one date:
// an unknown word, two values for one part, numbers left over.
func (p *segParser) parse() bool {
	p.f.ampm = -1
	p.timeEnd = -1
	hasName := false
	for k := range p.ts {
		if w := p.ts[k].w; w != nil && (w.kind == kMonth || w.kind == kJalali || w.kind2 == kMonth) {
			hasName = true
		}
	}
	// Abbreviated Japanese eras: "R6.5.15", "H31.4.30".
	if len(p.ts) >= 2 && p.ts[0].kind == tWord && p.ts[0].j-p.ts[0].i == 1 && p.ts[1].kind == tNum && p.ts[1].i == p.ts[0].j {
		switch p.buf[p.ts[0].i] {
		case 'r':
			p.eraBase = 2018
		case 'h':
			p.eraBase = 1988
		case 's':
			p.eraBase = 1925
		case 't':
			p.eraBase = 1911
		case 'm':
			p.eraBase = 1867
		}
		if p.eraBase != 0 {
			p.ts = p.ts[1:]
		}
	}
	for i := 0; i < len(p.ts); i++ {
		t := &p.ts[i]
		switch t.kind {
		case tSep:
			if n, ok := p.offset(i); ok {
				i = n
				continue
			}
			// "GMT+0100 (GMT Daylight Time)", "+0800 (GMT+08:00)": after a
			// zone, text in brackets describes it.
			if (t.c == '(' || t.last == '(') && p.f.hasZone && p.f.hasTime {
				j := i + 1
				for j < len(p.ts) && !(p.ts[j].kind == tSep && (p.ts[j].c == ')' || p.ts[j].last == ')')) {
					j++
				}
				i = j
			}
		case tNum:
			n, ok := p.number(i, hasName)
			if !ok {
				return false
			}
			i = n
		case tWord:
			n, ok := p.word(i)
			if !ok {
				return false
			}
			i = n
		}
	}
	if p.eraBase != 0 && !p.eraNumber {
		return false
	}
	if !p.placeLoose() || !p.applyAMPM() {
		return false
	}
	// A short abbreviation ("Sad", "Sr") counts only in a complete date
	// with a four-digit year.
	return !p.weakName || p.f.hasD && p.f.hasM && p.f.hasY && p.f.yND == 4
}

// offset reads a numeric zone offset at separator i ("+09:00", "-0500",
// "GMT+2", "PST-0800", "CEST+0200") and returns the index of its last
// token. After a zone name the offset is what the text means ("PST-0700"
// is seven hours behind, whatever PST usually is); an offset repeated in
// another form ("+0800 +08") is read once.
func (p *segParser) offset(i int) (int, bool) {
	t := &p.ts[i]
	if (t.last != '+' && t.last != '-') || t.spA {
		return 0, false
	}
	n := p.tok(i + 1)
	if n == nil || n.kind != tNum {
		return 0, false
	}
	prev := p.prevNonSep(i)
	afterZone := false
	if w := p.wordAt(prev); w != nil && w.kind == kZone {
		afterZone = true
	}
	if p.f.hasZone && !afterZone && !p.offsetRead {
		return 0, false
	}
	if !afterZone && (!p.f.hasTime || prev != p.timeEnd) {
		return 0, false
	}
	// A bare "-hh:mm" right after "hh:mm" is the end of a range of times
	// ("10:30-12:00") more often than a zone; after seconds, after a zone
	// name, after a space or with a plus sign it is a zone.
	if t.last == '-' && !afterZone && !t.spB && !p.seconds && n.nd != 4 {
		return 0, false
	}
	var h, m int
	end := i + 1
	switch n.nd {
	case 4:
		h, m = int(n.v/100), int(n.v%100)
	case 1, 2:
		h = int(n.v)
		if s, mn := p.tok(i+2), p.tok(i+3); s != nil && mn != nil && s.kind == tSep && s.c == ':' && !s.multi && !s.spB && mn.kind == tNum && mn.nd == 2 {
			m = int(mn.v)
			end = i + 3
		} else if !afterZone && t.last != '+' && !p.offsetRead {
			return 0, false
		}
	default:
		return 0, false
	}
	if h > 14 || m > 59 {
		return 0, false
	}
	off := (h*60 + m) * 60
	if t.last == '-' {
		off = -off
	}
	if p.offsetRead {
		if _, have := p.zoneProbe().Zone(); have != off {
			return 0, false
		}
		p.timeEnd = end
		return end, true
	}
	p.f.hasZone, p.offsetRead = true, true
	p.f.zone = fixedZone(off)
	p.timeEnd = end
	return end, true
}

// zoneProbe is an instant in the zone read so far, to ask its offset.
func (p *segParser) zoneProbe() time.Time { return time.Unix(0, 0).In(p.f.zone) }

// number reads the number at index i and whatever it forms with the tokens
// after it. It returns the index of the last token used.
func (p *segParser) number(i int, hasName bool) (int, bool) {
	t := &p.ts[i]
	v, nd := int(t.v), int(t.nd)
	if nd > 18 {
		return 0, false
	}
	f := &p.f

	// A CJK or Korean marker names the number's part: 2024年, 5월, 10時;
	// so does a Mongolian one after an ordinal suffix ("5-р сарын").
	k := p.next(i)
	if s, o := p.tok(i+1), p.tok(i+2); s != nil && o != nil && s.kind == tSep && s.c == '-' && !s.multi && !s.spB && !s.spA &&
		o.kind == tWord && o.w != nil && o.w.kind == kOrdinal {
		if m := p.next(i + 2); m > 0 {
			if w := p.wordAt(m); w != nil && w.is(kMarkM) {
				k = m
			}
		}
	}
	if k > 0 {
		if w := p.wordAt(k); w != nil {
			switch {
			case w.is(kMarkY):
				if f.hasY {
					return 0, false
				}
				f.y, f.yND, f.hasY = v, nd, true
				if p.eraBase != 0 && !p.eraNumber {
					f.y, f.yND, p.eraNumber = p.eraBase+v, 4, true
				}
				return k, true
			case w.is(kMarkM):
				if f.hasM && f.m != v {
					return 0, false
				}
				f.m, f.hasM = v, true
				return k, true
			case w.is(kMarkD):
				if f.hasD && f.d != v {
					return 0, false
				}
				f.d, f.hasD = v, true
				return k, true
			case w.is(kMarkH):
				if f.hasTime {
					return 0, false
				}
				f.hh, f.hasTime, p.markTime, p.timeEnd = v, true, true, k
				// 3点半: half past.
				if h := p.next(k); h > 0 {
					if hw := p.wordAt(h); hw != nil && hw.kind == kHalf {
						f.mm, p.timeEnd = 30, h
						return h, true
					}
				}
				return k, true
			case w.is(kMarkMin):
				if !p.markTime {
					return 0, false
				}
				f.mm, p.timeEnd = v, k
				return k, true
			case w.is(kMarkS):
				if !p.markTime {
					return 0, false
				}
				f.ss, p.timeEnd = v, k
				return k, true
			}
		}
	}

	// Japanese era year in a numeric date: 令和6.5.15.
	if p.eraBase != 0 && !p.eraNumber {
		if s := p.tok(i + 1); s == nil || s.kind != tSep || (s.c != '.' && s.c != '/' && s.c != '-') {
			return 0, false
		}
	}

	// hh:mm[:ss[.fff]]
	if s, m := p.tok(i+1), p.tok(i+2); s != nil && m != nil && s.kind == tSep && s.c == ':' && !s.multi && m.kind == tNum {
		// "06/May/2008:08:11:17": a year joined to the time by a colon, as
		// web server logs write it.
		if nd == 4 && hasName && !f.hasY {
			if c := p.tok(i + 3); c != nil && c.kind == tSep && c.c == ':' {
				f.y, f.yND, f.hasY = v, 4, true
				return i + 1, true
			}
		}
		return p.clock(i)
	}

	// 10h30, 10 Uhr, 3 बजे
	if k := p.next(i); k > 0 && nd <= 2 {
		if w := p.wordAt(k); w != nil && w.is(kHourWord) {
			if f.hasTime || v > 24 {
				return 0, false
			}
			f.hh, f.hasTime, p.timeEnd = v, true, k
			if mt := p.tok(k + 1); mt != nil && mt.kind == tNum && mt.i == p.ts[k].j && mt.nd == 2 && mt.v < 60 {
				f.mm, p.timeEnd = int(mt.v), k+1
				return k + 1, true
			}
			// "19 h 21 min", "10 Uhr 30": minutes after a space, with
			// their unit or without.
			if m := p.next(k); m > 0 && m != k+1 {
				if mt := &p.ts[m]; mt.kind == tNum && mt.nd == 2 && mt.v < 60 && !p.startsDate(m) {
					f.mm, p.timeEnd = int(mt.v), m
					if u := p.next(m); u > 0 {
						if uw := p.wordAt(u); uw != nil && uw.is(kUnit) && uw.valOf(kUnit) == uMinute {
							p.timeEnd = u
						}
					}
					return p.timeEnd, true
				}
			}
			return k, true
		}
		// 3 pm, 3pm
		if w := p.wordAt(k); w != nil && (w.kind == kAMPM || w.kind == kAMPMCtx) && v >= 1 && v <= 12 {
			if f.hasTime {
				return 0, false
			}
			f.hh, f.hasTime, f.ampm, p.timeEnd = v, true, int8(w.val), k
			return k, true
		}
	}

	// A time written with dots after a date ("15 maj 2024 10.30.00"), as
	// Nordic and Finnish sites do.
	if (p.named || f.hasY && f.hasM && f.hasD) && !f.hasTime && nd <= 2 && v <= 23 {
		if s, m := p.tok(i+1), p.tok(i+2); s != nil && m != nil && s.kind == tSep && s.c == '.' && !s.multi && !s.spB && !s.spA && m.kind == tNum && m.nd == 2 && m.v <= 59 {
			f.hh, f.mm, f.hasTime = v, int(m.v), true
			end := i + 2
			if s2, sec := p.tok(i+3), p.tok(i+4); s2 != nil && sec != nil && s2.kind == tSep && s2.c == '.' && !s2.multi && !s2.spB && !s2.spA && sec.kind == tNum && sec.nd == 2 && sec.v <= 59 {
				f.ss, p.seconds, end = int(sec.v), true, i+4
			}
			p.timeEnd = end
			return end, true
		}
	}

	// Numbers joined by one kind of separator: 15.05.2024, 2024/5/15, 5/17.
	// A number followed by ':' starts a time and is not part of the date.
	startsTime := func(k int) bool {
		c := p.tok(k + 1)
		return c != nil && c.kind == tSep && c.c == ':'
	}
	if s, n2 := p.tok(i+1), p.tok(i+2); s != nil && n2 != nil && s.kind == tSep && !s.multi && n2.kind == tNum &&
		(s.c == '-' || s.c == '/' || s.c == '.' || s.c == ' ') && !startsTime(i+2) {
		idx := [4]int{i, i + 2}
		cnt := 2
		for k := i + 2; cnt < len(idx); k += 2 {
			s2, n3 := p.tok(k+1), p.tok(k+2)
			if s2 == nil || n3 == nil || s2.kind != tSep || s2.multi || s2.c != s.c || n3.kind != tNum || startsTime(k+2) {
				break
			}
			idx[cnt] = k + 2
			cnt++
		}
		// "May 15 2024" and "May-15-2024" are a name and two numbers, not
		// a numeric date; a space only joins three numbers standing alone.
		group := !(hasName && cnt == 2 && s.c == '-')
		if s.c == ' ' {
			group = cnt == 3 && !hasName
		}
		if group {
			return p.numericDate(idx[:cnt])
		}
	}

	// A month written as a prefix and its number ("ŋ5", "o.5"): read only
	// in a complete date, since "M5" is a car too.
	if !f.hasM && v >= 1 && v <= 12 && nd <= 2 && p.monthPrefixBefore(i) {
		f.m, f.hasM, p.named, p.weakName = v, true, true, true
		return i, true
	}
	// A marker before the number names its part: "ཟླ་༥" is May.
	if w := p.wordAt(p.prevNonSep(i)); w != nil && nd <= 4 {
		switch {
		case w.is(kPreY) && !f.hasY:
			f.y, f.yND, f.hasY = v, nd, true
			return i, true
		case w.is(kPreM) && !f.hasM && v >= 1 && v <= 12:
			f.m, f.hasM = v, true
			return i, true
		case w.is(kPreD) && !f.hasD && nd <= 2:
			f.d, f.hasD = v, true
			return i, true
		}
	}
	if nd == 8 && !hasName && !f.hasDate() {
		// YYYYMMDD
		f.y, f.m, f.d, f.yND = v/10000, v/100%100, v%100, 4
		f.hasY, f.hasM, f.hasD = true, true, true
		return i, true
	}
	if p.nLoose == len(p.loose) {
		return 0, false
	}
	p.loose[p.nLoose] = looseNum{v: v, nd: nd, before: !p.named}
	p.nLoose++
	return i, true
}

// monthPrefixBefore reports whether the number at i follows a month prefix
// (tables.monthPrefixes), glued to it or after one dot.
func (p *segParser) monthPrefixBefore(i int) bool {
	k := i - 1
	if s := p.tok(k); s != nil && s.kind == tSep && s.c == '.' && !s.multi && !s.spB && !s.spA {
		k--
	}
	w := p.tok(k)
	return w != nil && w.kind == tWord && (k == i-2 || w.j == p.ts[i].i) && wordTables().monthPrefixes[string(p.buf[w.i:w.j])]
}

// startsDate reports whether the number at i is joined to another number
// by a date separator ("10 Uhr 15.05.2024"): then it is no minute.
func (p *segParser) startsDate(i int) bool {
	s, n := p.tok(i+1), p.tok(i+2)
	return s != nil && n != nil && s.kind == tSep && n.kind == tNum && (s.c == '.' || s.c == '/' || s.c == '-')
}

// clock reads hh:mm[:ss[.fff]] starting at index i.
func (p *segParser) clock(i int) (int, bool) {
	f := &p.f
	h, m := p.ts[i], p.ts[i+2]
	if f.hasTime || h.nd > 2 || m.nd > 2 || h.v > 24 || m.v > 59 {
		return 0, false
	}
	f.hh, f.mm, f.hasTime = int(h.v), int(m.v), true
	p.shortClock = m.nd == 1
	end := i + 2
	if s, sec := p.tok(i+3), p.tok(i+4); s != nil && sec != nil && s.kind == tSep && s.c == ':' && !s.multi && sec.kind == tNum {
		if sec.nd > 2 || sec.v > 59 {
			return 0, false
		}
		f.ss = int(sec.v)
		p.seconds = true
		p.shortClock = p.shortClock || sec.nd == 1
		end = i + 4
		// Milliseconds after a dot, a comma or, in some logs, a colon.
		if s, fr := p.tok(i+5), p.tok(i+6); s != nil && fr != nil && s.kind == tSep && (s.c == '.' || s.c == ',' || s.c == ':' && fr.nd == 3) && !s.multi && !s.spB && !s.spA && fr.kind == tNum && fr.nd <= 9 {
			ns := int(fr.v)
			for d := int(fr.nd); d < 9; d++ {
				ns *= 10
			}
			f.ns = ns
			end = i + 6
		}
	}
	if f.hh == 24 && (f.mm != 0 || f.ss != 0 || f.ns != 0) {
		return 0, false
	}
	p.timeEnd = end
	return end, true
}

// numericDate reads a date written as numbers only, using the day/month
// order for the forms that need it.
func (p *segParser) numericDate(idx []int) (int, bool) {
	f := &p.f
	if f.hasDate() {
		return 0, false
	}
	last := idx[len(idx)-1]
	if len(idx) == 2 {
		a, b := p.ts[idx[0]], p.ts[idx[1]]
		sep := p.ts[idx[0]+1].c
		// A month of a year: "2024-05" (ISO 8601), "05/2024", "05.2024".
		switch {
		case a.nd == 4 && b.nd == 2 && sep == '-':
			f.y, f.m = int(a.v), int(b.v)
		case a.nd == 2 && b.nd == 4 && (sep == '/' || sep == '.' || sep == '-'), a.nd == 1 && b.nd == 4 && sep == '/':
			f.y, f.m = int(b.v), int(a.v)
		}
		if f.y != 0 {
			if f.m < 1 || f.m > 12 {
				return 0, false
			}
			f.yND, f.hasY, f.hasM, p.numMonth = 4, true, true, true
			return last, true
		}
		if a.nd > 2 || b.nd > 2 {
			return 0, false
		}
		f.pair, f.pa, f.pb = true, int(a.v), int(b.v)
		return last, true
	}
	if len(idx) != 3 {
		return 0, false
	}
	a, b, c := p.ts[idx[0]], p.ts[idx[1]], p.ts[idx[2]]
	if a.nd > 4 || b.nd > 2 || c.nd > 4 || a.nd == 3 || c.nd == 3 {
		return 0, false
	}
	if p.eraBase != 0 && !p.eraNumber {
		f.y, f.m, f.d, f.yND = p.eraBase+int(a.v), int(b.v), int(c.v), 4
		f.hasY, f.hasM, f.hasD, f.ymdForm, p.eraNumber = true, true, true, true, true
		return last, true
	}
	y, m, d, ynd, yFirst, ok := resolveTriple(int(a.v), int(a.nd), int(b.v), int(c.v), int(c.nd), p.order)
	// A year is written with two digits at least: "1.2.3" is a version.
	if !ok || ynd < 2 {
		return 0, false
	}
	f.y, f.m, f.d, f.yND, f.ymdForm = y, m, d, ynd, yFirst
	f.hasY, f.hasM, f.hasD = true, true, true
	return last, true
}

// resolveTriple places three numbers as year, month and day. A four-digit
// number is the year wherever it stands, and a number above 12 cannot be a
// month; only what is left ambiguous follows the order. It returns the
// digits of the year so that two-digit years can be widened later, and
// whether the year came first.
func resolveTriple(a, and, b, c, cnd int, order byte) (y, m, d, ynd int, yFirst, ok bool) {
	switch {
	case and == 4 || a > 31:
		return a, b, c, and, true, b >= 1 && b <= 12 && c >= 1 && c <= 31
	case cnd == 4 || c > 31:
		// D/M/Y or M/D/Y: the day above 12 decides; otherwise the order.
		switch {
		case a > 12 && b <= 12:
			return c, b, a, cnd, false, b >= 1 && a <= 31
		case b > 12 && a <= 12:
			return c, a, b, cnd, false, a >= 1 && b <= 31
		case order == 'M':
			return c, a, b, cnd, false, a >= 1 && b >= 1 && b <= 31
		default:
			return c, b, a, cnd, false, b >= 1 && a >= 1 && a <= 31 && b <= 12
		}
	}
	// All three have one or two digits: the order decides, and when its
	// reading is impossible the first possible reading of the others wins.
	tries := [3]byte{order, 'D', 'M'}
	if order != 'Y' {
		tries[2] = 'Y'
		if order == 'D' {
			tries[1] = 'M'
		}
	}
	for _, o := range tries {
		switch o {
		case 'Y':
			y, m, d, ynd = a, b, c, and
		case 'M':
			y, m, d, ynd = c, a, b, cnd
		default:
			y, m, d, ynd = c, b, a, cnd
		}
		if m >= 1 && m <= 12 && d >= 1 && d <= 31 {
			return y, m, d, ynd, o == 'Y', true
		}
	}
	return 0, 0, 0, 0, false, false
}

// word reads the word at index i and returns the index of the last token
// it used.
func (p *segParser) word(i int) (int, bool) {
	ok := p.word1(i)
	if ok && p.skipTo > i {
		return p.skipTo, true
	}
	return i, ok
}

func (p *segParser) word1(i int) bool {
	t := &p.ts[i]
	w := t.w
	f := &p.f
	if n := i + 1; w == nil && n < len(p.ts) && (p.ts[n].kind == tNum || n+1 < len(p.ts) && p.ts[n+1].kind == tNum) {
		// "ŋ5": the prefix of a month written with its number.
		k := n
		if p.ts[n].kind != tNum {
			k = n + 1
		}
		return p.monthPrefixBefore(k)
	}
	if w == nil {
		return false
	}
	switch {
	case w.kind != kZone && w.is(kZone) && f.hasTime && !f.hasZone && p.prevNonSep(i) == p.timeEnd:
		// Right after a time a zone name is a zone, whatever else the word
		// is ("PT" is also Friday in Polish).
		f.hasZone, f.zone = true, zoneLocation(w.valOf(kZone))
		return true
	case w.is(kAMPMCtx):
		// "am" after a time is a meridiem; elsewhere it is the German "on".
		if p.f.hasTime && p.prevNonSep(i) == p.timeEnd {
			f.ampm = int8(w.valOf(kAMPMCtx))
			p.timeEnd = i
		}
		return true
	case w.kind == kMonth || w.kind == kJalali || w.kind2 == kMonth:
		m := w.val
		if w.kind != kMonth && w.kind != kJalali {
			m = w.val2
		}
		if p.named || f.hasM && f.m != m {
			return false
		}
		f.m, f.hasM, f.jalali, p.named = m, true, w.kind == kJalali, true
		p.weakName = p.weakName || w.weak
		// A month alone must be written in full: "May", "Mar" and "ara"
		// are words too.
		word := p.buf[t.i:t.j]
		r, _ := utf8.DecodeRune(word)
		n := utf8.RuneCount(word)
		p.monthPlain = w.kind2 == kNone && (n >= 4 || !isLatinLike(r) && (n >= 3 || isCJK(r) && n >= 2))
		return true
	case w.kind == kOrdinal:
		if prev := p.tok(i - 1); prev != nil && prev.kind == tNum && p.nLoose > 0 && p.loose[p.nLoose-1].v == int(prev.v) {
			p.loose[p.nLoose-1].ordinal = true
			return true
		}
		return w.kind2 == kFiller
	case w.kind == kWeekday || w.kind2 == kWeekday:
		v := w.valOf(kWeekday)
		if p.hasWD && p.wd != v {
			return false
		}
		word := p.buf[t.i:t.j]
		r, _ := utf8.DecodeRune(word)
		p.hasWD, p.wd = true, v
		p.weakName = p.weakName || w.weak
		p.wdShort = isLatinLike(r) && utf8.RuneCount(word) < 3
		return true
	case w.kind == kAMPM:
		f.ampm = int8(w.val)
		if f.hasTime && p.prevNonSep(i) == p.timeEnd {
			p.timeEnd = i
		}
		return true
	case w.kind == kZone:
		z := &zoneTable[w.val]
		if !f.hasTime && z.off != 0 {
			// Zone abbreviations follow a time; before one they are words
			// of other languages ("pet" is Friday in Croatian). UTC and GMT
			// are read anywhere.
			return false
		}
		if f.hasZone {
			// "+0900 (JST)": the name repeats the offset.
			return true
		}
		f.hasZone, f.zone = true, zoneLocation(w.val)
		return true
	case w.kind == kEra:
		if p.eraBase != 0 {
			return false
		}
		p.eraBase = w.val
		// 令和元年: the first year.
		if k := p.next(i); k > 0 {
			if cw := p.wordAt(k); cw != nil && cw.kind == kCount && cw.val == 1 {
				if y := p.next(k); y > 0 {
					if yw := p.wordAt(y); yw != nil && yw.is(kMarkY) {
						f.y, f.yND, f.hasY, p.eraNumber = w.val+1, 4, true, true
						p.skipTo = y
					}
				}
			}
		}
		return true
	case w.is(kMarkM) || w.is(kMarkD):
		// (月) and (日) are weekdays when they stand alone in brackets.
		prev, next := p.tok(i-1), p.tok(i+1)
		return prev != nil && next != nil && prev.kind == tSep && next.kind == tSep && prev.last == '(' && next.c == ')'
	case w.kind == kFiller || w.kind2 == kFiller, w.kind == kRangeStart, w.kind == kRangeSep, w.kind == kPreY, w.kind == kPreM, w.kind == kPreD:
		return true
	case w.kind == kRelDay && p.skipRel:
		return true
	case w.is(kHourWord) && f.hasTime && p.prevNonSep(i) == p.timeEnd:
		// "10:30 Uhr", "15.00 h".
		return true
	}
	return false
}

// placeLoose gives the numbers read alone their parts: next to a month
// name, a four-digit number is the year, an ordinal is the day, and of two
// short numbers the first is the day.
func (p *segParser) placeLoose() bool {
	f := &p.f
	ls := p.loose[:p.nLoose]
	if len(ls) == 0 {
		return true
	}
	if !f.hasM || f.pair {
		// Without a month only a lone day can be read, and only as one end
		// of a range ("15–17 May"); the caller checks that. A pair may
		// still be followed by its year ("5/17 2024").
		for _, l := range ls {
			switch {
			case l.nd == 4 && !f.hasY:
				f.y, f.yND, f.hasY = l.v, 4, true
			case !f.pair && l.nd <= 2 && !f.hasD:
				// "17, 2024" at the end of "May 15–17, 2024".
				f.d, f.hasD = l.v, true
			default:
				return false
			}
		}
		return true
	}
	var rest [6]looseNum
	n := 0
	for _, l := range ls {
		switch {
		case l.nd >= 3:
			if f.hasY || l.nd != 4 {
				return false
			}
			f.y, f.yND, f.hasY = l.v, 4, true
		case l.ordinal:
			if f.hasD {
				return false
			}
			f.d, f.hasD = l.v, true
		default:
			rest[n] = l
			n++
		}
	}
	switch {
	case n == 0:
	case n == 1 && !f.hasD:
		f.d, f.hasD = rest[0].v, true
	case n == 1 && !f.hasY:
		f.y, f.yND, f.hasY = rest[0].v, rest[0].nd, true
	case n == 2 && !f.hasD && !f.hasY:
		// "15 May 24" is day then year; with year-first order and both
		// before the name, "24 05 May"-like text reads year first.
		dy, yy := rest[0], rest[1]
		if p.order == 'Y' && rest[0].before && rest[1].before {
			dy, yy = rest[1], rest[0]
		}
		f.d, f.hasD = dy.v, true
		f.y, f.yND, f.hasY = yy.v, yy.nd, true
	default:
		return false
	}
	return true
}

// applyAMPM moves the hour into the afternoon for pm and to midnight for
// 12 am.
func (p *segParser) applyAMPM() bool {
	f := &p.f
	if f.ampm < 0 {
		return true
	}
	if !f.hasTime || f.hh > 12 {
		// "pm" without a time, or "15:00 pm": not a time anyone wrote.
		return f.hasTime && f.hh <= 23 && f.ampm == 1
	}
	if f.ampm == 1 && f.hh < 12 {
		f.hh += 12
	} else if f.ampm == 0 && f.hh == 12 {
		f.hh = 0
	}
	return true
}

// partial reads what the fields name when they are no complete day:
// a month alone or with its year ("March", "February 2015", "2024-05"), a
// weekday alone or with a time ("Friday", "Mon 19:43"), or a time alone
// ("10:30", "3 pm"), which is today at that time.
func (p *segParser) partial(op *opts) (crawlkeeper.ParsedDate, bool) {
	f := &p.f
	fail := crawlkeeper.ParsedDate{}
	switch {
	case f.pair || f.hasD || f.jalali:
		return fail, false
	case f.hasM:
		if f.hasTime || p.hasWD || !p.named && !p.numMonth || p.named && !f.hasY && !p.monthPlain {
			return fail, false
		}
		// A month name alone, without its year, is read only when the
		// source names its language: the tables hold the months of every
		// language, and alone such a word is more often a name or a word
		// of another language ("Augusta", "Marc", "Mars", "march").
		if p.named && !f.hasY && op.locale == "" && len(op.langs) == 0 {
			return fail, false
		}
		y := 0
		if f.hasY {
			y = f.y
			if f.yND <= 2 {
				y = widenYear(y)
			}
			if y < 1 || y > 9999 {
				return fail, false
			}
		}
		return monthReading(y, f.m, op), true
	case f.hasY:
		return fail, false
	}
	loc := op.loc
	if f.hasZone {
		loc = f.zone
	}
	var day time.Time
	switch {
	case p.hasWD:
		if p.wdShort && !f.hasTime {
			return fail, false
		}
		day = nearestWeekday(op, time.Weekday(p.wd))
	case f.hasTime && (!p.shortClock || p.seconds || f.ampm >= 0):
		// "16:9" and "2:1" are ratios and scores; "5:7:51 PM" is a time.
		y, m, d := op.now.In(loc).Date()
		day = time.Date(y, m, d, 0, 0, 0, 0, loc)
	default:
		return fail, false
	}
	if !f.hasTime {
		return crawlkeeper.ParsedDate{Time: day, DateOnly: true}, true
	}
	y, m, d := day.Date()
	return crawlkeeper.ParsedDate{Time: time.Date(y, m, d, f.hh, f.mm, f.ss, f.ns, loc)}, true
}

// widenYear reads a two-digit year as the standard library does: 69-99
// are 1969-1999, 00-68 are 2000-2068.
func widenYear(y int) int {
	if y < 69 {
		return y + 2000
	}
	return y + 1900
}

// resolvePair reads an unresolved numeric pair as month and day.
func (f *fields) resolvePair(order byte) bool {
	if !f.pair {
		return true
	}
	a, b := f.pa, f.pb
	m, d := a, b
	if order == 'D' {
		m, d = b, a
	}
	if m > 12 && d <= 12 {
		m, d = d, m
	}
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return false
	}
	f.m, f.d, f.hasM, f.hasD, f.pair = m, d, true, true, false
	return true
}

// complete reports whether the fields name a day.
func (f *fields) complete() bool { return f.hasM && f.hasD && !f.pair }

// build turns complete fields into a time. A missing year is the year of
// now in the zone the date is read in.
func (f *fields) build(loc *time.Location, now time.Time) (time.Time, bool) {
	if !f.complete() {
		return time.Time{}, false
	}
	if f.hasZone {
		loc = f.zone
	}
	y := f.y
	if f.jalali {
		if !f.hasY {
			y = jalaliYear(now.In(loc))
		} else if y >= 1700 || y < 1 {
			return time.Time{}, false
		}
		gy, gm, gd, ok := jalaliToGregorian(y, f.m, f.d)
		if !ok {
			return time.Time{}, false
		}
		return time.Date(gy, time.Month(gm), gd, f.hh, f.mm, f.ss, f.ns, loc), true
	}
	switch {
	case !f.hasY:
		y = now.In(loc).Year()
	case f.yND <= 2:
		// Two-digit years follow the standard library's rule: 69-99 are
		// 1969-1999, 00-68 are 2000-2068.
		if y < 69 {
			y += 2000
		} else {
			y += 1900
		}
	}
	if y < 1 || y > 9999 || f.m < 1 || f.m > 12 || f.d < 1 || f.d > daysIn(y, f.m) {
		return time.Time{}, false
	}
	return time.Date(y, time.Month(f.m), f.d, f.hh, f.mm, f.ss, f.ns, loc), true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
