package browsertest_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// viewport sets the browser window's size in CSS pixels; the pages lay
// themselves out again.
func (b *browser) viewport(width, height int64) {
	b.t.Helper()
	b.do(fmt.Sprintf("set the window to %dx%d", width, height), chromedp.EmulateViewport(width, height))
}

// axisLayout is the x axis of a drawn chart as uPlot drew it, in CSS
// pixels of its canvas: each name written under the axis, where it is
// anchored and how large it is, and the angle the names are turned by.
type axisLayout struct {
	Width     float64     `json:"width"`
	Height    float64     `json:"height"`
	Rotate    float64     `json:"rotate"` // degrees, counter-clockwise
	Positions int         `json:"positions"`
	Labels    []axisLabel `json:"labels"`
}

type axisLabel struct {
	Text string  `json:"text"`
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	W    float64 `json:"w"`
	H    float64 `json:"h"`
}

// readAxis reads the x axis of the chart sel selects: the names uPlot
// wrote (its axis values), their anchors (the x positions' pixels, below
// the ticks) and their widths measured in the axis font.
func (b *browser) readAxis(sel string) *axisLayout {
	b.t.Helper()
	js := fmt.Sprintf(`(() => {
		const el = document.querySelector(%s);
		const u = el && el.uplot;
		if (!u) return null;
		const ax = u.axes[0], r = uPlot.pxRatio;
		const ctx = document.createElement("canvas").getContext("2d");
		ctx.font = ax.font[0];
		const y = ax._pos + (ax.ticks.show ? ax.ticks.size : 0) + ax.gap;
		const out = {width: u.width, height: u.height, rotate: ax._rotate || 0, positions: ax._splits.length, labels: []};
		ax._splits.forEach((x, i) => {
			const t = ax._values[i];
			if (t == null || t === "") return;
			out.labels.push({text: String(t), x: u.bbox.left / r + u.valToPos(x, "x"), y: y,
				w: ctx.measureText(String(t)).width / r, h: 1.2 * ax.font[1] / r});
		});
		return out;
	})()`, jsString(sel))
	return eval[*axisLayout](b, "read the x axis of "+sel, js)
}

// box is a name's rectangle in the frame turned with the names: every
// name of an axis is turned by the same angle, so in that frame they are
// plain rectangles.
type box struct{ x0, x1, y0, y1 float64 }

// boxes returns each name's rectangle in the turned frame, and its
// corners in the canvas. uPlot writes level names centred under their
// position, from below the ticks down; turned ones end at their position,
// centred on it across the line, and rise to the right.
func (l *axisLayout) boxes() ([]box, [][4][2]float64) {
	th := l.Rotate * math.Pi / 180
	cos, sin := math.Cos(th), math.Sin(th)
	var out []box
	var corners [][4][2]float64
	for _, lb := range l.Labels {
		dx0, dx1, dy0, dy1 := -lb.W/2, lb.W/2, 0.0, lb.H
		if l.Rotate != 0 {
			dx0, dx1, dy0, dy1 = -lb.W, 0, -lb.H/2, lb.H/2
		}
		// The anchor in the turned frame (the inverse of the canvas's
		// rotation by -th).
		ax, ay := lb.X*cos-lb.Y*sin, lb.X*sin+lb.Y*cos
		out = append(out, box{ax + dx0, ax + dx1, ay + dy0, ay + dy1})
		var c [4][2]float64
		for i, d := range [4][2]float64{{dx0, dy0}, {dx1, dy0}, {dx0, dy1}, {dx1, dy1}} {
			c[i] = [2]float64{lb.X + d[0]*cos + d[1]*sin, lb.Y - d[0]*sin + d[1]*cos}
		}
		corners = append(corners, c)
	}
	return out, corners
}

// problems lists the names that overlap a neighbour or leave the canvas.
func (l *axisLayout) problems() []string {
	boxes, corners := l.boxes()
	var out []string
	const slack = 0.5 // anti-aliasing, not overlap
	for i := range boxes {
		for j := i + 1; j < len(boxes); j++ {
			a, c := boxes[i], boxes[j]
			if a.x0+slack < c.x1 && c.x0+slack < a.x1 && a.y0+slack < c.y1 && c.y0+slack < a.y1 {
				out = append(out, fmt.Sprintf("%q overlaps %q", l.Labels[i].Text, l.Labels[j].Text))
			}
		}
		for _, p := range corners[i] {
			if p[0] < -slack || p[0] > l.Width+slack || p[1] < -slack || p[1] > l.Height+slack {
				out = append(out, fmt.Sprintf("%q leaves the chart at (%.0f, %.0f) of %.0fx%.0f", l.Labels[i].Text, p[0], p[1], l.Width, l.Height))
				break
			}
		}
	}
	return out
}

// expectLegibleAxis checks that the names under the x axis of the chart
// sel selects neither overlap nor leave the chart, that the last position
// (the newest round) is named, and that at least minShare of the
// positions are.
func (b *browser) expectLegibleAxis(sel, last string, minShare float64) *axisLayout {
	b.t.Helper()
	l := b.readAxis(sel)
	if l == nil {
		b.errorf("chart %s: no plot", sel)
		return nil
	}
	if p := l.problems(); len(p) > 0 {
		b.errorf("chart %s: the names under the x axis cannot be read (%d of %d names, turned %v°): %s", sel, len(l.Labels), l.Positions, l.Rotate, strings.Join(p[:min(len(p), 5)], "; "))
	}
	if len(l.Labels) == 0 || l.Labels[len(l.Labels)-1].Text != last {
		b.errorf("chart %s: the last position is not named %q: %+v", sel, last, l.Labels)
	}
	if share := float64(len(l.Labels)) / float64(l.Positions); share < minShare {
		b.errorf("chart %s: %d of %d positions named, want at least %.0f%%", sel, len(l.Labels), l.Positions, 100*minShare)
	}
	return l
}

// TestBrowserFillRateChartLegible draws the rare-fields chart of a crawl
// with many rounds at 1400 pixels, as wide as a laptop's browser: a
// week of the demo's jobs rounds, then a month of them. The rounds'
// names under the chart must not overlap or be cut off, and the newest
// round must be named.
func TestBrowserFillRateChartLegible(t *testing.T) {
	e := newEnv(t, envOptions{})
	b := newBrowser(t, e.srv.URL)
	b.viewport(1400, 1000)
	start := time.Now()
	rounds := 0
	addRounds := func(n int) {
		for ; rounds < n; rounds++ {
			round := fmt.Sprintf("jobs-%d", rounds+1)
			e.call("POST", "/api/v1/rounds/"+round+"/queue", "ingest", "acme\nglobex\n", nil)
			var items []string
			for i := range 4 {
				visa := ""
				if (rounds+i)%7 == 0 {
					visa = "yes"
				}
				items = append(items, fmt.Sprintf(`{"title":"Engineer %d","url":"https://jobs.test/%d","visa_sponsorship":%q,"salary":"%dk"}`, i, i, visa, 50+rounds%9))
			}
			e.ingest("source=jobs.example.com&round="+round+"&target=acme", items...)
			e.advance(6 * time.Hour)
		}
	}
	for _, n := range []int{28, 120} {
		t.Run(fmt.Sprintf("%d rounds", n), func(t *testing.T) {
			b.t = t
			addRounds(n)
			b.open("/fields")
			b.expectChart("#fillrate")
			shot := b.shot(fmt.Sprintf("fillrate-%d-rounds-1400.png", n))
			l := b.expectLegibleAxis("#fillrate", fmt.Sprintf("jobs-%d", n), 0.25)
			if l != nil && l.Positions != n {
				b.errorf("fill-rate chart: %d rounds on the axis, want %d (screenshot %s)", l.Positions, n, shot)
			}
		})
	}
	// A narrow window: fewer names, still legible.
	t.Run("120 rounds at 800 pixels", func(t *testing.T) {
		b.t = t
		b.viewport(800, 1000)
		b.open("/fields")
		b.expectChart("#fillrate")
		b.shot("fillrate-120-rounds-800.png")
		b.expectLegibleAxis("#fillrate", "jobs-120", 0.1)
	})
	b.t = t
	t.Log("browser checks took", time.Since(start).Round(time.Millisecond))
	b.expectNoProblems()
}
