package recrawl

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFreshnessIsTheTimeAverage(t *testing.T) {
	// A page fetched every T is fresh at time s after a fetch with
	// probability e^{-λs}; F is the average over a period.
	for _, tc := range []struct{ lambda, f float64 }{{1, 1}, {3, 0.5}, {0.1, 2}, {10, 1}} {
		T := 1 / tc.f
		const steps = 200000
		var sum float64
		for i := 0; i < steps; i++ {
			s := (float64(i) + 0.5) / steps * T
			sum += math.Exp(-tc.lambda * s)
		}
		if got, want := Freshness(tc.lambda, tc.f), sum/steps; math.Abs(got-want) > 1e-9 {
			t.Errorf("F(%v, %v) = %v, numerical average %v", tc.lambda, tc.f, got, want)
		}
	}
	if Freshness(0, 0) != 1 || Freshness(0, 3) != 1 {
		t.Error("a page that never changes is always fresh")
	}
	if Freshness(1, 0) != 0 {
		t.Error("a changing page never fetched is never fresh")
	}
}

func TestMarginalIsTheDerivative(t *testing.T) {
	for _, tc := range []struct{ lambda, f float64 }{{1, 1}, {3, 0.5}, {0.1, 2}, {10, 1}, {1e-4, 1}} {
		h := 1e-6 * tc.f
		num := (Freshness(tc.lambda, tc.f+h) - Freshness(tc.lambda, tc.f-h)) / (2 * h)
		if got := Marginal(tc.lambda, 1/tc.f); math.Abs(got-num) > 1e-6*math.Max(1, num) {
			t.Errorf("λ=%v f=%v: Marginal %v, dF/df %v", tc.lambda, tc.f, got, num)
		}
	}
	// It grows with the interval towards 1/λ.
	prev := 0.0
	for _, tau := range []float64{0.1, 1, 10, 100} {
		m := Marginal(2, tau)
		if m <= prev || m > 0.5 {
			t.Errorf("Marginal(2, %v) = %v after %v", tau, m, prev)
		}
		prev = m
	}
}

func TestGxInvInvertsGx(t *testing.T) {
	// Beyond x = 20, gx(x) is 1 to within 1e-8 and x is no longer
	// recoverable from it in floating point.
	for _, x := range []float64{1e-6, 1e-3, 0.01, 0.5, 1, 3, 10, 20} {
		if got := gxInv(gx(x)); math.Abs(got-x) > 1e-7*math.Max(1, x) {
			t.Errorf("gxInv(gx(%v)) = %v", x, got)
		}
	}
	if !math.IsInf(gxInv(1), 1) || gxInv(0) != 0 {
		t.Error("gxInv(1) must be +Inf and gxInv(0) 0")
	}
}

// The example of "Effective page refresh policies for web crawlers":
// five pages changing 1, 2, 3, 4 and 5 times a day and 5 fetches a day.
// The optimum fetches them 1.15, 1.36, 1.35, 1.14 and 0 times a day: the
// fastest page, which no budget this size keeps fresh, gets nothing.
func TestAllocateThePapersExample(t *testing.T) {
	f, mu := Allocate([]float64{1, 2, 3, 4, 5}, 5)
	want := []float64{1.15, 1.36, 1.35, 1.14, 0}
	for i := range want {
		if math.Abs(f[i]-want[i]) > 0.005 {
			t.Errorf("page %d: %.3f fetches a day, the paper's optimum %.2f", i+1, f[i], want[i])
		}
	}
	if 5*mu < 1 {
		t.Errorf("the page changing 5 times a day should be beyond the threshold: μ = %v", mu)
	}
}

func TestAllocateSpendsTheBudgetAtEqualMarginals(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rates := make([]float64, 2000)
	for i := range rates {
		if i%5 == 0 {
			continue // static
		}
		rates[i] = math.Exp(rng.Float64()*math.Log(2000)) / 1000 // 0.001 to 2 per unit
	}
	const budget = 200
	f, mu := Allocate(rates, budget)
	var sum float64
	for i, l := range rates {
		sum += f[i]
		switch {
		case l == 0:
			if f[i] != 0 {
				t.Errorf("a static page gets %v", f[i])
			}
		case l*mu >= 1:
			if f[i] != 0 {
				t.Errorf("rate %v beyond the threshold gets %v", l, f[i])
			}
		default:
			if m := Marginal(l, 1/f[i]); math.Abs(m-mu) > 1e-6*mu {
				t.Errorf("rate %v: marginal %v, μ %v", l, m, mu)
			}
		}
	}
	if math.Abs(sum-budget) > 1e-6*budget {
		t.Errorf("spent %v of %v", sum, budget)
	}
	// Any other split of the same budget is worse: move a little budget
	// between two pages and the total freshness falls.
	total := func(f []float64) float64 {
		var s float64
		for i, l := range rates {
			s += Freshness(l, f[i])
		}
		return s
	}
	best := total(f)
	for trial := 0; trial < 200; trial++ {
		i, j := rng.IntN(len(rates)), rng.IntN(len(rates))
		d := math.Min(f[i], 0.01)
		if i == j || d == 0 {
			continue
		}
		g := append([]float64(nil), f...)
		g[i] -= d
		g[j] += d
		if total(g) > best+1e-9 {
			t.Fatalf("moving %v from page %d to %d improves freshness", d, i, j)
		}
	}
}

// The paper's properties: with the same budget, uniform refresh beats
// refresh proportional to the change rate, and the optimal frequency rises
// with the change rate, then falls to 0.
func TestAllocateThePapersProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	rates := make([]float64, 1000)
	var sumRate float64
	for i := range rates {
		rates[i] = math.Exp(rng.Float64()*math.Log(1000)) / 100 // 0.01 to 10 a day
		sumRate += rates[i]
	}
	const budget = 500
	var uniform, proportional, optimal float64
	f, _ := Allocate(rates, budget)
	for i, l := range rates {
		uniform += Freshness(l, budget/float64(len(rates)))
		proportional += Freshness(l, budget*l/sumRate)
		optimal += Freshness(l, f[i])
	}
	if !(optimal > uniform && uniform > proportional) {
		t.Errorf("freshness: optimal %.1f, uniform %.1f, proportional %.1f", optimal, uniform, proportional)
	}

	_, mu := Allocate(rates, budget)
	var curve []float64
	for l := 0.01; l < 20; l *= 1.2 {
		curve = append(curve, Frequency(l, mu))
	}
	peak := 0
	for i, v := range curve {
		if v > curve[peak] {
			peak = i
		}
	}
	if peak == 0 || peak == len(curve)-1 || curve[len(curve)-1] != 0 {
		t.Fatalf("the optimal frequency should rise, peak and fall to 0: %v", curve)
	}
	for i := 1; i < len(curve); i++ {
		if (i <= peak && curve[i] < curve[i-1]) || (i > peak && curve[i] > curve[i-1]) {
			t.Fatalf("not unimodal at %d: %v", i, curve)
		}
	}
}
