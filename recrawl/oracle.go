package recrawl

import (
	"context"
	"math"
	"sort"
	"strconv"
	"strings"
)

// oraclePolicy is the freshness-optimal schedule computed from the true
// rates: each page fetched at the regular interval 1/f_i of the optimal
// allocation of the budget (Cho and Garcia-Molina show that, for a given
// frequency, regular intervals are the best order). Pages that never
// change are fetched once; pages too fast for the budget never. Each tick
// it fetches the pages whose time has come, earliest first, and fills the
// rest of the tick's budget with those due soonest, so that the random
// bunching of due times wastes no budget.
type oraclePolicy struct {
	rates []float64
	freq  []float64
	queue timeHeap
}

func newOraclePolicy(w *world) *oraclePolicy {
	n := w.cfg.Pages
	freqs, mu := Allocate(w.rates[:n], w.cfg.Budget/day)
	o := &oraclePolicy{rates: w.rates, freq: append(freqs, Frequency(w.rates[n], mu))}
	o.queue.init(len(w.rates))
	return o
}

func (o *oraclePolicy) worth(i int) bool { return o.freq[i] > 0 || o.rates[i] == 0 }

func (o *oraclePolicy) start(s *sim) {
	for i := 0; i < s.exists; i++ {
		if o.worth(i) {
			o.queue.push(i, 0)
		}
	}
}

func (o *oraclePolicy) next(_ context.Context, _ *sim, _ float64, k int) ([]int, error) {
	var list []int
	for len(list) < k && o.queue.len() > 0 {
		list = append(list, o.queue.pop())
	}
	return list, nil
}

func (o *oraclePolicy) fetched(_ *sim, i int, t float64, _ bool) {
	if f := o.freq[i]; f > 0 && !math.IsInf(f, 1) {
		o.queue.push(i, t+1/f)
	}
}

func (o *oraclePolicy) added(_ *sim, i int, t float64) {
	if o.worth(i) {
		o.queue.push(i, t)
	}
}

// indexPolicy ranks like the advisor but with the true rates: never-fetched
// pages first, then the fetched ones by Marginal(λ, time since the last
// fetch), the whole tick's budget spent. It separates what the advisor
// loses to estimating rates from what its ranking rule loses to the
// oracle's schedule.
type indexPolicy struct{}

func (indexPolicy) start(*sim)                       {}
func (indexPolicy) fetched(*sim, int, float64, bool) {}
func (indexPolicy) added(*sim, int, float64)         {}

func (indexPolicy) next(_ context.Context, s *sim, t float64, k int) ([]int, error) {
	var list []int
	type scored struct {
		i int
		v float64
	}
	var rest []scored
	for i := 0; i < s.exists; i++ {
		p := &s.pages[i]
		if !p.fetched {
			if len(list) < k {
				list = append(list, i)
			}
			continue
		}
		if v := Marginal(p.rate, t-p.lastFetch); v > 0 {
			rest = append(rest, scored{i, v})
		}
	}
	sort.Slice(rest, func(a, b int) bool {
		if rest[a].v != rest[b].v {
			return rest[a].v > rest[b].v
		}
		return rest[a].i < rest[b].i
	})
	for _, r := range rest {
		if len(list) >= k {
			break
		}
		list = append(list, r.i)
	}
	return list, nil
}

// knownAfterPolicy is the advisor told each page's true rate once it has
// fetched the page K times: before that the page is ranked from what the
// store kept, as the advisor ranks it, after that by Marginal(λ, time
// since the last fetch) with the true λ, as the index policy ranks it. It
// measures what learning is worth, not a policy anyone could run: no
// estimator knows a rate exactly after K-1 intervals, so what it reaches
// is about the best a learner that sees only changed or unchanged could
// hope for with the advisor's schedule for its first K fetches. K = 1 is
// the index policy.
type knownAfterPolicy struct {
	adv   *advisorPolicy
	k     int
	count []int // fetches of each page so far
}

// knownAfter reads a "known-after-K" policy name.
func knownAfter(name string) (int, bool) {
	k, err := strconv.Atoi(strings.TrimPrefix(name, PolicyKnownAfter))
	return k, strings.HasPrefix(name, PolicyKnownAfter) && err == nil && k >= 1
}

func (p *knownAfterPolicy) start(s *sim)                             { p.count = make([]int, len(s.pages)) }
func (p *knownAfterPolicy) fetched(_ *sim, i int, _ float64, _ bool) { p.count[i]++ }
func (p *knownAfterPolicy) added(*sim, int, float64)                 {}

// next merges the two rankings on the advisor's tiers: pages never
// fetched, then the advisor's probes (youngest first), then every due
// page and, with Fill, every other page, by the value of a fetch now
// (the advisor's posterior expectation for pages it still learns, the
// true value for the others).
func (p *knownAfterPolicy) next(ctx context.Context, s *sim, t float64, k int) ([]int, error) {
	a := p.adv
	recs, err := a.store.Stats(ctx)
	if err != nil {
		return nil, err
	}
	a.refit(recs, t)
	var learning []Record
	for _, r := range recs {
		if p.count[a.index[r.Name]] < p.k {
			learning = append(learning, r)
		}
	}
	var plan Plan
	if len(learning) > 0 {
		// The threshold μ depends on the budget per record: the
		// learning records get their share of the budget, so that their
		// μ is the one over every record.
		budget := a.budget * float64(len(learning)) / float64(len(recs))
		plan, err = Advise(Request{Prior: a.prior, Records: learning, Budget: budget, Now: a.origin.Add(secondsDuration(t)), Limit: k, Fill: a.fill})
		if err != nil {
			return nil, err
		}
	}
	var list []int
	for i := 0; i < s.exists && len(list) < k; i++ {
		if !s.pages[i].fetched {
			list = append(list, i)
		}
	}
	var ranked []candidate
	for _, it := range plan.Items {
		c := candidate{i: a.index[it.Name], key: it.Gain * day}
		switch {
		case it.Probe:
			c.tier, c.key = tierProbe, -it.SinceFetch.Seconds()
		case it.Due:
			c.tier = tierDue
		}
		ranked = append(ranked, c)
	}
	mu := a.prior.threshold(tables(), len(recs), a.budget/day)
	for i := 0; i < s.exists; i++ {
		pg := &s.pages[i]
		if !pg.fetched || p.count[i] < p.k {
			continue
		}
		c := candidate{i: i, key: Marginal(pg.rate, t-pg.lastFetch)}
		if mu > 0 && c.key >= mu {
			c.tier = tierDue
		} else if !a.fill || c.key <= 0 {
			continue
		}
		ranked = append(ranked, c)
	}
	sort.Slice(ranked, func(x, y int) bool { return ranked[x].better(ranked[y]) })
	for _, c := range ranked {
		if len(list) >= k {
			break
		}
		list = append(list, c.i)
	}
	return list, nil
}
