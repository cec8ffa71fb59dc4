package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/crawlkeeper/crawlkeeper"
)

// Remaining lists one page of a round's targets that are neither done nor
// failed (GET /api/v1/rounds/{round}/remaining), in the order the
// monitor first saw them; pass next as after for the following page
// (empty on the last). limit is 1 to 10000 (0: the server's 100).
// Options.Token needs the read scope; ENOTFOUND for an unknown round.
func (c *Client) Remaining(ctx context.Context, round, after string, limit int) (names []string, next string, err error) {
	v := url.Values{}
	if after != "" {
		v.Set("after", after)
	}
	if limit > 0 {
		v.Set("limit", strconv.Itoa(limit))
	}
	var answer struct {
		Targets []string `json:"targets"`
		Next    string   `json:"next"`
	}
	if err := c.getJSON(ctx, "/api/v1/rounds/"+url.PathEscape(round)+"/remaining", "remaining", v, &answer); err != nil {
		return nil, "", err
	}
	return answer.Targets, answer.Next, nil
}

// Failed lists one page of a round's failed targets with their latest
// reasons (GET /api/v1/rounds/{round}/failed): all of them, those that
// failed in q.Also too, or with q.DoneLater those a later round did; pass
// the page's Next as q.After for the following one. q.Limit is 1 to
// 10000 (0: the server's 100). Options.Token needs the read scope;
// ENOTFOUND for an unknown round. A crawler reports a failure by sending
// an item with _target, _round and _error.
func (c *Client) Failed(ctx context.Context, q crawlkeeper.FailedQuery) (*crawlkeeper.FailedPage, error) {
	v := url.Values{}
	if q.Also != "" {
		v.Set("also", q.Also)
	}
	if q.DoneLater {
		v.Set("done_later", "1")
	}
	if q.After != "" {
		v.Set("after", q.After)
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var page crawlkeeper.FailedPage
	if err := c.getJSON(ctx, "/api/v1/rounds/"+url.PathEscape(q.Round)+"/failed", "failed targets", v, &page); err != nil {
		return nil, err
	}
	return &page, nil
}
