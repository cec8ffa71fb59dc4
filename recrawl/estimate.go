package recrawl

import (
	"math"
	"time"
)

// Seconds per day: rates are kept per second and budgets given per day.
const day = 86400.0

// RegularRate is Cho and Garcia-Molina's bias-reduced estimator of a change
// rate from n fetches at a regular interval (in seconds) of which x found
// the page changed ("Estimating frequency of change", ACM TOIT 3(3), 2003,
// section 4): -log((n-x+0.5)/(n+0.5))/interval. Unlike the naive x/(n·I),
// which cannot see the changes missed between two fetches, it stays
// unbiased to within a few per cent while the interval is up to about
// twice the mean change interval, and the 0.5s keep it finite when every
// fetch found a change. It is 0 when n is 0.
func RegularRate(n, x int64, interval float64) float64 {
	if n <= 0 || interval <= 0 {
		return 0
	}
	if x > n {
		x = n
	}
	return -math.Log((float64(n-x)+0.5)/(float64(n)+0.5)) / interval
}

// MLE is the maximum-likelihood change rate (per second) of a record
// fetched at irregular intervals, computed from its counters alone, and
// false when no interval has been observed yet.
//
// The paper's log-likelihood for intervals t_i that ended in a change and
// u_j that did not is Σ log(1-e^{-λ t_i}) - λ Σ u_j; its maximum solves
// Σ t_i/(e^{λ t_i}-1) = Σ u_j, which needs every t_i. The counters keep
// only the sums C = Σ t_i and U = Σ u_j, so the changed intervals are
// taken at their mean C/X; the equation becomes X·(C/X)/(e^{λC/X}-1) = U,
// whose root is
//
//	λ = (X/C)·ln(1 + C/U).
//
// It is exact when the changed intervals are equal (whatever the unchanged
// ones), and equal to the paper's -log((n-X)/n)/I when all intervals are.
// With irregular changed intervals it errs towards lower rates (by Jensen's
// inequality); the tests measure how much.
//
// Like the regular MLE it is infinite when every interval ended in a
// change; it therefore carries the same bias reduction: half a mean
// interval h = (C+U)/(2n) is added to both sides of the ratio,
//
//	λ = (X/C)·ln((C+U+h)/(U+h)),
//
// which is exactly RegularRate when the intervals are regular. It is 0
// when no change was seen.
func MLE(s FetchStats) (float64, bool) {
	n := float64(s.Refetches)
	if n <= 0 || s.ChangedSeconds+s.UnchangedSeconds <= 0 {
		return 0, false
	}
	return mle(float64(s.Changes), s.ChangedSeconds, s.UnchangedSeconds, 0.5*(s.ChangedSeconds+s.UnchangedSeconds)/n), true
}

// mle is (x/c)·ln((c+u+h)/(u+h)), 0 when nothing changed.
func mle(x, c, u, h float64) float64 {
	if x <= 0 || c <= 0 {
		return 0
	}
	if u+h <= 0 {
		return math.Inf(1)
	}
	return x / c * math.Log1p(c/(u+h))
}

// secondsDuration converts seconds to a Duration, saturating instead of
// overflowing (an interval of 1/λ for a tiny λ can exceed 292 years).
func secondsDuration(s float64) time.Duration {
	if s >= float64(math.MaxInt64)/1e9 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s * 1e9)
}
