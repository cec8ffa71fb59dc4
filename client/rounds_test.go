package client_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/client"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/roaringmon"
	"github.com/crawlkeeper/crawlkeeper/sqlite"
)

// A crawler reports failed targets with _error; the client lists them
// with their reasons, page by page, and the targets still to do.
func TestFailedAndRemaining(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mon, err := roaringmon.Open(ctx, st, crawlkeeper.MonitorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	st.SetTxMarker(mon)
	cfg := &crawlkeeper.Config{}
	now := func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	api := &httpapi.Server{Store: st, Config: cfg, Now: now,
		Ingester: &crawlkeeper.Ingester{Store: st, Config: cfg, Now: now, Monitor: mon, MarksInStore: true},
		Extra:    []func(*httpapi.Server){httpapi.MonitorRoutes(mon)},
	}
	hs := httptest.NewServer(api.Handler())
	defer hs.Close()
	if _, err := mon.Queue(ctx, crawlkeeper.QueueRequest{Round: "7", Targets: []string{"a", "b", "c", "d", "e"}, At: now()}); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Options{URL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	sum, err := c.Send(ctx,
		map[string]any{"title": "A", "url": "https://a.test/", "_round": "7", "_target": "a"},
		map[string]any{"_round": "7", "_target": "b", "_error": "HTTP 503"},
		map[string]any{"_round": "7", "_target": "d", "_error": "robots.txt disallows /"},
		map[string]any{"title": "E, partly", "url": "https://e.test/", "_round": "7", "_target": "e", "_error": "page 2: timeout"},
	)
	if err != nil || sum.Inserted != 2 {
		t.Fatalf("send: %+v %v", sum, err)
	}
	var got []crawlkeeper.FailedTarget
	q := crawlkeeper.FailedQuery{Round: "7", Limit: 2}
	for pages := 0; ; pages++ {
		page, err := c.Failed(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if page.Count != 3 || pages > 2 {
			t.Fatalf("page %d: %+v", pages, page)
		}
		got = append(got, page.Targets...)
		if page.Next == "" {
			break
		}
		q.After = page.Next
	}
	want := []crawlkeeper.FailedTarget{{Target: "b", Reason: "HTTP 503"}, {Target: "d", Reason: "robots.txt disallows /"}, {Target: "e", Reason: "page 2: timeout"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("failed = %+v, want %+v", got, want)
	}
	names, next, err := c.Remaining(ctx, "7", "", 10)
	if err != nil || !reflect.DeepEqual(names, []string{"c"}) || next != "" {
		t.Fatalf("remaining = %v %q %v", names, next, err)
	}
	if _, err := c.Failed(ctx, crawlkeeper.FailedQuery{Round: "nosuch"}); client.ErrorCode(err) != crawlkeeper.ENOTFOUND {
		t.Fatalf("failed of an unknown round: %v", err)
	}
}
