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

// Targets asserted on the corpus.
const (
	minRecall  = 0.95
	maxFalsePo = 0.02
)

type corpusCase struct {
	file, lang, kind, in, want string
	order                      string
	hint, start, up            bool
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
	stride := 1
	if raceEnabled || testing.Short() {
		// The race detector slows the library tenfold: read a sample.
		stride = 12
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
	for k := range negatives {
		jobs <- len(cases) + k
	}
	close(jobs)
	wg.Wait()

	type tally struct{ abs, absOK, rel, relOK int }
	byLang := map[string]*tally{}
	byFile := map[string]*tally{}
	var all tally
	var misses []string
	for i := 0; i < len(cases); i += stride {
		c := &cases[i]
		for _, tl := range []*tally{lookup(byLang, c.lang), lookup(byFile, c.file), &all} {
			if c.kind == "abs" {
				tl.abs++
				if res[i].ok {
					tl.absOK++
				}
			} else {
				tl.rel++
				if res[i].ok {
					tl.relOK++
				}
			}
		}
		if !res[i].ok {
			misses = append(misses, fmt.Sprintf("%s\t%s\t%s\t%s\t%s\tgot %s", c.file, c.lang, c.kind, c.in, c.want, res[i].got))
		}
	}
	var fps []string
	for k, got := range neg {
		if got != "" {
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
	for _, f := range files {
		tl := byFile[f]
		fmt.Fprintf(&b, "  %-14s absolute %5d/%-5d %s%%  relative %4d/%-4d %s%%\n", f, tl.absOK, tl.abs, pct(tl.absOK, tl.abs), tl.relOK, tl.rel, pct(tl.relOK, tl.rel))
	}
	fmt.Fprintf(&b, "all: %d languages, absolute %d/%d %s%%, relative %d/%d %s%%; non-dates read as dates %d/%d %s%%\n",
		len(langs), all.absOK, all.abs, pct(all.absOK, all.abs), all.relOK, all.rel, pct(all.relOK, all.rel), len(fps), len(negatives), pct(len(fps), len(negatives)))
	t.Log("\n" + b.String())
	for _, fp := range fps {
		t.Logf("false positive: %s", fp)
	}
	if name := os.Getenv("CORPUS_MISSES"); name != "" {
		os.WriteFile(name, []byte(strings.Join(misses, "\n")+"\n"), 0o644)
	}

	if r := float64(all.absOK) / float64(all.abs); r < minRecall {
		t.Errorf("absolute recall %.1f%%, want at least %.0f%%", 100*r, 100*minRecall)
	}
	if r := float64(all.relOK) / float64(all.rel); r < minRecall {
		t.Errorf("relative recall %.1f%%, want at least %.0f%%", 100*r, 100*minRecall)
	}
	if r := float64(len(fps)) / float64(len(negatives)); r > maxFalsePo {
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
