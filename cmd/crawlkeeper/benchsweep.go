package main

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/crawlkeeper/crawlkeeper/bench"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// runSweep runs the size-dependent measures at each size, prints each
// run's table, and charts value and baseline against size into chart
// (its data next to it as .json).
func runSweep(ctx context.Context, a *app, opts bench.Options, sizes []int, chart string) error {
	if len(opts.Only) == 0 {
		opts.Only = sweepResults
	}
	var reps []*bench.Report
	for i, n := range sizes {
		fmt.Fprintf(a.stderr, "sweep: %d records (%d of %d)\n", n, i+1, len(sizes))
		opts.Scale = n
		rep, err := bench.Run(ctx, opts)
		if err != nil {
			return fmt.Errorf("sweep at %d: %w", n, err)
		}
		reps = append(reps, rep)
		if !a.json {
			printReport(a.stdout, rep)
			fmt.Fprintln(a.stdout)
		}
		// The chart is redrawn after every size, so a long sweep that is
		// stopped keeps the sizes it finished.
		if err := writeSweep(chart, reps); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "sweep: chart of %d sizes written to %s\n", len(reps), chart)
	}
	if a.json {
		return a.printJSON(reps)
	}
	return nil
}

// replotSweep draws chart from a sweep's saved data.
func replotSweep(data, chart string) error {
	b, err := os.ReadFile(data)
	if err != nil {
		return err
	}
	var reps []*bench.Report
	if err := json.Unmarshal(b, &reps); err != nil {
		return fmt.Errorf("%s: %w", data, err)
	}
	return writeSweepChart(chart, reps)
}

// writeSweep writes the chart of reps and their data (.json next to it).
func writeSweep(chart string, reps []*bench.Report) error {
	if err := writeSweepChart(chart, reps); err != nil {
		return err
	}
	data, err := json.MarshalIndent(reps, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(strings.TrimSuffix(chart, filepath.Ext(chart))+".json", append(data, '\n'), 0o644)
}

// writeSweepChart draws one panel per measure, value and baseline against
// the number of records, both axes logarithmic, and writes it as SVG or
// PNG by the file's extension.
func writeSweepChart(path string, reps []*bench.Report) error {
	var names []string
	series := map[string][2]plotter.XYs{}
	units := map[string]string{}
	for _, rep := range reps {
		for _, r := range rep.Results {
			if _, ok := series[r.Name]; !ok {
				names = append(names, r.Name)
			}
			s := series[r.Name]
			if r.Value > 0 {
				s[0] = append(s[0], plotter.XY{X: float64(rep.Scale), Y: r.Value})
			}
			if r.Baseline > 0 {
				s[1] = append(s[1], plotter.XY{X: float64(rep.Scale), Y: r.Baseline})
			}
			series[r.Name], units[r.Name] = s, r.Unit
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("sweep: no results to chart")
	}
	const cols = 2
	rows := (len(names) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	for i, name := range names {
		p := plot.New()
		p.Title.Text = name
		p.X.Label.Text = "records"
		p.Y.Label.Text = units[name]
		if strings.HasPrefix(units[name], "ms") {
			p.Title.Text += " (lower is better)"
		}
		p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
		p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
		p.Legend.Top = true
		for k, label := range []string{"crawlkeeper", "raw engine"} {
			xys := series[name][k]
			if len(xys) == 0 {
				continue
			}
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return err
			}
			l.Color = chartColors[k]
			pts.Color = chartColors[k]
			if k == 1 {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				pts.Shape = draw.BoxGlyph{}
			}
			p.Add(l, pts)
			p.Legend.Add(label, l, pts)
		}
		// Headroom above the lines for the legend, a little below them.
		p.Y.Min, p.Y.Max = p.Y.Min/1.5, p.Y.Max*4
		p.X.Min, p.X.Max = p.X.Min/1.5, p.X.Max*1.5
		plots[i/cols][i%cols] = p
	}
	for _, row := range plots {
		for j := range row {
			if row[j] == nil {
				row[j] = plot.New() // an empty panel keeps the grid
				row[j].HideAxes()
			}
		}
	}
	w, h := 24*vg.Centimeter, vg.Length(rows)*9*vg.Centimeter
	var canvas interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		canvas = vgsvg.New(w, h)
	case ".png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	default:
		return usagef("--chart must name a .svg or .png file")
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var chartColors = [2]color.Color{color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}}

// logTicks labels 1, 2 and 5 times each power of ten in range (plot's
// LogTicks labels powers of ten only, so a range within one decade would
// have no labels), with unlabelled minor ticks between.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for m := 1.0; m < 10; m++ {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}
