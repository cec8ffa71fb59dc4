package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// TestPipelinePassNote checks that the pipeline page says what a pass's
// numbers are: before any pass, that none began; after a pass that
// covered the records of its start, that it processed every record up to
// the highest id of then, and that later records wait for real time and
// the next pass, never an id position next to a count of records.
func TestPipelinePassNote(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.seed()
	_, body, _ := e.get("/pipeline", "")
	mustContain(t, "pipeline before a pass", body, `id="pass-note">No pass has begun yet.`)

	// A pass over an empty store says so rather than "up to id 0".
	empty := newEnv(t, envOptions{})
	if _, err := empty.eng.RunPass(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, emptyBody, _ := empty.get("/pipeline", "")
	mustContain(t, "pipeline after a pass over nothing", emptyBody, "the store was empty when it began. Records added since are processed in real time and by the next pass.")

	if _, err := e.eng.RunPass(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.advance(time.Hour)
	e.ingest("source=jobs&target=acme", `{"title":"Late arrival","url":"https://jobs.test/late"}`)
	var scan pipeline.Status
	e.call("GET", "/api/v1/scan", "read", "", &scan)
	if scan.Pass != 1 || scan.PassFinishedAt == nil || scan.PassDone != scan.PassEnd {
		t.Fatalf("scan status after one pass and a later record: %+v", scan)
	}
	_, body, _ = e.get("/pipeline", "")
	if got := shown(t, body, "pass_end"); got != scan.PassEnd {
		t.Errorf("pass end shown %d, API %d", got, scan.PassEnd)
	}
	mustContain(t, "pipeline after a pass", body, "Finished 1h ago: every record up to id", "the highest when it began", "Records added since are processed in real time and by the next pass.")
	if strings.Contains(body, "position") {
		t.Errorf("the page still shows a position:\n%s", body)
	}
}
