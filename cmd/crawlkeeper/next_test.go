package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// crawlDays ingests n pages of source s once a day for days days from
// start; the even pages change at every other delivery, the odd ones
// never.
func crawlDays(c *cli, s string, n, days int, start time.Time) {
	c.t.Helper()
	for d := 0; d < days; d++ {
		var b strings.Builder
		for i := 0; i < n; i++ {
			rev := 0
			if i%2 == 0 {
				rev = d / 2
			}
			fmt.Fprintf(&b, `{"_source":%q,"url":"https://%s.test/%d","title":"Page %d","body":"v%d"}`+"\n", s, s, i, i, rev)
		}
		c.ok(b.String(), "ingest", "-", "--now", start.Add(time.Duration(d)*24*time.Hour).Format(time.RFC3339))
	}
}

func TestNext(t *testing.T) {
	c := newCLI(t)
	start := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
	crawlDays(c, "jobs", 40, 12, start)
	// Three days after the last delivery.
	now := start.Add(14 * 24 * time.Hour).Format(time.RFC3339)

	var plan crawlkeeper.NextPlan
	if err := json.Unmarshal([]byte(c.ok("", "next", "--source", "jobs", "--budget", "20/day", "--limit", "8", "--now", now, "--json")), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Source != "jobs" || plan.Records != 40 || plan.Budget != 20 || plan.BudgetFrom != "request" || len(plan.Items) == 0 || len(plan.Items) > 8 {
		t.Fatalf("next --json = %+v, want up to 8 items of 40 records at a budget of 20", plan)
	}
	for _, it := range plan.Items {
		var i int
		fmt.Sscanf(it.Name, "https://jobs.test/%d", &i)
		if it.ID == 0 || it.Name != it.URL || (it.Due && i%2 != 0) {
			t.Errorf("item %+v: want a record with its URL, never a page that never changed due", it)
		}
	}

	// The text form: a summary, a header and a line per page.
	out := c.ok("", "next", "--source", "jobs", "--budget", "480/week", "--limit", "3", "--fill", "--now", now)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], `source "jobs": 40 active records`) || !strings.Contains(lines[0], "budget 69/day (given)") ||
		!strings.Contains(out, "REASON") || !strings.Contains(out, "https://jobs.test/") {
		t.Fatalf("next printed:\n%s", out)
	}
	// Without a budget the pace of the last 24 hours is taken.
	out = c.ok("", "next", "--source", "jobs", "--now", start.Add(11*24*time.Hour+time.Hour).Format(time.RFC3339))
	if !strings.Contains(out, "budget 40/day (its pace over the last 24 hours)") {
		t.Fatalf("next without --budget printed:\n%s", out)
	}

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"next", "--budget", "10/day"}, "--source is required"},
		{[]string{"next", "--source", "jobs", "--budget", "lots"}, "1000/day"},
		{[]string{"next", "--source", "jobs", "--budget", "5", "--limit", "0"}, "limit must be 1"},
		{[]string{"next", "--source", "jobs", "--now", start.Add(40 * 24 * time.Hour).Format(time.RFC3339)}, "give a budget"},
		{[]string{"next", "--source", "jobs", "--budget", "5", "--round", "nope"}, "nope"},
	} {
		_, errs, code := c.run("", bad.args...)
		if code == 0 || !strings.Contains(errs, bad.want) {
			t.Errorf("crawlkeeper %s: exit %d, stderr %q; want a failure saying %q", strings.Join(bad.args, " "), code, errs, bad.want)
		}
	}
	// --source '' is the empty source, which has no records here: a
	// source without records is an error that names those with some,
	// for next and for round queue --next alike.
	for _, args := range [][]string{
		{"next", "--source", "", "--budget", "5", "--now", now},
		{"next", "--source", "job", "--budget", "5", "--now", now},
		{"round", "queue", "--round", "8", "--next", "5", "--source", "jobs.example", "--budget", "5", "--now", now},
	} {
		_, errs, code := c.run("", args...)
		if code == 0 || !strings.Contains(errs, "has no active records") || !strings.Contains(errs, `sources with records: "jobs"`) {
			t.Errorf("crawlkeeper %s: exit %d, stderr %q; want a failure naming the sources with records", strings.Join(args, " "), code, errs)
		}
	}
}

func TestRoundQueueNext(t *testing.T) {
	c := newCLI(t)
	start := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
	crawlDays(c, "jobs", 30, 10, start)
	now := start.Add(10 * 24 * time.Hour).Format(time.RFC3339)
	// The round holds a page never fetched before the advisor fills it.
	c.ok("https://jobs.test/new\n", "round", "queue", "--round", "7", "--now", now)
	var res struct {
		Queued int                  `json:"queued"`
		Total  int64                `json:"total"`
		Plan   crawlkeeper.NextPlan `json:"plan"`
	}
	if err := json.Unmarshal([]byte(c.ok("", "round", "queue", "--round", "7", "--next", "5", "--source", "jobs", "--budget", "15/day", "--fill", "--now", now, "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Items) != 5 || res.Plan.Items[0].Name != "https://jobs.test/new" || res.Plan.Targets != 1 || res.Total != 5 {
		t.Fatalf("round queue --next: %+v, want the target never fetched first and 5 queued in all", res)
	}
	var names []string
	for _, it := range res.Plan.Items {
		names = append(names, it.Name)
	}
	remaining := strings.Fields(c.ok("", "round", "remaining", "--round", "7", "--limit", "100"))
	slices.Sort(remaining)
	slices.Sort(names)
	if !slices.Equal(remaining, names) {
		t.Fatalf("round 7 remaining %v, want the advisor's pages %v", remaining, names)
	}
	// The text form, into a new round.
	out := c.ok("", "round", "queue", "--round", "8", "--next", "4", "--source", "jobs", "--budget", "15/day", "--fill", "--now", now)
	if !strings.HasPrefix(out, "queued 4 targets from the advisor in round 8") {
		t.Fatalf("round queue --next printed %q", out)
	}
	if _, errs, code := c.run("x\n", "round", "queue", "--round", "9", "--next", "4", "--source", "jobs", "names.txt"); code == 0 || !strings.Contains(errs, "give no FILE") {
		t.Fatalf("round queue --next with a file: exit %d, %q", code, errs)
	}
}
