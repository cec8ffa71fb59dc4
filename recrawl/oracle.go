package recrawl

import (
	"context"
	"math"
	"sort"
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
