// Package demo simulates crawls of several sites for `crawlkeeper demo`:
// crawl rounds over target lists, items that repeat, change, carry
// deadlines in several date formats and languages, disappear, and rarely
// filled fields that show up now and then. Everything is driven by a
// clock, so the demo can run days of crawling in minutes.
package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Ingest stores items as one crawler delivery.
type Ingest func(ctx context.Context, items []map[string]any, meta crawlkeeper.Meta) error

// Site is one simulated site.
type site struct {
	name    string
	targets []string
	// every is the time between rounds; crawlFor how long a round's
	// crawl takes.
	every, crawlFor time.Duration
	// perTarget is how many postings a target lists at once.
	perTarget int
	// life is how many rounds a posting stays listed.
	life    func(r *rand.Rand) int
	item    func(r *rand.Rand, p *posting, now time.Time) map[string]any
	round   int
	next    time.Time
	plan    []visit
	posting map[string][]*posting
	seq     int
	// degraded marks a round that loses most salaries (an incident).
	degraded bool
}

type posting struct {
	id       int
	target   string
	revision int
	until    int // last round it is listed in
	deadline time.Time
	rare     bool
}

type visit struct {
	at     time.Time
	round  int
	target string
	fail   bool
}

// Sim is the simulated crawl.
type Sim struct {
	Ingest  Ingest
	Monitor crawlkeeper.Monitor
	sites   []*site
	r       *rand.Rand
	// anchor, when set, places the incidents (see Incidents).
	anchor time.Time
}

// Config returns the configuration the demo runs with: per-source time
// zones, date orders and archive rules that show every feature.
func Config() string {
	return `defaults:
  max_age: 30d
sources:
  jobs.example.com:
    locale: en-US
    timezone: America/New_York
    stale_after: 2d
    watch_fields: [visa_sponsorship, salary]
  uni.example.jp:
    timezone: Asia/Tokyo
    languages: [ja]
  events.example.de:
    timezone: Europe/Berlin
    languages: [de]
  news.example.fr:
    languages: [fr]
    max_age: 7d
monitor:
  bucket: 10m
  samples: 5
archive:
  batch: 500
# The demo's data lives in a temporary folder: fast commits matter more
# than surviving a power loss, so a week of simulated past is written in
# seconds.
store:
  durability: normal
# Rules that the demo's incidents (see demo.Incidents) set off: a round
# that stalls, a source that stops delivering, a coverage drop. Like every
# time in the demo, alerts.every is simulated time: an hour of it passes
# every 5 seconds at the default speed.
alerts:
  every: 1h
  rules:
    - name: events-round-stalled
      kind: round_stalled
      round_prefix: events-
      buckets: 6
    - name: news-stopped-delivering
      kind: ingest_stopped
      source: news.example.fr
      for: 4h
    - name: jobs-salary-coverage
      kind: fill_rate
      source: jobs.example.com
      field: salary
      threshold: 0.5
    - name: unreadable-dates
      kind: date_errors
      threshold: 0.2
    - name: dead-letters
      kind: dead_letters
      threshold: 10
`
}

// New returns a simulation starting at start.
func New(ingest Ingest, mon crawlkeeper.Monitor, start time.Time, seed uint64) *Sim {
	r := rand.New(rand.NewPCG(seed, 7))
	names := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s-%03d", prefix, i+1)
		}
		return out
	}
	s := &Sim{Ingest: ingest, Monitor: mon, r: r}
	s.sites = []*site{
		{name: "jobs.example.com", targets: names("company", 120), every: 6 * time.Hour, crawlFor: 3 * time.Hour, perTarget: 3,
			life: func(r *rand.Rand) int { return 2 + r.IntN(12) }, item: jobItem},
		{name: "uni.example.jp", targets: names("university", 60), every: 12 * time.Hour, crawlFor: 4 * time.Hour, perTarget: 2,
			life: func(r *rand.Rand) int { return 4 + r.IntN(20) }, item: uniItem},
		{name: "events.example.de", targets: names("venue", 80), every: 8 * time.Hour, crawlFor: 2 * time.Hour, perTarget: 2,
			life: func(r *rand.Rand) int { return 3 + r.IntN(10) }, item: eventItem},
		{name: "news.example.fr", targets: names("section", 30), every: 3 * time.Hour, crawlFor: time.Hour, perTarget: 5,
			life: func(r *rand.Rand) int { return 1 + r.IntN(6) }, item: newsItem},
	}
	for i, st := range s.sites {
		st.posting = map[string][]*posting{}
		st.next = start.Add(time.Duration(i) * 20 * time.Minute)
	}
	// The jobs crawler runs between the others' rounds; the incidents'
	// windows count on these offsets (a whole number of every-intervals
	// from start to the anchor keeps them).
	s.sites[0].next = start.Add(3 * time.Hour)
	return s
}

// Shrink keeps one target in n of each site, for tests that need the
// simulation's shape more than its volume. Call it before the first Step.
func (s *Sim) Shrink(n int) {
	for _, st := range s.sites {
		var keep []string
		for i, t := range st.targets {
			if i%n == 0 {
				keep = append(keep, t)
			}
		}
		st.targets = keep
	}
}

// The incidents repeat every incidentPeriod. Each happens in a window
// around the anchor (and around the anchor plus or minus whole periods),
// so a demo anchored at its start shows all of them going on at once,
// with earlier occurrences already in the history.
const incidentPeriod = 48 * time.Hour

// window is a span around the anchor: from is negative (before it), to
// after from, both within one period.
type window struct{ from, to time.Duration }

var (
	// The news crawler is down: no round starts, no page is fetched.
	// Its last round before the window ends ten hours before the anchor.
	newsOutage = window{-8 * time.Hour, 16 * time.Hour}
	// The events crawler hangs: its visits wait until the window ends.
	// The round started 7h20m before the anchor has done two thirds of
	// its targets; the next one starts 40 minutes after the anchor and
	// waits too.
	eventsStall = window{-6 * time.Hour, 6 * time.Hour}
	// The jobs site changed its layout: the round started three hours
	// before the anchor (the newest at the anchor) loses most salaries.
	jobsCoverage = window{-4 * time.Hour, -2 * time.Hour}
)

// Incidents makes the simulation misbehave around anchor, and every 48
// simulated hours before and after it: the news site stops delivering
// for a day, the events crawler stalls for 15 hours, and a jobs round
// loses most of its salaries. The demo's alert rules (Config) fire on
// each.
func (s *Sim) Incidents(anchor time.Time) { s.anchor = anchor }

// in reports whether t falls in an occurrence of w, and when that
// occurrence ends.
func (s *Sim) in(w window, t time.Time) (bool, time.Time) {
	if s.anchor.IsZero() {
		return false, time.Time{}
	}
	phase := t.Sub(s.anchor) % incidentPeriod
	if phase < 0 {
		phase += incidentPeriod
	}
	switch {
	case phase < w.to:
		return true, t.Add(w.to - phase)
	case phase >= incidentPeriod+w.from && phase < incidentPeriod+w.to:
		return true, t.Add(incidentPeriod + w.to - phase)
	}
	return false, time.Time{}
}

// Step runs everything due at now: new rounds start, planned visits
// deliver their items.
func (s *Sim) Step(ctx context.Context, now time.Time) error {
	for _, st := range s.sites {
		if !now.Before(st.next) {
			if down, _ := s.in(newsOutage, st.next); !(down && st.name == newsSite) {
				if err := s.startRound(ctx, st, st.next); err != nil {
					return err
				}
			}
			st.next = st.next.Add(st.every)
		}
		var due []visit
		for len(st.plan) > 0 && !st.plan[0].at.After(now) {
			due = append(due, st.plan[0])
			st.plan = st.plan[1:]
		}
		for _, v := range due {
			if down, _ := s.in(newsOutage, v.at); down && st.name == newsSite {
				continue
			}
			if err := s.visit(ctx, st, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// Task is work done at intervals of simulated time while Replay runs.
type Task struct {
	Every time.Duration
	Run   func(ctx context.Context, now time.Time) error
}

// Replay runs the simulation from from to to in steps of step, setting
// the clock (set) before each one, so a week of crawling is written
// through the normal ingest path with the times it would have had. Each
// task runs whenever its interval has passed, and once more at to.
func (s *Sim) Replay(ctx context.Context, from, to time.Time, step time.Duration, set func(time.Time), tasks ...Task) error {
	last := make([]time.Time, len(tasks))
	for i := range last {
		last[i] = from
	}
	for now := from; ; now = now.Add(step) {
		if now.After(to) {
			now = to
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		set(now)
		if err := s.Step(ctx, now); err != nil {
			return err
		}
		for i, t := range tasks {
			if now.Sub(last[i]) >= t.Every || now.Equal(to) {
				if err := t.Run(ctx, now); err != nil {
					return err
				}
				last[i] = now
			}
		}
		if !now.Before(to) {
			return nil
		}
	}
}

func (s *Sim) roundName(st *site, round int) string {
	return fmt.Sprintf("%s-%d", strings.SplitN(st.name, ".", 2)[0], round)
}

const (
	newsSite   = "news.example.fr"
	eventsSite = "events.example.de"
	jobsSite   = "jobs.example.com"
)

func (s *Sim) startRound(ctx context.Context, st *site, at time.Time) error {
	st.round++
	st.degraded, _ = s.in(jobsCoverage, at)
	st.degraded = st.degraded && st.name == jobsSite
	if _, err := s.Monitor.Queue(ctx, crawlkeeper.QueueRequest{Round: s.roundName(st, st.round), Targets: st.targets, At: at}); err != nil {
		return err
	}
	// Visit every target once, spread over the crawl; a few fail, and the
	// crawler slows down halfway through some rounds (visible as a dip in
	// the throughput chart).
	order := s.r.Perm(len(st.targets))
	// Visits of an earlier round still planned (a stalled crawl catching
	// up) stay in the plan.
	for i, k := range order {
		frac := float64(i) / float64(len(order))
		if st.round%3 == 0 && frac > 0.5 {
			frac = 0.5 + (frac-0.5)*1.6
		}
		v := visit{at: at.Add(time.Duration(frac * float64(st.crawlFor))), round: st.round, target: st.targets[k], fail: s.r.IntN(40) == 0}
		if st.name == eventsSite {
			// A hung crawler: what it should have fetched in the window
			// comes when it recovers, spread over ten minutes.
			if stalled, end := s.in(eventsStall, v.at); stalled {
				v.at = end.Add(time.Duration(frac * float64(10*time.Minute)))
			}
		}
		st.plan = append(st.plan, v)
	}
	sort.SliceStable(st.plan, func(i, j int) bool { return st.plan[i].at.Before(st.plan[j].at) })
	return nil
}

func (s *Sim) visit(ctx context.Context, st *site, v visit) error {
	if v.fail {
		_, err := s.Monitor.Mark(ctx, []crawlkeeper.Mark{{Round: s.roundName(st, v.round), Target: v.target, Kind: crawlkeeper.MarkFailed, At: v.at}})
		return err
	}
	// The target's current listing: postings past their life are gone
	// (the site stopped listing them), new ones appear, some change.
	var live []*posting
	for _, p := range st.posting[v.target] {
		if p.until >= st.round {
			live = append(live, p)
		}
	}
	for len(live) < st.perTarget {
		st.seq++
		p := &posting{id: st.seq, target: v.target, until: st.round + st.life(s.r), rare: s.r.IntN(25) == 0,
			deadline: v.at.Add(time.Duration(2+s.r.IntN(20)) * 24 * time.Hour)}
		live = append(live, p)
	}
	st.posting[v.target] = live
	items := make([]map[string]any, 0, len(live))
	for _, p := range live {
		if s.r.IntN(6) == 0 {
			p.revision++
		}
		it := st.item(s.r, p, v.at)
		if st.degraded && p.id%5 != 0 {
			it["salary"] = ""
		}
		items = append(items, it)
	}
	return s.Ingest(ctx, items, crawlkeeper.Meta{Source: st.name, Round: s.roundName(st, v.round), Target: v.target, CrawledAt: v.at.Format(time.RFC3339)})
}

var (
	roles   = []string{"Data Engineer", "Site Reliability Engineer", "Backend Developer", "ML Engineer", "Product Analyst", "Frontend Developer"}
	cities  = []string{"New York", "Austin", "Seattle", "Remote", "Chicago", "Denver"}
	faculty = []string{"工学研究科", "理学研究科", "経済学研究科", "文学研究科", "医学研究科"}
	events  = []string{"Tag der offenen Tür", "Konzert", "Vortrag", "Workshop", "Lesung", "Flohmarkt"}
	topics  = []string{"Le conseil municipal vote le budget", "Nouvelle ligne de tramway", "La bibliothèque prolonge ses horaires", "Travaux sur le pont", "Festival d'été"}
	moisFR  = []string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}
	monatDE = []string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}
)

func jobItem(r *rand.Rand, p *posting, now time.Time) map[string]any {
	d := p.deadline.In(time.FixedZone("EST", -5*3600))
	formats := []string{d.Format("January 2, 2006"), d.Format("01/02/2006"), d.Format("2006-01-02"), d.Format("Jan 2, 2006 3:04 PM")}
	it := map[string]any{
		"title":      fmt.Sprintf("%s (%s)", roles[p.id%len(roles)], strings.ToUpper(p.target[8:])),
		"url":        fmt.Sprintf("https://jobs.example.com/%s/%d", p.target, p.id),
		"company":    p.target,
		"location":   cities[p.id%len(cities)],
		"salary":     fmt.Sprintf("$%d", 90000+5000*((p.id+p.revision)%9)),
		"deadline":   formats[p.id%len(formats)],
		"scraped_at": now.Format(time.RFC3339),
	}
	if p.id%23 == 0 {
		it["deadline"] = "Open until filled"
	}
	if p.rare {
		it["visa_sponsorship"] = "yes"
	} else {
		it["visa_sponsorship"] = ""
	}
	return it
}

func uniItem(r *rand.Rand, p *posting, now time.Time) map[string]any {
	d := p.deadline.In(time.FixedZone("JST", 9*3600))
	y, m, day := d.Date()
	formats := []string{fmt.Sprintf("令和%d年%d月%d日", y-2018, int(m), day), fmt.Sprintf("%d年%d月%d日", y, int(m), day), fmt.Sprintf("%d.%d.%d", y, int(m), day)}
	it := map[string]any{
		"title":    fmt.Sprintf("%d年度 %s 大学院入試 募集要項 (%s)", y+1, faculty[p.id%len(faculty)], p.target),
		"url":      fmt.Sprintf("https://uni.example.jp/%s/admissions/%d", p.target, p.id),
		"deadline": formats[p.id%len(formats)],
		"capacity": fmt.Sprintf("%d名", 10+(p.id+p.revision)%30),
	}
	if p.rare {
		it["scholarship"] = "給付型奨学金あり"
	}
	return it
}

func eventItem(r *rand.Rand, p *posting, now time.Time) map[string]any {
	d := p.deadline.In(time.FixedZone("CET", 3600))
	it := map[string]any{
		"title":        fmt.Sprintf("%s im %s", events[p.id%len(events)], p.target),
		"url":          fmt.Sprintf("https://events.example.de/%s/%d", p.target, p.id),
		"event_date":   fmt.Sprintf("%d. %s %d, %02d:00 Uhr", d.Day(), monatDE[d.Month()-1], d.Year(), 18+p.id%4),
		"closing_date": d.AddDate(0, 0, -1).Format("02.01.2006"),
		"price":        fmt.Sprintf("%d €", 5+(p.id+p.revision)%20),
	}
	return it
}

func newsItem(r *rand.Rand, p *posting, now time.Time) map[string]any {
	pub := now.Add(-time.Duration(p.id%48) * time.Hour)
	return map[string]any{
		"title":     fmt.Sprintf("%s (%d)", topics[p.id%len(topics)], p.id),
		"url":       fmt.Sprintf("https://news.example.fr/%s/%d", p.target, p.id),
		"published": fmt.Sprintf("%d %s %d", pub.Day(), moisFR[pub.Month()-1], pub.Year()),
		"body":      strings.Repeat("Le texte de l'article. ", 5+p.revision),
	}
}
