package crawlkeeper

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration that also reads days and weeks ("30d",
// "2w", "1d12h"), because archive rules are naturally stated in days.
// "0", "off" and "" mean zero, which disables a rule where that applies.
type Duration time.Duration

// ParseDuration reads the forms Duration accepts.
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "0", "off", "none", "false":
		return 0, nil
	}
	var total time.Duration
	rest := s
	for rest != "" {
		// Peel off leading "<n>d" or "<n>w" parts; hand the remainder to
		// time.ParseDuration, which knows h, m, s, ms, us and ns.
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 || i == len(rest) || (rest[i] != 'd' && rest[i] != 'w') {
			d, err := time.ParseDuration(rest)
			if err != nil {
				return 0, fmt.Errorf("invalid duration %q: use forms like 90m, 36h, 30d or 2w", s)
			}
			total += d
			break
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q: use forms like 90m, 36h, 30d or 2w", s)
		}
		unit := 24 * time.Hour
		if rest[i] == 'w' {
			unit = 7 * 24 * time.Hour
		}
		total += time.Duration(n * float64(unit))
		rest = rest[i+1:]
	}
	if total < 0 {
		return 0, fmt.Errorf("invalid duration %q: must not be negative", s)
	}
	return Duration(total), nil
}

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d using days where it divides evenly.
func (d Duration) String() string {
	t := time.Duration(d)
	if t == 0 {
		return "0"
	}
	day := 24 * time.Hour
	if t%day == 0 {
		return strconv.FormatInt(int64(t/day), 10) + "d"
	}
	return t.String()
}

// UnmarshalText lets configuration decoders read Duration from strings.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalText writes d in the form ParseDuration reads.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
