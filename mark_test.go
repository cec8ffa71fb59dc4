package crawlkeeper_test

import (
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func TestCleanReason(t *testing.T) {
	long := strings.Repeat("ab", crawlkeeper.MaxReasonBytes)
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"HTTP 503", "HTTP 503"},
		{"  timeout \n after\t30s  ", "timeout after 30s"},
		{"bell\x07 and \x7fdel", "bell and del"},
		{"bad \xff byte", "bad ? byte"},
		{long, long[:crawlkeeper.MaxReasonBytes]},
		{strings.Repeat("页", 100), strings.Repeat("页", crawlkeeper.MaxReasonBytes/3)},
		{strings.Repeat("x", crawlkeeper.MaxReasonBytes-1) + " y", strings.Repeat("x", crawlkeeper.MaxReasonBytes-1)},
	} {
		if got := crawlkeeper.CleanReason(tc.in); got != tc.want {
			t.Errorf("CleanReason(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func prepared(t *testing.T, lines ...string) []*crawlkeeper.Prepared {
	t.Helper()
	var out []*crawlkeeper.Prepared
	for i, l := range lines {
		p, err := (&crawlkeeper.Preparer{}).Prepare([]byte(l), i+1, crawlkeeper.Meta{}, time.Unix(1e9, 0))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		out = append(out, p)
	}
	return out
}

// Items with _error mark their target failed with the reason; an item
// with nothing but metadata and _error is a report, not a record.
func TestMarksFromItemsWithErrors(t *testing.T) {
	at := time.Unix(1e9, 0)
	items := prepared(t,
		`{"title":"a","_target":"acme","_round":7}`,
		`{"title":"b","_target":"globex","_round":7,"_error":"HTTP 503"}`,
		`{"_target":"initech","_round":7,"_error":"timeout\nafter 30s"}`,
		`{"_target":"initech","_round":7,"_error":"DNS"}`,
		`{"title":"c","_target":"acme","_round":7}`,
	)
	if items[1].Report || !items[2].Report || items[2].Error != "timeout after 30s" {
		t.Fatalf("prepared = %+v %+v", items[1], items[2])
	}
	marks := crawlkeeper.MarksFromItems(items, at)
	want := []crawlkeeper.Mark{
		{Round: "7", Target: "acme", Kind: crawlkeeper.MarkDone, At: at},
		{Round: "7", Target: "globex", Kind: crawlkeeper.MarkFailed, At: at, Reason: "HTTP 503"},
		{Round: "7", Target: "initech", Kind: crawlkeeper.MarkFailed, At: at, Reason: "DNS"},
	}
	if len(marks) != len(want) {
		t.Fatalf("marks = %+v", marks)
	}
	for i := range want {
		if marks[i] != want[i] {
			t.Errorf("mark %d = %+v, want %+v", i, marks[i], want[i])
		}
	}
	for _, bad := range []struct{ line, msg string }{
		{`{"_error":"x"}`, "_target and _round"},
		{`{"_target":"a","_round":1,"_error":5}`, "must be a string"},
		{`{"_target":"a\tb","_round":1,"_error":"x"}`, "control characters"},
	} {
		_, err := (&crawlkeeper.Preparer{}).Prepare([]byte(bad.line), 1, crawlkeeper.Meta{}, at)
		if crawlkeeper.ErrorCode(err) != crawlkeeper.EINVALID || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%s: %v, want an error saying %q", bad.line, err, bad.msg)
		}
	}
	// An empty _error still says the fetch failed.
	if p := prepared(t, `{"_target":"a","_round":1,"_error":"  "}`)[0]; p.Error != "error" || !p.Report {
		t.Errorf("empty _error = %+v", p)
	}
}
