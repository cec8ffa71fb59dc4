package recrawl

import (
	"bytes"
	"fmt"
	"html"
	"math"
)

// chartColors are the policies' line colours, in the order of the report.
var chartColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#7f7f7f", "#9467bd", "#8c564b"}

// Chart draws each policy's daily freshness over the simulated days as an
// SVG line chart, with the measured days shaded: the figure for
// docs/RECRAWL.md. It is plain SVG written here (no plotting library):
// a few axes, grid lines, polylines and a legend.
func Chart(rep SimReport, title string) []byte {
	const (
		width, height            = 760.0, 420.0
		left, right, top, bottom = 60.0, 170.0, 40.0, 50.0
	)
	pw, ph := width-left-right, height-top-bottom
	days := rep.Config.Days
	maxF := 0.0
	for _, r := range rep.Results {
		for _, f := range r.Daily {
			maxF = math.Max(maxF, f)
		}
	}
	// The y axis runs to the next tenth above the highest day.
	yMax := math.Min(1, math.Ceil(maxF*10+1e-9)/10)
	if yMax <= 0 {
		yMax = 1
	}
	x := func(d float64) float64 { return left + pw*d/float64(days) }
	y := func(f float64) float64 { return top + ph*(1-f/yMax) }

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%g" y="22" font-size="14" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	// The measured days.
	m := float64(rep.Config.MeasureFrom)
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f2f2f2"/>`+"\n", x(m), top, x(float64(days))-x(m), ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#666666">measured: days %d–%d</text>`+"\n", x(m)+6, top+16, rep.Config.MeasureFrom+1, days)
	// Grid and axes.
	for k := 0; k <= 10; k++ {
		f := yMax * float64(k) / 10
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>`+"\n", left, y(f), left+pw, y(f))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%.2f</text>`+"\n", left-6, y(f)+4, f)
	}
	for d := 0; d <= days; d += 10 {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>`+"\n", x(float64(d)), top, x(float64(d)), top+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%d</text>`+"\n", x(float64(d)), top+ph+18, d)
	}
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#333333"/>`+"\n", left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">simulated day</text>`+"\n", left+pw/2, height-10)
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">share of pages fresh (daily mean)</text>`+"\n", top+ph/2)
	// One line per policy, each day's mean at the middle of the day.
	for i, r := range rep.Results {
		color := chartColors[i%len(chartColors)]
		b.WriteString(`<polyline fill="none" stroke-width="2" stroke="` + color + `" points="`)
		for d, f := range r.Daily {
			if d > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%.1f,%.1f", x(float64(d)+0.5), y(f))
		}
		b.WriteString(`"/>` + "\n")
		ly := top + 20 + 22*float64(i)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`+"\n", left+pw+12, ly-4, left+pw+32, ly-4, color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s %.3f</text>`+"\n", left+pw+38, ly, html.EscapeString(r.Policy), r.Freshness)
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}
