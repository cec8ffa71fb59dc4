package httpapi_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

func TestMonitorRoutes(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mon, err := roaringmon.Open(context.Background(), st, crawlkeeper.MonitorOptions{}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	st.SetTxMarker(mon)
	now := t0
	clock := func() time.Time { return now }
	cfg := &crawlkeeper.Config{}
	api := &httpapi.Server{
		Store:    st,
		Config:   cfg,
		Ingester: &crawlkeeper.Ingester{Store: st, Config: cfg, Now: clock, Monitor: mon, MarksInStore: true},
		Archiver: &crawlkeeper.Archiver{Store: st, Config: cfg, Now: clock},
		Now:      clock,
		Extra:    []func(*httpapi.Server){httpapi.MonitorRoutes(mon)},
	}
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	f := &fixture{t: t, srv: srv, api: api, now: t0}

	var q crawlkeeper.QueueResult
	if code := f.do("POST", "/api/v1/rounds/7/queue?bucket=30m", "", "acme\nglobex\ninitech\n", &q); code != 200 || q.Queued != 3 || q.NewTargets != 3 {
		t.Fatalf("queue: %d %+v", code, q)
	}
	// A crawler item with _target and _round marks done in the same commit.
	f.do("POST", "/api/v1/items?round=7&target=acme", "", `{"title":"a","url":"https://m.test/a"}`, nil)
	var marked map[string]any
	if code := f.do("POST", "/api/v1/rounds/7/fail", "", `["globex"]`, &marked); code != 200 || marked["marked"] != float64(1) {
		t.Fatalf("fail: %d %v", code, marked)
	}
	var status crawlkeeper.RoundStatus
	if code := f.do("GET", "/api/v1/rounds/7", "", "", &status); code != 200 || status.Queued != 3 || status.Done != 1 || status.Failed != 1 || status.Remaining != 1 {
		t.Fatalf("status: %d %+v", code, status)
	}
	var rem struct {
		Targets []string `json:"targets"`
		Next    string   `json:"next"`
	}
	if f.do("GET", "/api/v1/rounds/7/remaining?limit=10", "", "", &rem); len(rem.Targets) != 1 || rem.Targets[0] != "initech" || rem.Next != "" {
		t.Fatalf("remaining: %+v", rem)
	}
	var rounds struct{ Rounds []crawlkeeper.RoundSummary }
	if f.do("GET", "/api/v1/rounds", "", "", &rounds); len(rounds.Rounds) != 1 || rounds.Rounds[0].Round != "7" {
		t.Fatalf("rounds: %+v", rounds)
	}
	f.do("POST", "/api/v1/rounds/8/done", "", "initech", nil)
	var diff crawlkeeper.RoundDiff
	if f.do("GET", "/api/v1/rounds/7/diff/8", "", "", &diff); diff.OnlyRound.Count != 1 || diff.OnlyVs.Count != 1 || diff.OnlyVs.Names[0] != "initech" {
		t.Fatalf("diff: %+v", diff)
	}
	var ts crawlkeeper.TargetStatus
	if f.do("GET", "/api/v1/targets/initech", "", "", &ts); len(ts.Rounds) != 2 {
		t.Fatalf("target: %+v", ts)
	}
	var e httpapi.ErrorBody
	if code := f.do("POST", "/api/v1/rounds/7/queue", "", "", &e); code != 400 {
		t.Fatalf("empty queue body: %d %+v", code, e)
	}
	if code := f.do("GET", "/api/v1/rounds/7/remaining?limit=0", "", "", &e); code != 400 {
		t.Fatalf("bad limit: %d", code)
	}
	// Failed targets with reasons: a reason per target (JSON objects), or
	// one for every name (reason=); a crawler's _error.
	if code := f.do("POST", "/api/v1/rounds/8/fail?reason=HTTP%20503", "", `[{"target":"acme","reason":"timeout\nafter 30s"},"globex","initech"]`, &marked); code != 200 || marked["marked"] != float64(3) {
		t.Fatalf("fail with reasons: %d %v", code, marked)
	}
	var sum crawlkeeper.IngestSummary
	if code := f.do("POST", "/api/v1/items?round=8", "", `{"_target":"hooli","_error":"DNS: no such host"}`, &sum); code != 200 || sum.Reports != 1 || sum.Inserted != 0 {
		t.Fatalf("failure report: %d %+v", code, sum)
	}
	f.do("POST", "/api/v1/rounds/7/fail", "", `["acme"]`, nil)
	var page crawlkeeper.FailedPage
	if code := f.do("GET", "/api/v1/rounds/8/failed?limit=2", "", "", &page); code != 200 || page.Count != 3 || page.Next != "globex" ||
		len(page.Targets) != 2 || page.Targets[0] != (crawlkeeper.FailedTarget{Target: "acme", Reason: "timeout after 30s"}) || page.Targets[1].Reason != "HTTP 503" {
		t.Fatalf("failed page 1: %d %+v", code, page)
	}
	// Decode each answer into a new page: decoding into the old one
	// would keep fields the new answer leaves out.
	page = crawlkeeper.FailedPage{}
	if f.do("GET", "/api/v1/rounds/8/failed?limit=2&after=globex", "", "", &page); len(page.Targets) != 1 || page.Targets[0] != (crawlkeeper.FailedTarget{Target: "hooli", Reason: "DNS: no such host"}) || page.Next != "" {
		t.Fatalf("failed page 2: %+v", page)
	}
	// Failed in 7 and in 8: globex (acme was done in 7); failed in 7 and
	// done in a later round: none.
	page = crawlkeeper.FailedPage{}
	if f.do("GET", "/api/v1/rounds/7/failed?also=8", "", "", &page); page.Count != 1 || page.Targets[0] != (crawlkeeper.FailedTarget{Target: "globex", AlsoReason: "HTTP 503"}) {
		t.Fatalf("failed in 7 and 8: %+v", page)
	}
	page = crawlkeeper.FailedPage{}
	if f.do("GET", "/api/v1/rounds/7/failed?done_later=1", "", "", &page); page.Count != 0 || !page.DoneLater {
		t.Fatalf("failed in 7, done later: %+v", page)
	}
	for _, bad := range []string{"/api/v1/rounds/8/failed?done_later=maybe", "/api/v1/rounds/8/failed?limit=0"} {
		if code := f.do("GET", bad, "", "", &e); code != 400 {
			t.Fatalf("%s: %d", bad, code)
		}
	}
	if code := f.do("GET", "/api/v1/rounds/nosuch/failed", "", "", &e); code != 404 {
		t.Fatalf("failed of an unknown round: %d", code)
	}
	if code := f.do("POST", "/api/v1/rounds/8/done?reason=x", "", "acme", &e); code != 400 {
		t.Fatalf("done with a reason: %d", code)
	}
	if code := f.do("POST", "/api/v1/rounds/8/done", "", `[{"target":"acme"}]`, &e); code != 400 {
		t.Fatalf("done with objects: %d", code)
	}

	var fields struct{ Fields []crawlkeeper.FieldReport }
	if code := f.do("GET", "/api/v1/fields", "", "", &fields); code != 200 {
		t.Fatalf("fields: %d", code)
	}
}
