package crawlkeeper

import (
	"context"
	"fmt"
	"testing"
)

// listed is a record lister over a fixed page of records.
type listed []*Record

func (l listed) List(_ context.Context, q RecordQuery) (*RecordPage, error) {
	var out []*Record
	for _, r := range l {
		if q.Source == "" || r.Source == q.Source {
			out = append(out, r)
		}
	}
	return &RecordPage{Records: out}, nil
}

func TestSampleDateErrors(t *testing.T) {
	prep := &Preparer{Config: &Config{}}
	var recs listed
	for i, item := range []string{
		`{"_source":"jobs","title":"a","url":"https://j.test/1","deadline":"Rolling"}`,
		`{"_source":"jobs","title":"b","url":"https://j.test/2","deadline":"Rolling"}`,
		`{"_source":"jobs","title":"c","url":"https://j.test/3","expires":"ASAP","deadline":"2025-10-01"}`,
		`{"_source":"news","title":"d","url":"https://n.test/1","event_date":"2025-10-01"}`,
	} {
		p, err := prep.Prepare([]byte(item), i+1, Meta{}, T0)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, NewRecord(p, T0))
	}
	st := &Stats{Sources: map[string]*SourceStats{"jobs": {ActiveDateErrors: 3}, "news": {}}}
	if err := SampleDateErrors(context.Background(), recs, &Config{}, st, 5); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(st.Sources["jobs"].DateErrorSamples); got != `[deadline: cannot read "Rolling" expires: cannot read "ASAP"]` {
		t.Fatalf("jobs samples = %s", got)
	}
	if st.Sources["news"].DateErrorSamples != nil {
		t.Fatalf("news has no date errors, got samples %v", st.Sources["news"].DateErrorSamples)
	}
}
