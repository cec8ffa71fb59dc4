package dates

import (
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	dps "github.com/markusmobius/go-dateparser"
)

// TestCorpusLibraryAlone measures go-dateparser alone on the corpus, for
// comparison with TestCorpus. It is slow and runs only with
// CORPUS_LIBRARY=1; CORPUS_LIBRARY_OUT names a file for its per-case
// results.
func TestCorpusLibraryAlone(t *testing.T) {
	if os.Getenv("CORPUS_LIBRARY") == "" {
		t.Skip("set CORPUS_LIBRARY=1 to measure go-dateparser alone on the corpus")
	}
	cases, negatives := loadCorpus(t)
	ok := make([]bool, len(cases))
	neg := make([]bool, len(negatives))
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			lib := &dps.Parser{}
			for i := range jobs {
				cfg := &dps.Configuration{CurrentTime: corpusNow, DefaultTimezone: time.UTC, ReturnTimeAsPeriod: true}
				if i >= len(cases) {
					_, err := lib.Parse(cfg, negatives[i-len(cases)])
					neg[i-len(cases)] = err == nil
					continue
				}
				c := &cases[i]
				switch c.order {
				case "MDY":
					cfg.DateOrder = dps.MDY
				case "DMY":
					cfg.DateOrder = dps.DMY
				case "YMD":
					cfg.DateOrder = dps.YMD
				}
				d, err := lib.Parse(cfg, c.in)
				ok[i] = err == nil && c.check(crawlkeeper.ParsedDate{Time: d.Time})
			}
		})
	}
	for i := range len(cases) + len(negatives) {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	var abs, absOK, rel, relOK, fp int
	var out []byte
	for i, c := range cases {
		if c.kind == "abs" {
			abs++
		} else {
			rel++
		}
		if ok[i] {
			if c.kind == "abs" {
				absOK++
			} else {
				relOK++
			}
		}
		r := "miss"
		if ok[i] {
			r = "ok"
		}
		out = append(out, c.file+"\t"+c.lang+"\t"+c.kind+"\t"+c.in+"\t"+r+"\n"...)
	}
	for _, b := range neg {
		if b {
			fp++
		}
	}
	if name := os.Getenv("CORPUS_LIBRARY_OUT"); name != "" {
		os.WriteFile(name, out, 0o644)
	}
	t.Logf("go-dateparser alone: absolute %d/%d %.1f%%, relative %d/%d %.1f%%, non-dates read %d/%d",
		absOK, abs, 100*float64(absOK)/float64(abs), relOK, rel, 100*float64(relOK)/float64(rel), fp, len(negatives))
}
