// Package monitortest is the conformance suite of crawlkeeper.Monitor.
// Every backend's tests call Run with an Opener; a backend passes when
// every subtest passes unchanged.
package monitortest

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Opener prepares an empty backend for one subtest and returns a function
// that opens a monitor on it. Each call of that function opens another
// handle on the same data, as another process would; the suite closes
// every handle it opens.
type Opener func(tb testing.TB) func(opts crawlkeeper.MonitorOptions) crawlkeeper.Monitor

// T0 is the suite's reference time, aligned on every bucket length used.
var T0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// Run runs every conformance test against backends made by open.
func Run(t *testing.T, open Opener) {
	t.Run("Dictionary", func(t *testing.T) { testDictionary(t, open) })
	t.Run("QueueDoneFailedRemaining", func(t *testing.T) { testProgress(t, open) })
	t.Run("Validation", func(t *testing.T) { testValidation(t, open) })
	t.Run("Buckets", func(t *testing.T) { testBuckets(t, open) })
	t.Run("MergeAndRetention", func(t *testing.T) { testMerge(t, open) })
	t.Run("ClosedRoundBuckets", func(t *testing.T) { testClosedBuckets(t, open) })
	t.Run("RoundsWithNewTargets", func(t *testing.T) { testRounds(t, open) })
	t.Run("Diff", func(t *testing.T) { testDiff(t, open) })
	t.Run("Failed", func(t *testing.T) { testFailed(t, open) })
	t.Run("FailedAcrossRounds", func(t *testing.T) { testFailedRounds(t, open) })
	t.Run("Target", func(t *testing.T) { testTarget(t, open) })
	t.Run("Fields", func(t *testing.T) { testFields(t, open) })
	t.Run("SharedHandles", func(t *testing.T) { testShared(t, open) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, open) })
}

// env is one subtest's backend with a default handle.
type env struct {
	tb   testing.TB
	ctx  context.Context
	open func(opts crawlkeeper.MonitorOptions) crawlkeeper.Monitor
	opts crawlkeeper.MonitorOptions
	M    crawlkeeper.Monitor
}

func newEnv(tb testing.TB, open Opener, opts crawlkeeper.MonitorOptions) *env {
	tb.Helper()
	e := &env{tb: tb, ctx: context.Background(), open: open(tb), opts: opts}
	e.M = e.handle()
	return e
}

// handle opens another handle on the subtest's backend.
func (e *env) handle() crawlkeeper.Monitor {
	e.tb.Helper()
	m := e.open(e.opts)
	e.tb.Cleanup(func() {
		if err := m.Close(); err != nil {
			e.tb.Errorf("close: %v", err)
		}
	})
	return m
}

func names(prefix string, from, to int) []string {
	out := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s%05d", prefix, i))
	}
	return out
}

func (e *env) queue(m crawlkeeper.Monitor, round string, targets []string) *crawlkeeper.QueueResult {
	e.tb.Helper()
	res, err := m.Queue(e.ctx, crawlkeeper.QueueRequest{Round: round, Targets: targets, At: T0})
	if err != nil {
		e.tb.Fatalf("queue %s: %v", round, err)
	}
	return res
}

func (e *env) mark(m crawlkeeper.Monitor, round string, kind crawlkeeper.MarkKind, at time.Time, targets ...string) {
	e.tb.Helper()
	marks := make([]crawlkeeper.Mark, len(targets))
	for i, t := range targets {
		marks[i] = crawlkeeper.Mark{Round: round, Target: t, Kind: kind, At: at}
	}
	n, err := m.Mark(e.ctx, marks)
	if err != nil {
		e.tb.Fatalf("mark %s %s: %v", round, kind, err)
	}
	if n != len(marks) {
		e.tb.Fatalf("mark %s %s recorded %d of %d", round, kind, n, len(marks))
	}
}

func (e *env) status(m crawlkeeper.Monitor, round string) *crawlkeeper.RoundStatus {
	e.tb.Helper()
	st, err := m.Status(e.ctx, round)
	if err != nil {
		e.tb.Fatalf("status %s: %v", round, err)
	}
	return st
}

func (e *env) counts(m crawlkeeper.Monitor, round string, queued, done, failed, remaining int64) {
	e.tb.Helper()
	st := e.status(m, round)
	got := [4]int64{st.Queued, st.Done, st.Failed, st.Remaining}
	want := [4]int64{queued, done, failed, remaining}
	if got != want {
		e.tb.Fatalf("round %s: queued/done/failed/remaining = %v, want %v", round, got, want)
	}
}

func (e *env) remaining(m crawlkeeper.Monitor, round, after string, limit int) []string {
	e.tb.Helper()
	r, err := m.Remaining(e.ctx, round, after, limit)
	if err != nil {
		e.tb.Fatalf("remaining %s after %q: %v", round, after, err)
	}
	return r
}

func wantCode(tb testing.TB, err error, code, what string) {
	tb.Helper()
	if crawlkeeper.ErrorCode(err) != code {
		tb.Fatalf("%s: error %v (code %q), want code %q", what, err, crawlkeeper.ErrorCode(err), code)
	}
}

func equal(tb testing.TB, what string, got, want any) {
	tb.Helper()
	if !reflect.DeepEqual(got, want) {
		tb.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func testDictionary(t *testing.T, open Opener) {
	e := newEnv(t, open, crawlkeeper.MonitorOptions{})
	res := e.queue(e.M, "1", []string{"gamma", "alpha", "beta", "alpha"})
	equal(t, "queue result", *res, crawlkeeper.QueueResult{Round: "1", Queued: 3, NewTargets: 3, Total: 3})
	res = e.queue(e.M, "2", []string{"beta", "delta"})
	equal(t, "second queue", *res, crawlkeeper.QueueResult{Round: "2", Queued: 2, NewTargets: 1, Total: 2})

	// Ids are dense, in order of first appearance, and never change.
	ids := map[string]uint32{}
	for _, n := range []string{"gamma", "alpha", "beta", "delta"} {
		ts, err := e.M.Target(e.ctx, n)
		if err != nil {
			t.Fatalf("target %s: %v", n, err)
		}
		ids[n] = ts.ID
	}
	equal(t, "ids", ids, map[string]uint32{"gamma": 0, "alpha": 1, "beta": 2, "delta": 3})
	// Dictionary order is the order of ids, not of names.
	equal(t, "remaining 1", e.remaining(e.M, "1", "", 0), []string{"gamma", "alpha", "beta"})

	// Marking an unknown target adds it to the dictionary.
	e.mark(e.M, "2", crawlkeeper.MarkDone, T0, "epsilon")
	ts, err := e.M.Target(e.ctx, "epsilon")
	if err != nil || ts.ID != 4 {
		t.Fatalf("epsilon: %+v %v", ts, err)
	}
	_, err = e.M.Target(e.ctx, "nosuch")
	wantCode(t, err, crawlkeeper.ENOTFOUND, "unknown target")

	// A large queue stays dense: ids 5 .. 5+n-1.
	many := names("site-", 0, 3000)
	res = e.queue(e.M, "3", many)
	if res.NewTargets != 3000 || res.Queued != 3000 {
		t.Fatalf("large queue: %+v", res)
	}
	for _, i := range []int{0, 1499, 2999} {
		ts, err := e.M.Target(e.ctx, many[i])
		if err != nil || ts.ID != uint32(5+i) {
			t.Fatalf("target %s: %+v %v, want id %d", many[i], ts, err, 5+i)
		}
	}
	// Another handle (another process) sees the same dictionary.
	other := e.handle()
	ts, err = other.Target(e.ctx, many[2999])
	if err != nil || ts.ID != 3004 {
		t.Fatalf("other handle: %+v %v", ts, err)
	}
	res = e.queue(other, "3", []string{"zeta"})
	if res.NewTargets != 1 {
		t.Fatalf("zeta: %+v", res)
	}
	if ts, err := e.M.Target(e.ctx, "zeta"); err != nil || ts.ID != 3005 {
		t.Fatalf("zeta from first handle: %+v %v", ts, err)
	}
}

func testProgress(t *testing.T, open Opener) {
	e := newEnv(t, open, crawlkeeper.MonitorOptions{})
	ts := names("t", 0, 10)
	e.queue(e.M, "r", ts)
	e.counts(e.M, "r", 10, 0, 0, 10)
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(time.Minute), ts[1], ts[3], ts[5])
	e.mark(e.M, "r", crawlkeeper.MarkFailed, T0.Add(2*time.Minute), ts[0], ts[9])
	e.counts(e.M, "r", 10, 3, 2, 5)
	equal(t, "remaining", e.remaining(e.M, "r", "", 0), []string{ts[2], ts[4], ts[6], ts[7], ts[8]})
	equal(t, "page 1", e.remaining(e.M, "r", "", 2), []string{ts[2], ts[4]})
	equal(t, "page 2", e.remaining(e.M, "r", ts[4], 2), []string{ts[6], ts[7]})
	equal(t, "page 3", e.remaining(e.M, "r", ts[7], 2), []string{ts[8]})
	equal(t, "after the last", e.remaining(e.M, "r", ts[8], 2), []string{})
	// after may name a target that is not remaining, or not in the round.
	equal(t, "after a done one", e.remaining(e.M, "r", ts[5], 0), []string{ts[6], ts[7], ts[8]})

	// A failed target that is done later counts as done only.
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(3*time.Minute), ts[0])
	e.counts(e.M, "r", 10, 4, 1, 5)
	// Marking twice changes nothing.
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(4*time.Minute), ts[0], ts[1])
	e.counts(e.M, "r", 10, 4, 1, 5)
	// A done target that was never queued counts as done, not remaining.
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(4*time.Minute), "extra")
	e.counts(e.M, "r", 10, 5, 1, 5)
	// Queue marks work like Queue.
	e.mark(e.M, "r", crawlkeeper.MarkQueued, T0, "late")
	e.counts(e.M, "r", 11, 5, 1, 6)

	_, err := e.M.Status(e.ctx, "nosuch")
	wantCode(t, err, crawlkeeper.ENOTFOUND, "status of an unknown round")
	_, err = e.M.Remaining(e.ctx, "nosuch", "", 0)
	wantCode(t, err, crawlkeeper.ENOTFOUND, "remaining of an unknown round")
	_, err = e.M.Remaining(e.ctx, "r", "nosuch", 0)
	wantCode(t, err, crawlkeeper.ENOTFOUND, "remaining after an unknown target")

	// A round can start with a mark, without a queue.
	e.mark(e.M, "adhoc", crawlkeeper.MarkDone, T0, ts[0])
	e.counts(e.M, "adhoc", 0, 1, 0, 0)
}

func testValidation(t *testing.T, open Opener) {
	e := newEnv(t, open, crawlkeeper.MonitorOptions{})
	for _, tc := range []struct {
		what string
		m    crawlkeeper.Mark
	}{
		{"empty round", crawlkeeper.Mark{Target: "a", Kind: crawlkeeper.MarkDone, At: T0}},
		{"empty target", crawlkeeper.Mark{Round: "1", Kind: crawlkeeper.MarkDone, At: T0}},
		{"newline in target", crawlkeeper.Mark{Round: "1", Target: "a\nb", Kind: crawlkeeper.MarkDone, At: T0}},
		{"bad kind", crawlkeeper.Mark{Round: "1", Target: "a", Kind: "maybe", At: T0}},
		{"no time", crawlkeeper.Mark{Round: "1", Target: "a", Kind: crawlkeeper.MarkDone}},
	} {
		_, err := e.M.Mark(e.ctx, []crawlkeeper.Mark{{Round: "1", Target: "ok", Kind: crawlkeeper.MarkDone, At: T0}, tc.m})
		wantCode(t, err, crawlkeeper.EINVALID, tc.what)
	}
	// A rejected batch records nothing.
	_, err := e.M.Status(e.ctx, "1")
	wantCode(t, err, crawlkeeper.ENOTFOUND, "round of a rejected batch")
	_, err = e.M.Queue(e.ctx, crawlkeeper.QueueRequest{Round: "1", Targets: []string{"a", ""}, At: T0})
	wantCode(t, err, crawlkeeper.EINVALID, "queue with an empty name")
	_, err = e.M.Queue(e.ctx, crawlkeeper.QueueRequest{Round: "1", Targets: []string{"a"}, Bucket: 500 * time.Millisecond, At: T0})
	wantCode(t, err, crawlkeeper.EINVALID, "queue with a bad bucket")
	if n, err := e.M.Mark(e.ctx, nil); n != 0 || err != nil {
		t.Fatalf("empty mark: %d %v", n, err)
	}
}

func bucketCounts(st *crawlkeeper.RoundStatus) map[string]int64 {
	out := map[string]int64{}
	for _, b := range st.Buckets {
		out[b.Start.UTC().Format("15:04")] = b.Done
	}
	return out
}

func testBuckets(t *testing.T, open Opener) {
	e := newEnv(t, open, crawlkeeper.MonitorOptions{})
	ts := names("t", 0, 6)
	e.queue(e.M, "r", ts)
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(time.Minute), ts[0])
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(9*time.Minute+59*time.Second), ts[1], ts[2])
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(10*time.Minute), ts[3])
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(35*time.Minute), ts[4])
	st := e.status(e.M, "r")
	equal(t, "buckets", bucketCounts(st), map[string]int64{"12:00": 3, "12:10": 1, "12:30": 1})
	if st.Done != 5 || st.Bucket.D() != 10*time.Minute {
		t.Fatalf("status = %+v", st)
	}
	for i := 1; i < len(st.Buckets); i++ {
		if !st.Buckets[i-1].Start.Before(st.Buckets[i].Start) {
			t.Fatalf("buckets not in time order: %+v", st.Buckets)
		}
	}
	// A target done again in a later bucket counts in both buckets (it is
	// throughput) but once in the round.
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(36*time.Minute), ts[0])
	st = e.status(e.M, "r")
	if st.Done != 5 || bucketCounts(st)["12:30"] != 2 {
		t.Fatalf("after a repeat: %+v", st)
	}

	// A round can ask for its own bucket length.
	e.M.Queue(e.ctx, crawlkeeper.QueueRequest{Round: "slow", Targets: ts, Bucket: 30 * time.Minute, At: T0})
	e.mark(e.M, "slow", crawlkeeper.MarkDone, T0.Add(time.Minute), ts[0])
	e.mark(e.M, "slow", crawlkeeper.MarkDone, T0.Add(29*time.Minute), ts[1])
	e.mark(e.M, "slow", crawlkeeper.MarkDone, T0.Add(31*time.Minute), ts[2])
	st = e.status(e.M, "slow")
	equal(t, "30m buckets", bucketCounts(st), map[string]int64{"12:00": 2, "12:30": 1})
	if st.Bucket.D() != 30*time.Minute {
		t.Fatalf("bucket = %v", st.Bucket)
	}
	// Once a round has buckets, its length cannot change.
	_, err := e.M.Queue(e.ctx, crawlkeeper.QueueRequest{Round: "slow", Targets: ts, Bucket: 5 * time.Minute, At: T0})
	wantCode(t, err, crawlkeeper.EINVALID, "changing the bucket length")
	// Asking for the same length again is fine.
	if _, err := e.M.Queue(e.ctx, crawlkeeper.QueueRequest{Round: "slow", Targets: ts, Bucket: 30 * time.Minute, At: T0}); err != nil {
		t.Fatal(err)
	}

	// The default bucket length comes from the options.
	e2 := newEnv(t, open, crawlkeeper.MonitorOptions{Bucket: time.Hour})
	e2.mark(e2.M, "h", crawlkeeper.MarkDone, T0.Add(59*time.Minute), "a")
	e2.mark(e2.M, "h", crawlkeeper.MarkDone, T0.Add(61*time.Minute), "b")
	equal(t, "1h buckets", bucketCounts(e2.status(e2.M, "h")), map[string]int64{"12:00": 1, "13:00": 1})
}

func testMerge(t *testing.T, open Opener) {
	// The round below is closed (nothing remains in it), so the closed
	// retention is the one that applies; testClosedBuckets tells them
	// apart.
	opts := crawlkeeper.MonitorOptions{BucketRetention: 2 * time.Hour, ClosedBucketRetention: 2 * time.Hour}
	e := newEnv(t, open, opts)
	ts := names("t", 0, 100)
	e.queue(e.M, "r", ts)
	// Ten buckets of ten targets each.
	for b := 0; b < 10; b++ {
		e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(time.Duration(b)*10*time.Minute+time.Minute), ts[b*10:b*10+10]...)
	}
	e.counts(e.M, "r", 100, 100, 0, 0)

	// Nothing is finished before the first bucket ends.
	res, err := e.M.MergeBuckets(e.ctx, T0.Add(10*time.Minute-time.Second))
	if err != nil || res.Merged != 0 || res.Dropped != 0 {
		t.Fatalf("early merge: %+v %v", res, err)
	}
	// At the end of the third bucket, three buckets are finished.
	res, err = e.M.MergeBuckets(e.ctx, T0.Add(30*time.Minute))
	if err != nil || res.Merged != 3 || res.Dropped != 0 {
		t.Fatalf("merge at 12:30: %+v %v", res, err)
	}
	res, err = e.M.MergeBuckets(e.ctx, T0.Add(30*time.Minute))
	if err != nil || res.Merged != 0 {
		t.Fatalf("merge is not idempotent: %+v %v", res, err)
	}
	st := e.status(e.M, "r")
	merged := 0
	for _, b := range st.Buckets {
		if b.Merged {
			merged++
		}
		if b.Done != 10 {
			t.Fatalf("bucket %v: done %d", b.Start, b.Done)
		}
	}
	if merged != 3 || st.Done != 100 || st.Remaining != 0 {
		t.Fatalf("after merge: %+v", st)
	}
	// Another handle sees the merged state.
	other := e.handle()
	e.counts(other, "r", 100, 100, 0, 0)

	// A late mark into a merged bucket still counts.
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(5*time.Minute), "late")
	st = e.status(e.M, "r")
	if st.Done != 101 || bucketCounts(st)["12:00"] != 11 {
		t.Fatalf("late mark: %+v", st)
	}

	// Past the retention, bucket sets are dropped but their counts stay.
	res, err = e.M.MergeBuckets(e.ctx, T0.Add(10*time.Minute+2*time.Hour))
	if err != nil || res.Merged != 7 || res.Dropped != 1 {
		t.Fatalf("merge at 14:10: %+v %v", res, err)
	}
	res, err = e.M.MergeBuckets(e.ctx, T0.Add(24*time.Hour))
	if err != nil || res.Merged != 0 || res.Dropped != 9 {
		t.Fatalf("merge a day later: %+v %v", res, err)
	}
	st = e.status(e.M, "r")
	if len(st.Buckets) != 10 || st.Done != 101 || st.BucketBytes != 0 {
		t.Fatalf("after drop: %+v", st)
	}
	for _, b := range st.Buckets {
		if !b.Merged || !b.Dropped || b.Done < 10 {
			t.Fatalf("dropped bucket: %+v", b)
		}
	}
	e.counts(other, "r", 100, 101, 0, 0)
	// A mark into a dropped bucket goes straight to the round's done set.
	e.mark(e.M, "r", crawlkeeper.MarkDone, T0.Add(time.Minute), "later")
	e.counts(e.M, "r", 100, 102, 0, 0)
}

func testRounds(t *testing.T, open Opener) {
	e := newEnv(t, open, crawlkeeper.MonitorOptions{})
	first := names("co-", 0, 300)
	e.queue(e.M, "1", first)
	e.mark(e.M, "1", crawlkeeper.MarkDone, T0.Add(time.Minute), first...)
	e.M.MergeBuckets(e.ctx, T0.Add(time.Hour))
	// Round 2 has every target of round 1 and 100 new ones.
	second := append(append([]string{}, first...), names("co-", 300, 400)...)
	res, err := e.M.Queue(e.ctx, crawlkeeper.QueueRequest{Round: "2", Targets: second, At: T0.Add(24 * time.Hour)})
	if err != nil || res.NewTargets != 100 || res.Queued != 400 {
		t.Fatalf("queue round 2: %+v %v", res, err)
	}
	e.counts(e.M, "1", 300, 300, 0, 0)
	e.counts(e.M, "2", 400, 0, 0, 400)
	// Half of the old and all the new targets are done in round 2.
	done2 := append(append([]string{}, first[:150]...), names("co-", 300, 400)...)
	e.mark(e.M, "2", crawlkeeper.MarkDone, T0.Add(25*time.Hour), done2...)
	e.counts(e.M, "2", 400, 250, 0, 150)
	rem := e.remaining(e.M, "2", "", 1000)
	equal(t, "remaining of round 2", rem, first[150:])

	rounds, err := e.M.Rounds(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rounds) != 2 || rounds[0].Round != "1" || rounds[1].Round != "2" {
		t.Fatalf("rounds = %+v", rounds)
	}
	r2 := rounds[1]
	if r2.Queued != 400 || r2.Done != 250 || r2.Remaining != 150 || !r2.CreatedAt.Equal(T0.Add(24*time.Hour)) || r2.Bucket.D() != crawlkeeper.DefaultBucket {
		t.Fatalf("round 2 summary = %+v", r2)
	}
	if !rounds[0].CreatedAt.Equal(T0) {
		t.Fatalf("round 1 created %v", rounds[0].CreatedAt)
	}
}

func testDiff(t *testing.T, open Opener) {
	e := newEnv(t, open, crawlkeeper.MonitorOptions{})
	ts := names("t", 0, 20)
	e.mark(e.M, "a", crawlkeeper.MarkDone, T0, ts[:12]...)
	e.mark(e.M, "b", crawlkeeper.MarkDone, T0, ts[8:]...)
	e.M.MergeBuckets(e.ctx, T0.Add(time.Hour)) // one side merged, the other not
	e.mark(e.M, "b", crawlkeeper.MarkDone, T0.Add(2*time.Hour), "only-b")
	d, err := e.M.Diff(e.ctx, "a", "b", "", 5)
	if err != nil {
		t.Fatal(err)
	}
	if d.Round != "a" || d.Vs != "b" || d.OnlyRound.Count != 8 || d.OnlyVs.Count != 9 {
		t.Fatalf("diff = %+v", d)
	}
	equal(t, "only in a", d.OnlyRound.Names, ts[:5])
	equal(t, "only in b", d.OnlyVs.Names, ts[12:17])
	d, err = e.M.Diff(e.ctx, "a", "b", ts[4], 5)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "only in a, page 2", d.OnlyRound.Names, ts[5:8])
	equal(t, "only in b, page 2", d.OnlyVs.Names, ts[12:17])
	if d, err = e.M.Diff(e.ctx, "a", "b", ts[16], 5); err != nil {
		t.Fatal(err)
	}
	equal(t, "only in b, page 3", d.OnlyVs.Names, []string{ts[17], ts[18], ts[19], "only-b"})
	if d, err = e.M.Diff(e.ctx, "a", "a", "", 5); err != nil {
		t.Fatal(err)
	}
	if d.OnlyRound.Count != 0 || d.OnlyVs.Count != 0 || len(d.OnlyRound.Names) != 0 {
		t.Fatalf("self diff = %+v", d)
	}
	_, err = e.M.Diff(e.ctx, "a", "nosuch", "", 5)
	wantCode(t, err, crawlkeeper.ENOTFOUND, "diff with an unknown round")
}

func testTarget(t *testing.T, open Opener) {
	e := newEnv(t, open, crawlkeeper.MonitorOptions{BucketRetention: time.Hour})
	e.queue(e.M, "1", []string{"x", "y"})
	e.mark(e.M, "1", crawlkeeper.MarkDone, T0.Add(12*time.Minute), "x")
	e.mark(e.M, "2", crawlkeeper.MarkFailed, T0.Add(24*time.Hour), "x")
	e.queue(e.M, "3", []string{"y"})
	ts, err := e.M.Target(e.ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if ts.Target != "x" || len(ts.Rounds) != 2 {
		t.Fatalf("target x = %+v", ts)
	}
	r1, r2 := ts.Rounds[0], ts.Rounds[1]
	if r1.Round != "1" || !r1.Queued || !r1.Done || r1.Failed || r1.DoneAt == nil || !r1.DoneAt.Equal(T0.Add(10*time.Minute)) {
		t.Fatalf("x in round 1 = %+v", r1)
	}
	if r2.Round != "2" || r2.Queued || r2.Done || !r2.Failed {
		t.Fatalf("x in round 2 = %+v", r2)
	}
	if ts, err = e.M.Target(e.ctx, "y"); err != nil {
		t.Fatal(err)
	}
	if len(ts.Rounds) != 2 || ts.Rounds[0].Round != "1" || ts.Rounds[1].Round != "3" || ts.Rounds[0].Done {
		t.Fatalf("target y = %+v", ts)
	}
	// Once the bucket set is dropped, the round still knows x is done.
	if _, err := e.M.MergeBuckets(e.ctx, T0.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if ts, err = e.M.Target(e.ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if !ts.Rounds[0].Done || ts.Rounds[0].DoneAt != nil {
		t.Fatalf("x after drop = %+v", ts.Rounds[0])
	}
}

func obs(source, round, target string, id int64, fields ...string) crawlkeeper.FieldObservation {
	o := crawlkeeper.FieldObservation{Source: source, Round: round, Target: target, RecordID: id}
	for i := 0; i+1 < len(fields); i += 2 {
		o.Fields = append(o.Fields, crawlkeeper.FieldFill{Name: fields[i], Filled: fields[i+1] == "1"})
	}
	return o
}

func testFields(t *testing.T, open Opener) {
	opts := crawlkeeper.MonitorOptions{Samples: 3, WatchFields: func(source string) []string {
		if source == "jobs" {
			return []string{"salary", "benefits"}
		}
		return nil
	}}
	e := newEnv(t, open, opts)
	var batch []crawlkeeper.FieldObservation
	// Round 1: 10 items; salary filled in 2 (configured), remote filled in
	// 1 (rare: 10%), title always filled (not reported).
	for i := 0; i < 10; i++ {
		sal, rem := "0", "0"
		if i == 3 || i == 7 {
			sal = "1"
		}
		if i == 5 {
			rem = "1"
		}
		batch = append(batch, obs("jobs", "1", fmt.Sprintf("site%d", i), int64(100+i), "title", "1", "salary", sal, "remote", rem))
	}
	if err := e.M.ObserveFields(e.ctx, batch); err != nil {
		t.Fatal(err)
	}
	rep := fieldMap(t, e.M, "jobs")
	if _, ok := rep["title"]; ok {
		t.Fatalf("title is always filled and not watched, but reported: %+v", rep["title"])
	}
	sal := rep["salary"]
	if sal.Watch != "config" || sal.Present != 10 || sal.Filled != 2 || sal.Targets != 2 || sal.Enough || !reflect.DeepEqual(sal.Samples, []int64{103, 107}) {
		t.Fatalf("salary = %+v", sal)
	}
	if sal.FillRateByRound["1"] != 0.2 || sal.FillRate != 0.2 {
		t.Fatalf("salary fill rate = %v %v", sal.FillRate, sal.FillRateByRound)
	}
	rem := rep["remote"]
	if rem.Watch != "rare" || rem.Filled != 1 || rem.Targets != 1 || !reflect.DeepEqual(rem.Samples, []int64{105}) {
		t.Fatalf("remote = %+v", rem)
	}
	if b := rep["benefits"]; b.Watch != "config" || b.Present != 0 || b.Samples == nil {
		t.Fatalf("benefits (configured, never seen) = %+v", b)
	}

	// Round 2, from another handle: salary filled in 3 of 4 items; the
	// third sample makes it enough and deletes its target set.
	other := e.handle()
	batch = nil
	for i := 0; i < 4; i++ {
		batch = append(batch, obs("jobs", "2", fmt.Sprintf("site%d", i), int64(200+i), "salary", fmt.Sprint(min(i, 1))))
	}
	if err := other.ObserveFields(e.ctx, batch); err != nil {
		t.Fatal(err)
	}
	sal = fieldMap(t, e.M, "jobs")["salary"]
	if !sal.Enough || sal.Present != 14 || sal.Filled != 5 || len(sal.Samples) != 3 || sal.Samples[2] != 201 {
		t.Fatalf("salary after round 2 = %+v", sal)
	}
	if sal.Targets != 3 {
		t.Fatalf("salary targets = %d, want 3 (sites 3, 7, 1 when the set was deleted)", sal.Targets)
	}
	if sal.FillRateByRound["1"] != 0.2 || sal.FillRateByRound["2"] != 0.75 {
		t.Fatalf("salary fill by round = %v", sal.FillRateByRound)
	}
	// More filled items add no samples once enough.
	other.ObserveFields(e.ctx, []crawlkeeper.FieldObservation{obs("jobs", "2", "site9", 300, "salary", "1")})
	sal = fieldMap(t, e.M, "jobs")["salary"]
	if len(sal.Samples) != 3 || sal.Filled != 6 || sal.Targets != 3 {
		t.Fatalf("salary after enough = %+v", sal)
	}
	// The same record seen twice is one sample.
	e.M.ObserveFields(e.ctx, []crawlkeeper.FieldObservation{obs("jobs", "", "", 105, "remote", "1")})
	rem = fieldMap(t, e.M, "jobs")["remote"]
	if len(rem.Samples) != 1 || rem.Filled != 2 || len(rem.FillRateByRound) != 1 {
		t.Fatalf("remote after a repeat = %+v", rem)
	}

	// Another source, and the listing of all sources.
	e.M.ObserveFields(e.ctx, []crawlkeeper.FieldObservation{obs("news", "1", "n1", 1, "author", "0")})
	all, err := e.M.Fields(e.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range all {
		got = append(got, r.Source+"/"+r.Field)
	}
	equal(t, "all fields", got, []string{"jobs/benefits", "jobs/remote", "jobs/salary", "news/author"})
}

func fieldMap(t *testing.T, m crawlkeeper.Monitor, source string) map[string]crawlkeeper.FieldReport {
	t.Helper()
	reps, err := m.Fields(context.Background(), source)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]crawlkeeper.FieldReport{}
	for _, r := range reps {
		if r.Source != source {
			t.Fatalf("asked for %s, got %+v", source, r)
		}
		out[r.Field] = r
	}
	return out
}

func testShared(t *testing.T, open Opener) {
	e := newEnv(t, open, crawlkeeper.MonitorOptions{})
	a, b := e.M, e.handle()
	ts := names("t", 0, 50)
	e.queue(a, "r", ts)
	e.counts(b, "r", 50, 0, 0, 50)
	e.mark(b, "r", crawlkeeper.MarkDone, T0, ts[:20]...)
	e.counts(a, "r", 50, 20, 0, 30)
	e.mark(a, "r", crawlkeeper.MarkFailed, T0, ts[20:25]...)
	if _, err := b.MergeBuckets(e.ctx, T0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	e.mark(a, "r", crawlkeeper.MarkDone, T0.Add(2*time.Hour), ts[25:30]...)
	e.counts(b, "r", 50, 25, 5, 20)
	e.counts(a, "r", 50, 25, 5, 20)
	equal(t, "remaining via b", e.remaining(b, "r", "", 0), ts[30:])
	// A handle opened after all that sees it too.
	c := e.handle()
	e.counts(c, "r", 50, 25, 5, 20)
	st := e.status(c, "r")
	if len(st.Buckets) != 2 || !st.Buckets[0].Merged || st.Buckets[1].Merged {
		t.Fatalf("buckets seen by a new handle: %+v", st.Buckets)
	}
}

func testConcurrent(t *testing.T, open Opener) {
	e := newEnv(t, open, crawlkeeper.MonitorOptions{})
	handles := []crawlkeeper.Monitor{e.M, e.handle()}
	const writers, per = 6, 200
	e.queue(e.M, "r", names("w", 0, writers*per))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			m := handles[w%len(handles)]
			all := names("w", w*per, (w+1)*per)
			for i := 0; i < len(all); i += 50 {
				var marks []crawlkeeper.Mark
				for j, n := range all[i : i+50] {
					kind := crawlkeeper.MarkDone
					if j%10 == 0 {
						kind = crawlkeeper.MarkFailed
					}
					marks = append(marks, crawlkeeper.Mark{Round: "r", Target: n, Kind: kind, At: T0.Add(time.Duration(i) * time.Minute)})
				}
				if _, err := m.Mark(e.ctx, marks); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	// Readers, new names and merges run at the same time.
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			m := handles[r%len(handles)]
			for i := 0; i < 10; i++ {
				if _, err := m.Status(e.ctx, "r"); err != nil {
					errs <- err
					return
				}
				if _, err := m.Remaining(e.ctx, "r", "", 10); err != nil {
					errs <- err
					return
				}
				if _, err := m.Queue(e.ctx, crawlkeeper.QueueRequest{Round: "other", Targets: names(fmt.Sprintf("n%d-", r), i*5, i*5+5), At: T0}); err != nil {
					errs <- err
					return
				}
				if _, err := m.MergeBuckets(e.ctx, T0.Add(time.Duration(i)*time.Hour)); err != nil {
					errs <- err
					return
				}
			}
		}(r)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := int64(writers * per)
	for _, m := range handles {
		e.counts(m, "r", total, total-total/10, total/10, 0)
		e.counts(m, "other", 150, 0, 0, 150)
	}
	// The dictionary stayed dense: every name has a distinct id below the
	// dictionary size.
	seen := map[uint32]string{}
	all := append(names("w", 0, writers*per), names("n0-", 0, 50)...)
	for _, n := range all {
		ts, err := e.M.Target(e.ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[ts.ID]; ok {
			t.Fatalf("id %d given to %s and %s", ts.ID, prev, n)
		}
		seen[ts.ID] = n
		if ts.ID >= uint32(writers*per+150) {
			t.Fatalf("id %d of %s is past the dictionary", ts.ID, n)
		}
	}
}

// testClosedBuckets checks that bucket sets go soon once their round is
// closed (nothing remaining, or a later round exists), keeping their
// counts, while an open round keeps them for the whole retention.
func testClosedBuckets(t *testing.T, open Opener) {
	opts := crawlkeeper.MonitorOptions{BucketRetention: 24 * time.Hour, ClosedBucketRetention: time.Hour}
	e := newEnv(t, open, opts)
	ts, us := names("t", 0, 10), names("u", 0, 5)
	e.queue(e.M, "open", ts)
	e.queue(e.M, "closed", us)
	e.mark(e.M, "open", crawlkeeper.MarkDone, T0.Add(time.Minute), ts[:5]...)
	e.mark(e.M, "closed", crawlkeeper.MarkDone, T0.Add(time.Minute), us[:4]...)
	e.mark(e.M, "closed", crawlkeeper.MarkFailed, T0.Add(time.Minute), us[4])

	// Merged, and past the closed retention but not the open one: only
	// the closed round's set goes.
	res, err := e.M.MergeBuckets(e.ctx, T0.Add(90*time.Minute))
	if err != nil || res.Merged != 2 || res.Dropped != 1 {
		t.Fatalf("merge at 13:30: %+v %v", res, err)
	}
	for _, h := range []crawlkeeper.Monitor{e.M, e.handle()} {
		st := e.status(h, "closed")
		if len(st.Buckets) != 1 || !st.Buckets[0].Dropped || st.Buckets[0].Done != 4 || st.BucketBytes != 0 || st.Done != 4 {
			t.Fatalf("closed round after the merge: %+v", st)
		}
		st = e.status(h, "open")
		if len(st.Buckets) != 1 || st.Buckets[0].Dropped || !st.Buckets[0].Merged || st.Done != 5 {
			t.Fatalf("open round after the merge: %+v", st)
		}
	}
	ts0, err := e.M.Target(e.ctx, ts[0])
	if err != nil || ts0.Rounds[0].DoneAt == nil {
		t.Fatalf("target in the open round keeps its bucket: %+v %v", ts0, err)
	}
	// A round created later closes the open one: its set goes at the
	// next merge.
	if _, err := e.M.Queue(e.ctx, crawlkeeper.QueueRequest{Round: "next", Targets: ts, At: T0.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	res, err = e.M.MergeBuckets(e.ctx, T0.Add(2*time.Hour))
	if err != nil || res.Merged != 0 || res.Dropped != 1 {
		t.Fatalf("merge after a later round: %+v %v", res, err)
	}
	st := e.status(e.M, "open")
	if !st.Buckets[0].Dropped || st.Buckets[0].Done != 5 || st.Done != 5 || st.Remaining != 5 {
		t.Fatalf("open round once a later one exists: %+v", st)
	}
	if ts0, err = e.M.Target(e.ctx, ts[0]); err != nil || !ts0.Rounds[0].Done || ts0.Rounds[0].DoneAt != nil {
		t.Fatalf("target after the drop: %+v %v", ts0, err)
	}
	e.counts(e.handle(), "open", 10, 5, 0, 5)
}
