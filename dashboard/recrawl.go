package dashboard

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// The recrawl page: for each source, the estimated share of its records
// whose stored copy is current, and what the freshness-optimal schedule
// would keep at other daily budgets (what doubling the crawl would buy).
// The figures read every active record's counters, so the page keeps them
// for recrawlTTL.

const recrawlTTL = time.Minute

type recrawlCache struct {
	mu      sync.Mutex
	at      time.Time
	sources []crawlkeeper.SourceFreshness
}

type recrawlData struct {
	Sources []recrawlSource
	At      time.Time
}

type recrawlSource struct {
	crawlkeeper.SourceFreshness
	// Doubled is the freshness the optimal schedule keeps at twice the
	// budget; zero when the source has no budget of its own.
	Doubled float64
	Chart   Chart
}

func (d *dash) recrawl(w http.ResponseWriter, r *http.Request, v *view) error {
	now := d.o.Now()
	c := &d.recrawlCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sources == nil || now.Sub(c.at) >= recrawlTTL || now.Before(c.at) {
		st, err := d.o.Store.Stats(r.Context())
		if err != nil {
			return err
		}
		var names []string
		for name, ss := range st.Sources {
			if ss.Active > 0 {
				names = append(names, name)
			}
		}
		adv := &crawlkeeper.Advisor{Store: d.o.Store, Now: d.o.Now}
		out, err := adv.FreshnessAll(r.Context(), names)
		if err != nil {
			return err
		}
		c.sources, c.at = out, now
	}
	data := recrawlData{At: c.at}
	for _, sf := range c.sources {
		s := recrawlSource{SourceFreshness: sf, Chart: BudgetChart(sf)}
		for _, p := range sf.Curve {
			if sf.Budget > 0 && p.Budget == 2*sf.Budget {
				s.Doubled = p.Freshness
			}
		}
		data.Sources = append(data.Sources, s)
	}
	v.Title, v.Nav, v.Data = "Recrawl", "recrawl", data
	d.render(w, "recrawl", v)
	return nil
}

// BudgetChart draws a source's freshness curve: the share of records the
// optimal schedule keeps current at each daily budget, and the share
// current now as a flat line to compare with.
func BudgetChart(sf crawlkeeper.SourceFreshness) Chart {
	c := Chart{Kind: "lines", Percent: true, XLabel: "fetches per day",
		Series: []Series{{Label: "optimal freshness"}, {Label: "fresh now"}}}
	for i, p := range sf.Curve {
		c.X = append(c.X, float64(i))
		label := fmt.Sprintf("%.0f", p.Budget)
		if sf.Budget > 0 && p.Budget == sf.Budget {
			label += " (now)"
		}
		c.Labels = append(c.Labels, label)
		c.Series[0].Values = append(c.Series[0].Values, val(p.Freshness))
		c.Series[1].Values = append(c.Series[1].Values, val(sf.FreshNow))
	}
	return c
}
