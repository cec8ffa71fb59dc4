package dashboard

import (
	"encoding/json"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// Chart is what assets/app.js hands to uPlot: the x values, one or more
// series over them, and how to draw them. Pages carry it as JSON in a
// data-chart attribute, so no inline script is needed.
type Chart struct {
	// Kind is "bars" or "lines".
	Kind string `json:"kind"`
	// Time says X holds Unix seconds; otherwise X holds 0..n-1 and Labels
	// names each position.
	Time   bool      `json:"time"`
	X      []float64 `json:"x"`
	Labels []string  `json:"labels,omitempty"`
	// XLabel names the x values of a category chart in the legend.
	XLabel string `json:"xlabel,omitempty"`
	// Percent says values are fractions, shown as percentages.
	Percent bool     `json:"percent,omitempty"`
	Series  []Series `json:"series"`
}

// Series is one line or set of bars; nil values are gaps.
type Series struct {
	Label  string     `json:"label"`
	Values []*float64 `json:"values"`
}

// Points counts the non-null values over all series.
func (c Chart) Points() int {
	n := 0
	for _, s := range c.Series {
		for _, v := range s.Values {
			if v != nil {
				n++
			}
		}
	}
	return n
}

// JSON renders the chart for the data-chart attribute.
func (c Chart) JSON() string {
	b, err := json.Marshal(c)
	if err != nil {
		return "{}"
	}
	return string(b)
}

func val(f float64) *float64 { return &f }

// ThroughputChart draws a round's targets done per bucket, oldest bucket
// first.
func ThroughputChart(buckets []crawlkeeper.BucketCount) Chart {
	bs := slices.Clone(buckets)
	sort.Slice(bs, func(i, j int) bool { return bs[i].Start.Before(bs[j].Start) })
	c := Chart{Kind: "bars", Time: true, Series: []Series{{Label: "targets done"}}}
	for _, b := range bs {
		c.X = append(c.X, float64(b.Start.Unix()))
		c.Series[0].Values = append(c.Series[0].Values, val(float64(b.Done)))
	}
	return c
}

// FillRateChart draws the fill rate of each field per round. Rounds are
// placed in roundOrder (the monitor's order, oldest first); rounds not in
// it follow in name order. A field without items in a round has a gap.
func FillRateChart(fields []crawlkeeper.FieldReport, roundOrder []string) Chart {
	seen := map[string]bool{}
	for _, f := range fields {
		for r := range f.FillRateByRound {
			seen[r] = true
		}
	}
	var rounds []string
	for _, r := range roundOrder {
		if seen[r] {
			rounds = append(rounds, r)
			delete(seen, r)
		}
	}
	rest := make([]string, 0, len(seen))
	for r := range seen {
		rest = append(rest, r)
	}
	slices.Sort(rest)
	rounds = append(rounds, rest...)
	c := Chart{Kind: "lines", Labels: rounds, XLabel: "round", Percent: true}
	for i := range rounds {
		c.X = append(c.X, float64(i))
	}
	for _, f := range fields {
		s := Series{Label: f.Source + "/" + f.Field}
		for _, r := range rounds {
			if v, ok := f.FillRateByRound[r]; ok {
				s.Values = append(s.Values, val(v))
			} else {
				s.Values = append(s.Values, nil)
			}
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// MovesChart draws the records each archive pass moved, by reason, in
// the order the passes started.
func MovesChart(runs []crawlkeeper.ArchiveReport) Chart {
	rs := slices.Clone(runs)
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].StartedAt.Before(rs[j].StartedAt) })
	c := Chart{Kind: "lines", Time: true}
	for _, reason := range crawlkeeper.ArchiveReasons {
		c.Series = append(c.Series, Series{Label: string(reason)})
	}
	for _, r := range rs {
		c.X = append(c.X, float64(r.StartedAt.Unix()))
		for i, reason := range crawlkeeper.ArchiveReasons {
			c.Series[i].Values = append(c.Series[i].Values, val(float64(r.ByReason[reason])))
		}
	}
	return c
}

// lifetimeBins are the upper bounds of the lifetime histogram's bins; the
// last bin is open.
var lifetimeBins = []struct {
	upTo  time.Duration
	label string
}{
	{time.Hour, "< 1h"},
	{6 * time.Hour, "1–6h"},
	{24 * time.Hour, "6–24h"},
	{3 * 24 * time.Hour, "1–3d"},
	{7 * 24 * time.Hour, "3–7d"},
	{14 * 24 * time.Hour, "1–2w"},
	{30 * 24 * time.Hour, "2w–30d"},
	{90 * 24 * time.Hour, "30–90d"},
	{math.MaxInt64, "≥ 90d"},
}

// LifetimeChart draws a histogram of archived records' lifetimes.
func LifetimeChart(ls []crawlkeeper.Lifetime) Chart {
	counts := make([]float64, len(lifetimeBins))
	for _, l := range ls {
		for i, b := range lifetimeBins {
			if l.Lifetime < b.upTo {
				counts[i]++
				break
			}
		}
	}
	c := Chart{Kind: "bars", XLabel: "lifetime", Series: []Series{{Label: "records"}}}
	for i, b := range lifetimeBins {
		c.X = append(c.X, float64(i))
		c.Labels = append(c.Labels, b.label)
		c.Series[0].Values = append(c.Series[0].Values, val(counts[i]))
	}
	return c
}

// SourceChange is one source's content changes per week.
type SourceChange struct {
	Source  string
	PerWeek float64
}

// TopChanges orders sources by changes per week, most first, and keeps n.
func TopChanges(stats map[string]*crawlkeeper.SourceStats, n int) []SourceChange {
	var out []SourceChange
	for src, s := range stats {
		if s != nil && s.ChangesPerWeek != nil {
			out = append(out, SourceChange{Source: src, PerWeek: *s.ChangesPerWeek})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].PerWeek != out[j].PerWeek {
			return out[i].PerWeek > out[j].PerWeek
		}
		return out[i].Source < out[j].Source
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// ChangesChart draws changes per week for the given sources, in order.
func ChangesChart(top []SourceChange) Chart {
	c := Chart{Kind: "bars", XLabel: "source", Series: []Series{{Label: "changes per week"}}}
	for i, s := range top {
		c.X = append(c.X, float64(i))
		c.Labels = append(c.Labels, s.Source)
		c.Series[0].Values = append(c.Series[0].Values, val(s.PerWeek))
	}
	return c
}

// FreshnessChart splits the active records by processing state: processed
// within the period, due again (processed before it, or for another
// version or chain), and never processed.
func FreshnessChart(st *pipeline.Status) Chart {
	fresh := max(st.Active-st.Due, 0)
	stale := max(st.Due-st.NeverProcessed, 0)
	return Chart{Kind: "bars", XLabel: "state", X: []float64{0, 1, 2}, Labels: []string{"fresh", "due again", "never processed"},
		Series: []Series{{Label: "active records", Values: []*float64{val(float64(fresh)), val(float64(stale)), val(float64(st.NeverProcessed))}}}}
}
