// Package recrawl decides what a crawl should fetch next: it estimates
// each record's rate of change from a few counters ingest keeps, and ranks
// a source's records for a budget of fetches per day by the freshness a
// fetch now is expected to buy. It also holds the simulator that measures
// the ranking against uniform recrawling, Nutch's AdaptiveFetchSchedule
// and the freshness-optimal schedule computed from the true rates.
//
// It is pure logic on the standard library, like package canon: the
// stores supply FetchStats, the CLI, API and dashboard present the Plan.
//
// # Estimating a rate from fetches that only see whether a page changed
//
// A crawler sees a page only when it fetches it, and only whether its
// content differs from the stored copy, not how many times it changed in
// between. Counting changes per unit of time therefore underestimates fast
// pages. Cho and Garcia-Molina ("Estimating frequency of change", ACM TOIT
// 3(3), 2003) model changes as a Poisson process of rate λ: an interval
// of length t ends changed with probability 1-e^{-λt}. For n fetches at a
// regular interval I of which X found a change their bias-reduced
// estimator is -ln((n-X+0.5)/(n+0.5))/I (RegularRate); for irregular
// intervals the maximum-likelihood λ solves Σ_changed t_i/(e^{λt_i}-1) =
// Σ_unchanged u_j. FetchStats keeps the number of intervals, the number
// that ended in a change and the total length of each kind, from which
// MLE computes the closed form (X/C)·ln(1+C/U), exact when the changed
// intervals are equal and the paper's estimator when all are (with the
// paper's bias reduction, so that a page changed at every fetch does not
// get an infinite rate).
//
// The advisor goes further, because a record seen twice must not be
// declared static, nor one that changed once infinitely fast, and because
// a point estimate from a few saturated intervals (every fetch found a
// change) says nothing about how fast the page is. Each record's rate is a
// posterior over a grid of 32 rates from one change in three years to one
// every two minutes, plus "never changes": the source's prior times the
// likelihood of the record's counters (Prior, Estimate). The prior is
// fitted to the source's own records by empirical Bayes (FitPrior: the
// nonparametric maximum-likelihood mixture, by EM with smoothing), so that
// a source whose pages mostly never change, or mostly change hourly, or
// fall in two groups, says so itself. The likelihood uses one counter
// beyond the sums: ChangedLogSeconds, the sum of the logarithms of the
// changed intervals, with which the changed intervals are represented by
// two points instead of their mean (see loglik); without it a short
// interval that ended in a change (the strongest evidence that a page is
// fast) averages away among long ones. A store without it (the counter at
// 0) still gets estimates, from the mean, and no probes: in the simulator
// that costs 4 points of the oracle's freshness on the default rates and
// 20 on mostly fast-changing ones (docs/RECRAWL.md).
//
// # The freshness-optimal allocation
//
// Cho and Garcia-Molina ("Effective page refresh policies for web
// crawlers", ACM TODS 28(4), 2003) show that a page of rate λ fetched at
// regular intervals 1/f is fresh a share F(λ,f) = (f/λ)(1-e^{-λ/f}) of the
// time (Freshness), and that maximising Σ F(λ_i, f_i) under a budget Σ f_i
// = B gives every fetched page the same marginal value ∂F/∂f = μ. The
// optimum is neither uniform nor proportional to λ: pages that change too
// fast to be kept fresh get fewer fetches and, beyond 1/λ < μ, none
// (Allocate, Frequency).
//
// # What "fetch now" means
//
// ∂F/∂f at f = 1/τ equals (1 - e^{-λτ}(1+λτ))/λ (Marginal), a function
// of the time τ since the last fetch that grows towards 1/λ. The
// Lagrangian view of the optimal schedule is therefore an index policy:
// fetch a page when the value of fetching it now, Marginal(λ, time since
// its last fetch), reaches μ; that happens exactly at its optimal interval
// 1/f_i, and a page with 1/λ < μ never reaches it. The advisor uses this
// index with the posterior: a record is due when E[Marginal(λ, age)] ≥ μ,
// and due records are ranked by that expected value, which is the
// expected freshness a fetch now buys in the same units as μ (days of
// freshness), comparable across records of any rate. Ranking by how
// overdue a record is against its optimal interval (age·f_i) was the
// alternative; it treats a slightly overdue page that will stay fresh for
// weeks like a slightly overdue one that will change again in an hour,
// which the index does not. μ comes from the optimal allocation of the
// budget over records distributed as the fitted prior, so "due" means
// "the optimal schedule for this budget would fetch it now"; with Fill
// the answer is topped up with the most valuable records not yet due, for
// a crawler of fixed capacity. In the simulator, the same ranking given
// the true rates (the "index" policy) does as well as the periodic
// optimal schedule (100.1% of it on the default distribution), so the
// rule loses nothing; what the advisor loses is what it does not know.
//
// # Learning
//
// A myopic ranking never learns that a page changing every hour is not
// worth its fetches: at long intervals every fetch finds a change, under
// every hypothesis. So records whose every fetch found a change (or that
// were fetched once), and whose posterior leaves between 15% and 85% on
// rates too fast to be worth fetching, are probed: fetched again between
// μ/2 and 3μ after their last fetch, youngest first, ahead of merely due
// records. A change within so short an interval marks the page as fast; no
// change gives it a finite estimate. Records fetched only once get their
// second fetch ahead of merely due records, for the same reason. These
// fetches are marked (Advice.Probe; reason source_prior for the second
// fetch).
//
// # Targets, events, archived records
//
// Targets never fetched (a round's targets with no record) come first, in
// the caller's order. A record whose event date falls after its last fetch
// and no later than a day ahead (EventWindow) is due whatever its rate,
// ahead of other records: deadlines and event dates are when pages
// change. Archived records are not ranked; the caller leaves them out.
//
// # Cost
//
// Advise is linear in the records: one posterior over 32 rates for each
// record old enough to be due (a younger record's fetch is worth at most
// 0.2985·age, below μ), with tabulated likelihood terms and a short
// polynomial for the exponentials, plus a heap of Limit records. Fitting
// the prior costs about as much again; a caller ranking a source often can
// fit it once an hour and pass it in.
//
// # The simulator
//
// Simulate crawls N pages whose content changes as Poisson processes with
// rates drawn from a distribution (ParseRates: presets, mixtures, a file)
// for 60 days at a budget of a tenth of the pages a day, spread over
// hourly ticks, and integrates each page's freshness exactly from its
// change and fetch times. Every fetch goes through a Store (crawlkeeper's
// ingest in the bench, MemStore in the tests), and the advisor sees only
// what the store kept. A target is added on day 30. Its rows are
// recrawl_freshness (the advisor's freshness over days 31-60 against the
// oracle's), recrawl_vs_nutch, recrawl_vs_uniform and recrawl_new_hours.
// docs/RECRAWL.md has the figures and their limits.
package recrawl
