package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"
)

// Now is the benchmark's clock: every generated time is relative to it.
var Now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

var (
	sources   = []string{"jobs.example", "news.example", "events.example", "uni.example", "shop.example"}
	cities    = []string{"Berlin", "Lyon", "Osaka", "Toronto", "Kraków", "São Paulo", "Seoul", "Madrid"}
	companies = []string{"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell"}
	words     = []string{"data", "platform", "team", "build", "reliable", "pipelines", "customers", "growth", "remote", "senior", "research", "campus", "students", "admission", "deadline", "apply", "program", "engineering"}
)

// deadline renders a date in one of the formats sites use, in several
// languages, so the ingest path reads realistic strings.
func deadline(r *rand.Rand, t time.Time) string {
	y, m, d := t.Date()
	switch r.IntN(10) {
	case 0, 1, 2:
		return t.Format("2006-01-02")
	case 3:
		return t.Format(time.RFC3339)
	case 4:
		return t.Format("January 2, 2006")
	case 5:
		return t.Format("02.01.2006")
	case 6:
		return fmt.Sprintf("%d年%d月%d日", y, int(m), d)
	case 7:
		return fmt.Sprintf("%d de %s de %d", d, []string{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"}[m-1], y)
	case 8:
		return t.Format("2 Jan 2006 15:04")
	default:
		return fmt.Sprintf("%d. %s %d", d, []string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}[m-1], y)
	}
}

// Item returns the i-th generated item at a content revision. Revision 0
// is the first crawl; a higher revision changes the description and
// salary, as a site editing a posting would. One item in a hundred was
// first crawled two months ago, so an age rule of 30 days finds 1% due.
func Item(i, revision int) map[string]any {
	r := rand.New(rand.NewPCG(uint64(i), 42))
	src := sources[i%len(sources)]
	desc := make([]byte, 0, 400)
	for len(desc) < 360 {
		desc = append(desc, words[r.IntN(len(words))]...)
		desc = append(desc, ' ')
	}
	crawled := Now.Add(-time.Duration(1+r.IntN(600)) * time.Minute)
	if i%100 == 0 {
		crawled = Now.AddDate(0, -2, 0)
	}
	it := map[string]any{
		"_source":     src,
		"_crawled_at": crawled.Format(time.RFC3339),
		"title":       fmt.Sprintf("%s %s #%d", companies[r.IntN(len(companies))], words[r.IntN(len(words))], i),
		"url":         fmt.Sprintf("https://%s/posting/%d", src, i),
		"city":        cities[r.IntN(len(cities))],
		"description": string(desc),
		"salary":      fmt.Sprintf("%d EUR", 40000+r.IntN(60000)+revision*1000),
		"deadline":    deadline(r, Now.AddDate(0, 1+r.IntN(10), r.IntN(28))),
		"scraped_at":  Now.Format(time.RFC3339),
	}
	if revision > 0 {
		it["description"] = fmt.Sprintf("[revised %d] %s", revision, it["description"])
	}
	return it
}

// NDJSON encodes items [from, to) at a revision as JSON lines.
func NDJSON(from, to, revision int) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := from; i < to; i++ {
		enc.Encode(Item(i, revision))
	}
	return buf.Bytes()
}
