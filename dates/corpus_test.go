package dates

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// The corpus (testdata/corpus/*.tsv and testdata/nondates.txt) is labelled
// text from several sources: public formats and site snippets written by
// hand, and per-language cases generated from the GNU C library's locales,
// the Unicode CLDR and go-dateparser's relative words (gencorpus.py says
// how). TestCorpus reads all of it against corpusNow without language
// hints, as a source without configuration would, and prints recall per
// language. Set CORPUS_MISSES to a file name to list what was not read.

// corpusNow is the moment relative cases are read against: a Wednesday.
var corpusNow = time.Date(2024, 5, 22, 15, 4, 5, 0, time.UTC)

// Targets asserted on the corpus (see TestCorpus).
const (
	minRecall         = 0.95
	minRelativeRecall = 0.90
	maxFalsePo        = 0.02
)

type corpusCase struct {
	file, lang, kind, in, want string
	opts                       string // as written
	order                      string
	hint, start, up            bool
}

// key names a case in testdata/library-alone.tsv.
func (c *corpusCase) key() string {
	return c.file + "\t" + c.in + "\t" + c.want + "\t" + c.opts
}

// libraryAloneFile records which cases go-dateparser alone reads
// (TestCorpusLibraryAlone writes it).
const libraryAloneFile = "testdata/library-alone.tsv"

// loadLibraryAlone reads libraryAloneFile: case key -> read.
func loadLibraryAlone(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(libraryAloneFile)
	if err != nil {
		t.Fatalf("%v: run CORPUS_LIBRARY=1 go test -run TestCorpusLibraryAlone ./dates", err)
	}
	m := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, '\t')
		m[line[:i]] = line[i+1:] == "1"
	}
	return m
}

func loadCorpus(t *testing.T) (cases []corpusCase, negatives []string) {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus/*.tsv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files: %v", err)
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		line := 0
		for sc.Scan() {
			line++
			s := sc.Text()
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			cols := strings.Split(s, "\t")
			if len(cols) < 4 {
				t.Fatalf("%s:%d: %d columns, want language, kind, input, want[, options]", name, line, len(cols))
			}
			c := corpusCase{file: filepath.Base(name), lang: cols[0], kind: cols[1], in: cols[2], want: cols[3]}
			if c.kind != "abs" && c.kind != "rel" {
				t.Fatalf("%s:%d: kind %q, want abs or rel", name, line, c.kind)
			}
			if len(cols) > 4 {
				c.opts = cols[4]
				for _, o := range strings.Split(cols[4], ",") {
					switch o {
					case "":
					case "dmy", "mdy", "ymd":
						c.order = strings.ToUpper(o)
					case "hint":
						c.hint = true
					case "start":
						c.start = true
					case "up":
						c.up = true
					default:
						t.Fatalf("%s:%d: unknown option %q", name, line, o)
					}
				}
			}
			if _, err := parseWant(c.want); err != nil {
				t.Fatalf("%s:%d: %v", name, line, err)
			}
			cases = append(cases, c)
		}
		f.Close()
	}
	f, err := os.Open("testdata/nondates.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		s := sc.Text()
		if s == "" || strings.HasPrefix(s, "# ") || s == "#" {
			continue
		}
		negatives = append(negatives, s)
	}
	return cases, negatives
}

// parseWant reads an expected reading: a day (YYYY-MM-DD) or an instant.
func parseWant(s string) (time.Time, error) {
	if len(s) == 10 {
		return time.Parse(time.DateOnly, s)
	}
	return time.Parse(time.RFC3339Nano, s)
}

// check reports whether got is the expected reading: the same day for a
// day, the same instant for an instant.
func (c *corpusCase) check(got crawlkeeper.ParsedDate) bool {
	want, _ := parseWant(c.want)
	if len(c.want) == 10 {
		return got.Time.Format(time.DateOnly) == c.want
	}
	return got.Time.Equal(want)
}

func (c *corpusCase) options() crawlkeeper.DateOptions {
	o := crawlkeeper.DateOptions{Location: time.UTC, Now: corpusNow, Order: c.order, RangeStart: c.start, Upcoming: c.up}
	if c.hint {
		o.Languages = []string{c.lang}
	}
	return o
}

func TestCorpus(t *testing.T) {
	cases, negatives := loadCorpus(t)
	if len(cases) < 3000 || len(negatives) < 300 {
		t.Fatalf("corpus too small: %d cases, %d non-dates", len(cases), len(negatives))
	}
	stride, negStride := 1, 1
	if raceEnabled || testing.Short() {
		// The race detector slows the library tenfold: read a sample.
		stride, negStride = 24, 4
	}
	p := New()
	type result struct {
		ok  bool
		got string
	}
	res := make([]result, len(cases))
	neg := make([]string, len(negatives))
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range jobs {
				if i < len(cases) {
					c := &cases[i]
					d, err := p.ParseDate(c.in, c.options())
					res[i].ok = err == nil && c.check(d)
					if err == nil {
						res[i].got = d.Time.Format(time.RFC3339)
					} else {
						res[i].got = "error"
					}
					continue
				}
				k := i - len(cases)
				if d, err := p.ParseDate(negatives[k], crawlkeeper.DateOptions{Now: corpusNow}); err == nil {
					neg[k] = d.Time.Format(time.RFC3339)
				}
			}
		})
	}
	for i := 0; i < len(cases); i += stride {
		jobs <- i
	}
	for k := 0; k < len(negatives); k += negStride {
		jobs <- len(cases) + k
	}
	close(jobs)
	wg.Wait()

	lib := loadLibraryAlone(t)
	type tally struct{ abs, absOK, rel, relOK int }
	add := func(tl *tally, kind string, ok bool) {
		if kind == "abs" {
			tl.abs++
			if ok {
				tl.absOK++
			}
		} else {
			tl.rel++
			if ok {
				tl.relOK++
			}
		}
	}
	byLang := map[string]*tally{}
	byFile := map[string]*tally{}
	var all, written, libAll, ofLib tally
	var misses []string
	for i := 0; i < len(cases); i += stride {
		c := &cases[i]
		ok := res[i].ok
		for _, tl := range []*tally{lookup(byLang, c.lang), lookup(byFile, c.file), &all} {
			add(tl, c.kind, ok)
		}
		if c.file == "formats.tsv" || c.file == "sites.tsv" {
			add(&written, c.kind, ok)
		}
		libRead, known := lib[c.key()]
		if !known {
			t.Fatalf("%s: %q is not in %s: run CORPUS_LIBRARY=1 go test -run TestCorpusLibraryAlone ./dates", c.file, c.in, libraryAloneFile)
		}
		add(&libAll, c.kind, libRead)
		if libRead {
			add(&ofLib, c.kind, ok)
		}
		if !ok {
			misses = append(misses, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\tgot %s", c.file, c.lang, c.kind, c.in, c.want, res[i].got))
		}
	}
	var fps []string
	checked := 0
	for k := 0; k < len(negatives); k += negStride {
		checked++
		if got := neg[k]; got != "" {
			fps = append(fps, fmt.Sprintf("%q read as %s", negatives[k], got))
		}
	}

	pct := func(a, b int) string {
		if b == 0 {
			return "    -"
		}
		return fmt.Sprintf("%5.1f", 100*float64(a)/float64(b))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "recall by language (absolute ok/n %%, relative ok/n %%):\n")
	langs := make([]string, 0, len(byLang))
	for l := range byLang {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	for i, l := range langs {
		tl := byLang[l]
		fmt.Fprintf(&b, "  %-4s %4d/%-4d %s  %3d/%-3d %s", l, tl.absOK, tl.abs, pct(tl.absOK, tl.abs), tl.relOK, tl.rel, pct(tl.relOK, tl.rel))
		if i%2 == 1 {
			b.WriteByte('\n')
		} else {
			b.WriteString("   |")
		}
	}
	fmt.Fprintf(&b, "\nby source:\n")
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	sort.Strings(files)
	line := func(name string, tl tally) {
		fmt.Fprintf(&b, "  %-34s absolute %5d/%-5d %s%%  relative %4d/%-4d %s%%\n", name, tl.absOK, tl.abs, pct(tl.absOK, tl.abs), tl.relOK, tl.rel, pct(tl.relOK, tl.rel))
	}
	for _, f := range files {
		line(f, *byFile[f])
	}
	line("all", all)
	line("go-dateparser alone, all", libAll)
	line("of what go-dateparser alone reads", ofLib)
	fmt.Fprintf(&b, "%d languages; non-dates read as dates: %d/%d %s%%\n", len(langs), len(fps), checked, pct(len(fps), checked))
	t.Log("\n" + b.String())
	for _, fp := range fps {
		t.Logf("false positive: %s", fp)
	}
	if name := os.Getenv("CORPUS_MISSES"); name != "" {
		os.WriteFile(name, []byte(strings.Join(misses, "\n")+"\n"), 0o644)
	}

	atLeast := func(what string, ok, n int, min float64) {
		if n > 0 && float64(ok)/float64(n) < min {
			t.Errorf("%s: %d/%d read (%.1f%%), want at least %.0f%%", what, ok, n, 100*float64(ok)/float64(n), 100*min)
		}
	}
	// Public formats and site text: read nearly all.
	atLeast("absolute dates of public formats and sites", written.absOK, written.abs, minRecall)
	atLeast("relative dates of sites", written.relOK, written.rel, minRecall)
	// Every language: keep what the library knows (the guard and the fast
	// path must not hide it) and read at least as much as it does.
	atLeast("absolute dates go-dateparser alone reads", ofLib.absOK, ofLib.abs, minRecall)
	atLeast("relative dates go-dateparser alone reads", ofLib.relOK, ofLib.rel, minRecall)
	// The whole corpus, every language: the recall the parser is held to
	// on text it was not tuned on (95% absolute, 90% relative), checked
	// on the full corpus only, as a sample's share moves by a few points.
	if stride == 1 {
		atLeast("absolute dates, all languages", all.absOK, all.abs, minRecall)
		atLeast("relative dates, all languages", all.relOK, all.rel, minRelativeRecall)
	}
	// The guard gives up a few of the library's readings (two-letter words
	// without a hint: "na" is "now" in Norwegian, and "NA" is no date), so
	// the whole is compared, not each kind.
	if ours, its := all.absOK+all.relOK, libAll.absOK+libAll.relOK; ours < its {
		t.Errorf("reads fewer dates than go-dateparser alone: %d < %d", ours, its)
	}
	if r := float64(len(fps)) / float64(checked); r > maxFalsePo {
		t.Errorf("%.1f%% of non-dates read as dates, want at most %.0f%%", 100*r, 100*maxFalsePo)
	}
}

func lookup[T any](m map[string]*T, k string) *T {
	v := m[k]
	if v == nil {
		v = new(T)
		m[k] = v
	}
	return v
}
