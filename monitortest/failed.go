package monitortest

import (
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// markFailed marks targets failed in a round, each with its reason (an
// empty reason sends none).
func (e *env) markFailed(m crawlkeeper.Monitor, round string, at time.Time, reasons map[string]string, targets ...string) {
	e.tb.Helper()
	marks := make([]crawlkeeper.Mark, len(targets))
	for i, t := range targets {
		marks[i] = crawlkeeper.Mark{Round: round, Target: t, Kind: crawlkeeper.MarkFailed, At: at, Reason: reasons[t]}
	}
	if n, err := m.Mark(e.ctx, marks); err != nil || n != len(marks) {
		e.tb.Fatalf("mark %s failed: %d of %d, %v", round, n, len(marks), err)
	}
}

func (e *env) failed(m crawlkeeper.Monitor, q crawlkeeper.FailedQuery) *crawlkeeper.FailedPage {
	e.tb.Helper()
	p, err := m.Failed(e.ctx, q)
	if err != nil {
		e.tb.Fatalf("failed %+v: %v", q, err)
	}
	return p
}

// failedNames returns the names of a page, and "name=reason" for the ones
// with a reason.
func failedNames(p *crawlkeeper.FailedPage) []string {
	out := []string{}
	for _, t := range p.Targets {
		s := t.Target
		if t.Reason != "" {
			s += "=" + t.Reason
		}
		out = append(out, s)
	}
	return out
}

// allFailed pages through a query with pages of size, checking that every
// page has the whole count and that Next leads to the next page.
func (e *env) allFailed(m crawlkeeper.Monitor, q crawlkeeper.FailedQuery, size int) (names []string, count int64) {
	e.tb.Helper()
	q.Limit = size
	for pages := 0; ; pages++ {
		p := e.failed(m, q)
		if pages > 0 && p.Count != count {
			e.tb.Fatalf("page %d counts %d, the first %d", pages, p.Count, count)
		}
		count = p.Count
		if len(p.Targets) > size {
			e.tb.Fatalf("page of %d targets with limit %d", len(p.Targets), size)
		}
		for _, t := range p.Targets {
			names = append(names, t.Target)
		}
		if p.Next == "" {
			return names, count
		}
		if len(p.Targets) != size || p.Next != p.Targets[size-1].Target {
			e.tb.Fatalf("page %d: next %q after %d targets (limit %d)", pages, p.Next, len(p.Targets), size)
		}
		q.After = p.Next
	}
}

func testFailed(t *testing.T, open Opener) {
	e := newEnv(t, open, crawlkeeper.MonitorOptions{})
	ts := names("t", 0, 12)
	e.queue(e.M, "r", ts)
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(time.Minute), ts[0], ts[1])
	e.markFailed(e.M, "r", T0.Add(2*time.Minute), map[string]string{
		ts[2]: "HTTP 503",
		ts[5]: "timeout after 30s",
		ts[7]: "HTTP 503",
		ts[9]: "dns:\tno such host\nretry later",
	}, ts[2], ts[3], ts[5], ts[7], ts[9], ts[10])
	e.counts(e.M, "r", 12, 2, 6, 4)

	p := e.failed(e.M, crawlkeeper.FailedQuery{Round: "r"})
	if p.Round != "r" || p.Count != 6 || p.Next != "" {
		t.Fatalf("failed page = %+v", p)
	}
	// Reasons are kept on one line; a failure without one has none.
	equal(t, "failed with reasons", failedNames(p), []string{ts[2] + "=HTTP 503", ts[3], ts[5] + "=timeout after 30s",
		ts[7] + "=HTTP 503", ts[9] + "=dns: no such host retry later", ts[10]})

	// Paging, as Remaining: after a name, the count on every page.
	got, n := e.allFailed(e.M, crawlkeeper.FailedQuery{Round: "r"}, 4)
	equal(t, "paged", got, []string{ts[2], ts[3], ts[5], ts[7], ts[9], ts[10]})
	if n != 6 {
		t.Fatalf("paged count %d", n)
	}
	p = e.failed(e.M, crawlkeeper.FailedQuery{Round: "r", After: ts[5], Limit: 2})
	equal(t, "after a failed one", failedNames(p), []string{ts[7] + "=HTTP 503", ts[9] + "=dns: no such host retry later"})
	if p.Next != ts[9] {
		t.Fatalf("next = %q", p.Next)
	}
	// after may name a target that did not fail.
	p = e.failed(e.M, crawlkeeper.FailedQuery{Round: "r", After: ts[8]})
	equal(t, "after a remaining one", failedNames(p), []string{ts[9] + "=dns: no such host retry later", ts[10]})

	// The latest reason wins; a later failure without a reason keeps the
	// last one sent; a target done after it failed is no longer listed.
	e.markFailed(e.M, "r", T0.Add(3*time.Minute), map[string]string{ts[2]: "HTTP 502", ts[5]: " \n\t "}, ts[2], ts[5])
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(4*time.Minute), ts[7])
	p = e.failed(e.M, crawlkeeper.FailedQuery{Round: "r"})
	equal(t, "after retries", failedNames(p), []string{ts[2] + "=HTTP 502", ts[3], ts[5] + "=timeout after 30s", ts[9] + "=dns: no such host retry later", ts[10]})
	if p.Count != 5 {
		t.Fatalf("count after retries = %d", p.Count)
	}
	// Another handle, merges and a handle opened later see the same.
	if _, err := e.M.MergeBuckets(e.ctx, T0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, m := range []crawlkeeper.Monitor{e.handle(), e.handle()} {
		equal(t, "from another handle", failedNames(e.failed(m, crawlkeeper.FailedQuery{Round: "r"})), failedNames(p))
	}
	// Target shows the reason in the round it failed in.
	st, err := e.M.Target(e.ctx, ts[5])
	if err != nil || len(st.Rounds) != 1 || !st.Rounds[0].Failed || st.Rounds[0].Reason != "timeout after 30s" {
		t.Fatalf("target %s = %+v, %v", ts[5], st, err)
	}

	// Reasons are cut to MaxReasonBytes on a character boundary.
	long := strings.Repeat("é", crawlkeeper.MaxReasonBytes)
	e.markFailed(e.M, "r", T0.Add(5*time.Minute), map[string]string{ts[11]: long}, ts[11])
	p = e.failed(e.M, crawlkeeper.FailedQuery{Round: "r", After: ts[10]})
	if len(p.Targets) != 1 || p.Targets[0].Reason != strings.Repeat("é", crawlkeeper.MaxReasonBytes/2) {
		t.Fatalf("long reason = %+v", p.Targets)
	}

	// Errors.
	_, err = e.M.Failed(e.ctx, crawlkeeper.FailedQuery{Round: "nosuch"})
	wantCode(t, err, crawlkeeper.ENOTFOUND, "failed of an unknown round")
	_, err = e.M.Failed(e.ctx, crawlkeeper.FailedQuery{Round: "r", After: "nosuch"})
	wantCode(t, err, crawlkeeper.ENOTFOUND, "failed after an unknown target")
	_, err = e.M.Failed(e.ctx, crawlkeeper.FailedQuery{Round: "r", Also: "nosuch"})
	wantCode(t, err, crawlkeeper.ENOTFOUND, "failed also in an unknown round")
	_, err = e.M.Failed(e.ctx, crawlkeeper.FailedQuery{})
	wantCode(t, err, crawlkeeper.EINVALID, "failed without a round")
	_, err = e.M.Mark(e.ctx, []crawlkeeper.Mark{{Round: "r", Target: ts[0], Kind: crawlkeeper.MarkDone, At: T0, Reason: "x"}})
	wantCode(t, err, crawlkeeper.EINVALID, "a reason on a done mark")
	// A round without failures lists none.
	e.mark(e.M, "clean", crawlkeeper.MarkDone, T0, ts[0])
	if p := e.failed(e.M, crawlkeeper.FailedQuery{Round: "clean"}); p.Count != 0 || len(p.Targets) != 0 || p.Next != "" {
		t.Fatalf("failed of a clean round = %+v", p)
	}
}

// testFailedRounds checks the filters across rounds: failed in two
// rounds, and failed then done in a later round.
func testFailedRounds(t *testing.T, open Opener) {
	e := newEnv(t, open, crawlkeeper.MonitorOptions{})
	ts := names("s", 0, 10)
	day := 24 * time.Hour
	// Rounds 1, 2 and 3 on three days; "0" was created before round 1.
	for i, r := range []string{"0", "1", "2", "3"} {
		if _, err := e.M.Queue(e.ctx, crawlkeeper.QueueRequest{Round: r, Targets: ts, At: T0.Add(time.Duration(i-1) * day)}); err != nil {
			t.Fatal(err)
		}
	}
	// Done in a round before 1 does not count as done later.
	e.mark(e.M, "0", crawlkeeper.MarkDone, T0.Add(-day), ts[2])
	e.markFailed(e.M, "1", T0.Add(time.Hour), map[string]string{ts[1]: "503 in 1", ts[2]: "timeout in 1", ts[4]: "blocked in 1"}, ts[1], ts[2], ts[3], ts[4], ts[6])
	e.markFailed(e.M, "2", T0.Add(day+time.Hour), map[string]string{ts[2]: "timeout in 2", ts[4]: "blocked in 2"}, ts[2], ts[4], ts[5], ts[6])
	// ts[6] failed in 2, then was done in 2: not failed there.
	e.mark(e.M, "2", crawlkeeper.MarkDone, T0.Add(day+2*time.Hour), ts[6], ts[3])
	// Round 3 does ts[1] (merged later) and ts[4] (in an open bucket).
	e.mark(e.M, "3", crawlkeeper.MarkDone, T0.Add(2*day+time.Hour), ts[1])
	if _, err := e.M.MergeBuckets(e.ctx, T0.Add(2*day+2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	e.mark(e.M, "3", crawlkeeper.MarkDone, T0.Add(2*day+3*time.Hour), ts[4])

	// Failed in 1 and in 2, with the reasons of both.
	p := e.failed(e.M, crawlkeeper.FailedQuery{Round: "1", Also: "2"})
	if p.Also != "2" || p.Count != 2 || len(p.Targets) != 2 {
		t.Fatalf("failed in 1 and 2 = %+v", p)
	}
	equal(t, "failed in both", p.Targets, []crawlkeeper.FailedTarget{
		{Target: ts[2], Reason: "timeout in 1", AlsoReason: "timeout in 2"},
		{Target: ts[4], Reason: "blocked in 1", AlsoReason: "blocked in 2"},
	})
	// The filter is symmetric in its sets.
	p = e.failed(e.M, crawlkeeper.FailedQuery{Round: "2", Also: "1"})
	equal(t, "failed in both, the other way", failedNames(p), []string{ts[2] + "=timeout in 2", ts[4] + "=blocked in 2"})

	// Failed in 1 and done in a later round (2 or 3, not 0), with the
	// first round that did it.
	p = e.failed(e.M, crawlkeeper.FailedQuery{Round: "1", DoneLater: true})
	if !p.DoneLater || p.Count != 4 {
		t.Fatalf("failed in 1, done later = %+v", p)
	}
	equal(t, "failed then done", p.Targets, []crawlkeeper.FailedTarget{
		{Target: ts[1], Reason: "503 in 1", DoneIn: "3"},
		{Target: ts[3], DoneIn: "2"},
		{Target: ts[4], Reason: "blocked in 1", DoneIn: "3"},
		{Target: ts[6], DoneIn: "2"},
	})
	doneLater := p.Targets
	got, n := e.allFailed(e.M, crawlkeeper.FailedQuery{Round: "1", DoneLater: true}, 3)
	equal(t, "failed then done, paged", got, []string{ts[1], ts[3], ts[4], ts[6]})
	if n != 4 {
		t.Fatalf("paged count = %d", n)
	}
	// Both filters together: failed in 1 and 2, done later than 1.
	p = e.failed(e.M, crawlkeeper.FailedQuery{Round: "1", Also: "2", DoneLater: true})
	equal(t, "both filters", p.Targets, []crawlkeeper.FailedTarget{{Target: ts[4], Reason: "blocked in 1", AlsoReason: "blocked in 2", DoneIn: "3"}})
	// The newest round has no later round.
	if p := e.failed(e.M, crawlkeeper.FailedQuery{Round: "3", DoneLater: true}); p.Count != 0 || len(p.Targets) != 0 {
		t.Fatalf("done later than the newest round = %+v", p)
	}
	// Another handle agrees.
	other := e.handle()
	equal(t, "from another handle", e.failed(other, crawlkeeper.FailedQuery{Round: "1", DoneLater: true}).Targets, doneLater)
}
