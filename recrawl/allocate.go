package recrawl

import (
	"math"
)

// Freshness is the time-averaged freshness of a page that changes as a
// Poisson process of rate lambda and is fetched at regular intervals of
// 1/f: the share of time its stored copy equals the live page, (f/λ)(1 -
// e^{-λ/f}) (Cho and Garcia-Molina, "Effective page refresh policies for
// web crawlers", ACM TODS 28(4), 2003). A page that never changes is
// always fresh; one that changes and is never fetched never is. lambda and
// f share a unit (both per second, or both per day).
func Freshness(lambda, f float64) float64 {
	switch {
	case lambda <= 0:
		return 1
	case f <= 0:
		return 0
	}
	r := lambda / f
	if r < 1e-8 {
		return 1 - r/2
	}
	return -math.Expm1(-r) / r
}

// Marginal is ∂F/∂f for a page of rate lambda fetched every interval
// (1/f): the freshness one more fetch per unit of time buys,
// (1 - e^{-λτ}(1+λτ))/λ. It is also the value of fetching the page now
// when its last fetch was interval ago (the index the advisor ranks by):
// it grows with the time since the fetch, towards 1/λ, and the
// freshness-optimal schedule fetches each page when it reaches the same
// threshold μ. Pages with 1/λ below μ never reach it: they change too
// fast to be worth their fetches.
func Marginal(lambda, interval float64) float64 {
	if lambda <= 0 || interval <= 0 {
		return 0
	}
	return gx(lambda*interval) / lambda
}

// gx is 1 - e^{-x}(1+x), with a series near 0 where the subtraction would
// lose every digit.
func gx(x float64) float64 {
	if x < 1e-3 {
		return x * x * (0.5 - x/3 + x*x/8)
	}
	return -math.Expm1(-x) - x*math.Exp(-x)
}

// gxInv solves gx(x) = y for y in [0,1): +Inf for y >= 1. It works on
// q(x) = x - ln(1+x) = -ln(1-y), which is convex and increasing, so
// Newton's method from a starting point above the root converges
// monotonically; x0 = c + √(2c) is always above it.
func gxInv(y float64) float64 {
	switch {
	case y <= 0:
		return 0
	case y >= 1:
		return math.Inf(1)
	}
	c := -math.Log1p(-y)
	x := c + math.Sqrt(2*c)
	for i := 0; i < 50; i++ {
		var q float64
		if x < 1e-3 {
			q = x * x * (0.5 - x/3 + x*x/4)
		} else {
			q = x - math.Log1p(x)
		}
		step := (q - c) * (1 + x) / x
		x -= step
		if step <= 1e-13*x {
			break
		}
	}
	return x
}

// Frequency is the fetch frequency the optimal schedule gives a page of
// rate lambda at threshold mu: the f at which Marginal(lambda, 1/f) = mu,
// 0 when the page changes too fast (lambda·mu >= 1) and +Inf when mu is 0.
// Units: lambda per second and mu in seconds give f per second.
func Frequency(lambda, mu float64) float64 {
	if lambda <= 0 {
		return 0
	}
	x := gxInv(lambda * mu)
	if math.IsInf(x, 1) {
		return 0
	}
	if x == 0 {
		return math.Inf(1)
	}
	return lambda / x
}

// Allocate is the freshness-optimal allocation of a budget of fetches
// (per unit of time) over pages of the given change rates (per the same
// unit): the frequencies f_i that maximise Σ Freshness(λ_i, f_i) with
// Σ f_i = budget, and the Lagrange multiplier mu shared by every page
// fetched (Marginal(λ_i, 1/f_i) = mu). Pages that never change and pages
// that change too fast for the budget get 0. mu is found by bisection on
// its logarithm, since Σ f_i falls monotonically as mu grows.
func Allocate(rates []float64, budget float64) (freqs []float64, mu float64) {
	freqs = make([]float64, len(rates))
	mu = solveMu(budget, func(mu float64) float64 {
		var sum float64
		for _, l := range rates {
			sum += Frequency(l, mu)
		}
		return sum
	}, rates)
	if mu == 0 {
		return freqs, 0
	}
	for i, l := range rates {
		freqs[i] = Frequency(l, mu)
	}
	return freqs, mu
}

// solveMu finds the mu at which total(mu) = budget. total falls from +Inf
// (mu → 0) to 0 (mu ≥ 1/min rate). It returns 0 when no page changes or
// the budget is not positive.
func solveMu(budget float64, total func(float64) float64, rates []float64) float64 {
	minRate, maxRate := math.Inf(1), 0.0
	for _, l := range rates {
		if l > 0 {
			minRate = math.Min(minRate, l)
			maxRate = math.Max(maxRate, l)
		}
	}
	if maxRate == 0 || budget <= 0 {
		return 0
	}
	// hi: every page is too fast (total 0). lo: small enough that the
	// total exceeds the budget; halve it until it does.
	hi := 1 / minRate
	lo := hi * 1e-6
	for total(lo) < budget {
		lo /= 1e3
		if lo < 1e-300 {
			return lo
		}
	}
	logLo, logHi := math.Log(lo), math.Log(hi)
	for i := 0; i < 100 && logHi-logLo > 1e-12; i++ {
		mid := 0.5 * (logLo + logHi)
		if total(math.Exp(mid)) > budget {
			logLo = mid
		} else {
			logHi = mid
		}
	}
	return math.Exp(0.5 * (logLo + logHi))
}
