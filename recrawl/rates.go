package recrawl

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Presets are the named rate distributions the simulator knows, as
// specs ParseRates reads.
var Presets = map[string]string{
	// default: mean change intervals log-uniform from an hour to 90
	// days, and a fifth of the pages never change.
	"default": "0.8*loguniform(1h,90d)+0.2*static",
	// two-humped: a fast and a slow population and a few static pages.
	"two-humped": "0.45*lognormal(4h,0.7)+0.45*lognormal(20d,0.7)+0.1*static",
	// mostly-static: 70% never change, the rest mostly slowly.
	"mostly-static": "0.7*static+0.2*loguniform(7d,180d)+0.1*loguniform(1h,7d)",
	// mostly-fast: 80% change within a day, most faster than the budget
	// can follow.
	"mostly-fast": "0.8*loguniform(10m,1d)+0.2*loguniform(1d,30d)",
}

// PresetNames lists the presets in a stable order.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Rates is a distribution of change rates to draw simulated pages from.
type Rates struct {
	spec  string
	parts []ratePart
	file  []float64
}

type ratePart struct {
	weight float64
	kind   string
	a, b   float64 // seconds (intervals) or sigma
}

// String is the spec the distribution was parsed from.
func (r Rates) String() string { return r.spec }

// RatesHelp describes the syntax for a command-line flag.
const RatesHelp = `a preset (default, two-humped, mostly-static, mostly-fast), file:PATH
(one page per line: a mean change interval such as 6h or 3d, a rate in changes per day
such as 0.5, or "static"), or a mixture of weighted parts joined by "+":
W*loguniform(MIN,MAX) (mean change intervals log-uniform between MIN and MAX),
W*lognormal(MEDIAN,SIGMA), W*every(INTERVAL), W*static (never changes);
e.g. 0.8*loguniform(1h,90d)+0.2*static`

// ParseRates reads a rate distribution: a preset name, file:PATH, or a
// mixture (see RatesHelp).
func ParseRates(spec string) (Rates, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = "default"
	}
	if p, ok := Presets[spec]; ok {
		r, err := parseMixture(p)
		r.spec = spec
		return r, err
	}
	if path, ok := strings.CutPrefix(spec, "file:"); ok {
		data, err := os.ReadFile(path)
		if err != nil {
			return Rates{}, fmt.Errorf("recrawl rates: %w", err)
		}
		rates, err := parseRateFile(data)
		if err != nil {
			return Rates{}, fmt.Errorf("recrawl rates %s: %w", path, err)
		}
		return Rates{spec: spec, file: rates}, nil
	}
	return parseMixture(spec)
}

func parseMixture(spec string) (Rates, error) {
	r := Rates{spec: spec}
	var total float64
	for _, term := range strings.Split(spec, "+") {
		term = strings.TrimSpace(term)
		p := ratePart{weight: 1}
		if w, rest, ok := strings.Cut(term, "*"); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
			if err != nil || !(v > 0) || math.IsInf(v, 1) {
				return Rates{}, fmt.Errorf("recrawl rates: weight %q in %q is not a positive number", w, term)
			}
			p.weight, term = v, strings.TrimSpace(rest)
		}
		name, args, _ := strings.Cut(term, "(")
		p.kind = strings.TrimSpace(name)
		var vals []string
		if args != "" {
			inner, ok := strings.CutSuffix(strings.TrimSpace(args), ")")
			if !ok {
				return Rates{}, fmt.Errorf("recrawl rates: %q lacks its closing parenthesis", term)
			}
			for _, v := range strings.Split(inner, ",") {
				vals = append(vals, strings.TrimSpace(v))
			}
		}
		want := map[string]int{"loguniform": 2, "lognormal": 2, "every": 1, "static": 0}
		n, known := want[p.kind]
		if !known {
			return Rates{}, fmt.Errorf("recrawl rates: unknown part %q: use loguniform(MIN,MAX), lognormal(MEDIAN,SIGMA), every(INTERVAL) or static, or a preset (%s)", term, strings.Join(PresetNames(), ", "))
		}
		if len(vals) != n {
			return Rates{}, fmt.Errorf("recrawl rates: %s takes %d arguments, got %q", p.kind, n, term)
		}
		var err error
		switch p.kind {
		case "loguniform":
			if p.a, err = parseInterval(vals[0]); err == nil {
				p.b, err = parseInterval(vals[1])
			}
			if err == nil && p.b < p.a {
				err = fmt.Errorf("its minimum %s is above its maximum %s", vals[0], vals[1])
			}
		case "lognormal":
			if p.a, err = parseInterval(vals[0]); err == nil {
				p.b, err = strconv.ParseFloat(vals[1], 64)
				if err != nil || p.b < 0 || math.IsInf(p.b, 0) || math.IsNaN(p.b) {
					err = fmt.Errorf("sigma %q is not a number >= 0", vals[1])
				}
			}
		case "every":
			p.a, err = parseInterval(vals[0])
		}
		if err != nil {
			return Rates{}, fmt.Errorf("recrawl rates: %q: %v", term, err)
		}
		total += p.weight
		r.parts = append(r.parts, p)
	}
	for i := range r.parts {
		r.parts[i].weight /= total
	}
	return r, nil
}

// parseInterval reads a positive interval: a Go duration or a number of
// days with a d suffix (90d, 1.5d).
func parseInterval(s string) (float64, error) {
	if v, ok := strings.CutSuffix(s, "d"); ok {
		d, err := strconv.ParseFloat(v, 64)
		if err != nil || !(d > 0) || math.IsInf(d, 1) {
			return 0, fmt.Errorf("interval %q is not a positive number of days", s)
		}
		return d * day, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("interval %q is not a positive duration (such as 30m, 6h or 3d)", s)
	}
	return d.Seconds(), nil
}

func parseRateFile(data []byte) ([]float64, error) {
	var rates []float64
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if s == "static" {
			rates = append(rates, 0)
			continue
		}
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("line %d: rate %q is not a number of changes per day >= 0", line, s)
			}
			rates = append(rates, v/day)
			continue
		}
		iv, err := parseInterval(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %q is neither a rate per day, an interval nor \"static\"", line, s)
		}
		rates = append(rates, 1/iv)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rates) == 0 {
		return nil, fmt.Errorf("no rates: write one per line")
	}
	return rates, nil
}

// Sample draws n change rates (per second; 0 never changes). A file's
// rates are used in order, cycling when n exceeds them.
func (r Rates) Sample(n int, rng *rand.Rand) []float64 {
	out := make([]float64, n)
	if r.file != nil {
		for i := range out {
			out[i] = r.file[i%len(r.file)]
		}
		return out
	}
	for i := range out {
		u := rng.Float64()
		p := r.parts[len(r.parts)-1]
		for _, q := range r.parts {
			if u < q.weight {
				p = q
				break
			}
			u -= q.weight
		}
		switch p.kind {
		case "static":
			out[i] = 0
		case "every":
			out[i] = 1 / p.a
		case "loguniform":
			out[i] = 1 / math.Exp(math.Log(p.a)+rng.Float64()*(math.Log(p.b)-math.Log(p.a)))
		case "lognormal":
			out[i] = 1 / (p.a * math.Exp(p.b*rng.NormFloat64()))
		}
	}
	return out
}
