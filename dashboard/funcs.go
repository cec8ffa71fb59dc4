package dashboard

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/crawlkeeper/crawlkeeper/metrics"
)

var funcs = template.FuncMap{
	"num":   num,
	"pct":   pct,
	"tm":    fmtTime,
	"since": since,
	"secs":  func(s float64) string { return fmtDuration(time.Duration(s * float64(time.Second))) },
	"dur":   fmtDuration,
	"path":  url.PathEscape,
	"pretty": func(b []byte) string {
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return string(b)
		}
		out, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return string(b)
		}
		return string(out)
	},
	"deref": func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	},
}

// pct prints a share from 0 to 1 as a percentage.
func pct(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// num prints a count with thousands separators, and other numbers with
// at most two decimals.
func num(v any) string {
	switch n := v.(type) {
	case int:
		return groupDigits(strconv.FormatInt(int64(n), 10))
	case int64:
		return groupDigits(strconv.FormatInt(n, 10))
	case uint32:
		return groupDigits(strconv.FormatUint(uint64(n), 10))
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1e15 {
			return groupDigits(strconv.FormatInt(int64(n), 10))
		}
		s := strconv.FormatFloat(n, 'f', 2, 64)
		whole, frac, _ := strings.Cut(s, ".")
		return groupDigits(whole) + "." + frac
	}
	return fmt.Sprint(v)
}

func groupDigits(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func fmtTime(v any) string {
	switch t := v.(type) {
	case time.Time:
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	case *time.Time:
		if t == nil {
			return "—"
		}
		return fmtTime(*t)
	}
	return fmt.Sprint(v)
}

// since prints how long ago t was, relative to now.
func since(now time.Time, v any) string {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		if x == nil {
			return "never"
		}
		t = *x
	}
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + fmtDuration(-d)
	}
	return fmtDuration(d) + " ago"
}

// fmtDuration prints a duration with its two largest units: 3d 4h, 12m 5s.
func fmtDuration(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	units := []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}}
	var parts []string
	for _, u := range units {
		if d >= u.d {
			parts = append(parts, strconv.FormatInt(int64(d/u.d), 10)+u.name)
			d %= u.d
		}
		if len(parts) == 2 {
			break
		}
	}
	return strings.Join(parts, " ")
}

// counterValue reads the items counter of one outcome.
func counterValue(m *metrics.Metrics, outcome string) float64 {
	return readCounter(m.Items.WithLabelValues(outcome))
}

func readCounter(c prometheus.Counter) float64 {
	var out dto.Metric
	if err := c.Write(&out); err != nil {
		return 0
	}
	return out.GetCounter().GetValue()
}

// ingestOutcomes are the outcomes of accepted items.
var ingestOutcomes = []string{"inserted", "changed", "unchanged", "revived", "refreshed"}

// ingestTotal counts the items accepted since the process started.
func ingestTotal(m *metrics.Metrics) float64 {
	n := 0.0
	for _, o := range ingestOutcomes {
		n += counterValue(m, o)
	}
	return n
}

// link builds a dashboard URL from a path and query parameters, leaving
// out empty ones.
func link(path string, kv ...string) template.URL {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return template.URL(path)
	}
	return template.URL(path + "?" + q.Encode())
}
