package recrawl

import (
	"context"
	"math"
)

// NutchConfig is Apache Nutch's AdaptiveFetchSchedule with its generator,
// as the simulator runs it. Field names follow nutch-default.xml.
type NutchConfig struct {
	// DefaultInterval is db.fetch.interval.default (seconds): the
	// interval of a newly injected page.
	DefaultInterval float64
	// IncRate and DecRate are db.fetch.schedule.adaptive.inc_rate and
	// dec_rate: the interval grows by IncRate after an unchanged fetch and
	// shrinks by DecRate after a changed one.
	IncRate, DecRate float64
	// MinInterval and MaxInterval are db.fetch.schedule.adaptive.
	// min_interval and max_interval (seconds).
	MinInterval, MaxInterval float64
	// SyncDelta and SyncDeltaRate are db.fetch.schedule.adaptive.
	// sync_delta and sync_delta_rate: shift the next fetch towards the
	// page's last modification. They act only when the fetch reports a
	// modification time (LastModified); otherwise Nutch takes the fetch
	// time as the modification time and the shift is 0.
	SyncDelta     bool
	SyncDeltaRate float64
	// MaxFetchInterval is db.fetch.interval.max (seconds): a page
	// scheduled further ahead is pulled back by the generator.
	MaxFetchInterval float64
	// LastModified makes the simulated server send a true Last-Modified
	// header (the page's last change), which feeds SyncDelta. Off by
	// default: crawlkeeper sees content, not headers, and the advisor gets
	// no such help.
	LastModified bool
	// Fill makes the generator fill a tick's unused budget with the pages
	// due soonest. Nutch's Generator does not (it selects only pages
	// whose fetch time has come), so it is off by default.
	Fill bool
}

// DefaultNutchConfig is nutch-default.xml's configuration: a 30-day
// default interval, inc_rate 0.4, dec_rate 0.2, min_interval 60 s,
// max_interval 365 days, sync_delta true with rate 0.3, and
// db.fetch.interval.max 90 days.
func DefaultNutchConfig() NutchConfig {
	return NutchConfig{
		DefaultInterval:  30 * day,
		IncRate:          0.4,
		DecRate:          0.2,
		MinInterval:      60,
		MaxInterval:      365 * day,
		SyncDelta:        true,
		SyncDeltaRate:    0.3,
		MaxFetchInterval: 90 * day,
	}
}

// The fetch states of Nutch's FetchSchedule.
const (
	nutchUnknown = iota
	nutchModified
	nutchNotModified
)

// nutchPage is a CrawlDatum's schedule.
type nutchPage struct {
	fetchTime    float64
	interval     float64
	modifiedTime float64
	fetched      bool
}

// schedule is AdaptiveFetchSchedule.setFetchSchedule: the page's next
// fetch time after a fetch at fetchTime in the given state. modifiedTime
// is what the fetch reported (< 0 when unknown).
func (c NutchConfig) schedule(p *nutchPage, fetchTime, modifiedTime float64, state int) {
	interval := p.interval
	if interval == 0 {
		interval = c.DefaultInterval
	}
	refTime := fetchTime
	if modifiedTime < 0 {
		modifiedTime = fetchTime
	}
	switch state {
	case nutchModified:
		interval *= 1 - c.DecRate
		modifiedTime = fetchTime
	case nutchNotModified:
		interval *= 1 + c.IncRate
	}
	if c.SyncDelta {
		delta := fetchTime - modifiedTime
		if delta > interval {
			interval = delta
		}
		refTime = fetchTime - math.Round(delta*c.SyncDeltaRate)
	}
	interval = math.Max(c.MinInterval, math.Min(interval, c.MaxInterval))
	p.interval = interval
	p.fetchTime = refTime + interval
	p.modifiedTime = modifiedTime
	// AbstractFetchSchedule.shouldFetch: a page scheduled beyond
	// db.fetch.interval.max is made due at the next generation.
	if p.fetchTime-fetchTime > c.MaxFetchInterval {
		if p.interval > c.MaxFetchInterval {
			p.interval = math.Round(c.MaxFetchInterval * 0.9)
		}
		p.fetchTime = fetchTime
	}
}

// nutchPolicy is the generator over the CrawlDb: at most the tick's budget
// of the pages whose fetch time has come, earliest first.
type nutchPolicy struct {
	cfg   NutchConfig
	pages []nutchPage
	queue timeHeap
}

func newNutchPolicy(cfg NutchConfig, n int) *nutchPolicy {
	p := &nutchPolicy{cfg: cfg, pages: make([]nutchPage, n)}
	p.queue.init(n)
	return p
}

func (p *nutchPolicy) inject(i int, t float64) {
	// AbstractFetchSchedule.initializeSchedule: due now, default interval.
	p.pages[i] = nutchPage{fetchTime: t, interval: p.cfg.DefaultInterval}
	p.queue.push(i, t)
}

// start injects every page, due at once.
func (p *nutchPolicy) start(s *sim) {
	for i := 0; i < s.exists; i++ {
		p.inject(i, 0)
	}
}

func (p *nutchPolicy) next(_ context.Context, _ *sim, t float64, k int) ([]int, error) {
	var list []int
	for len(list) < k && p.queue.len() > 0 {
		i, at := p.queue.min()
		if at > t && !p.cfg.Fill {
			break
		}
		p.queue.pop()
		list = append(list, i)
	}
	return list, nil
}

func (p *nutchPolicy) fetched(s *sim, i int, t float64, changed bool) {
	pg := &p.pages[i]
	state := nutchUnknown
	if pg.fetched {
		state = nutchNotModified
		if changed {
			state = nutchModified
		}
	}
	pg.fetched = true
	mod := -1.0
	if p.cfg.LastModified {
		mod = s.pages[i].lastChange
	}
	p.cfg.schedule(pg, t, mod, state)
	p.queue.push(i, pg.fetchTime)
}

func (p *nutchPolicy) added(_ *sim, i int, t float64) { p.inject(i, t) }

// timeHeap is a min-heap of pages by time; each page is in it at most once.
type timeHeap struct {
	items []int
	key   []float64
	pos   []int
}

func (h *timeHeap) init(n int) {
	h.key = make([]float64, n)
	h.pos = make([]int, n)
	for i := range h.pos {
		h.pos[i] = -1
	}
}

func (h *timeHeap) len() int { return len(h.items) }

func (h *timeHeap) less(a, b int) bool {
	ia, ib := h.items[a], h.items[b]
	if h.key[ia] != h.key[ib] {
		return h.key[ia] < h.key[ib]
	}
	return ia < ib
}

func (h *timeHeap) swap(a, b int) {
	h.items[a], h.items[b] = h.items[b], h.items[a]
	h.pos[h.items[a]], h.pos[h.items[b]] = a, b
}

func (h *timeHeap) up(j int) {
	for j > 0 {
		parent := (j - 1) / 2
		if !h.less(j, parent) {
			return
		}
		h.swap(j, parent)
		j = parent
	}
}

func (h *timeHeap) down(j int) {
	n := len(h.items)
	for {
		l := 2*j + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, j) {
			return
		}
		h.swap(j, m)
		j = m
	}
}

// push adds page i at time t, or moves it there if it is queued.
func (h *timeHeap) push(i int, t float64) {
	h.key[i] = t
	if j := h.pos[i]; j >= 0 {
		h.up(j)
		h.down(h.pos[i])
		return
	}
	h.items = append(h.items, i)
	h.pos[i] = len(h.items) - 1
	h.up(len(h.items) - 1)
}

func (h *timeHeap) min() (int, float64) {
	i := h.items[0]
	return i, h.key[i]
}

func (h *timeHeap) pop() int {
	i := h.items[0]
	last := len(h.items) - 1
	h.swap(0, last)
	h.items = h.items[:last]
	h.pos[i] = -1
	if last > 0 {
		h.down(0)
	}
	return i
}
