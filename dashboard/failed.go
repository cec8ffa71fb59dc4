package dashboard

import (
	"bufio"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
)

// failedPageSize is how many failed targets the round page lists at once;
// requeueChunk how many names one Queue call of a re-queue carries.
const (
	failedPageSize = 100
	requeueChunk   = 10000
	// requeueShown is how many names the confirmation lists.
	requeueShown = 20
)

// failedList is the round page's list of failed targets.
type failedList struct {
	// Query is the filter: also failed in Also, or done in a later round.
	Query crawlkeeper.FailedQuery
	Page  *crawlkeeper.FailedPage
	// Paged is set past the first page.
	Paged     bool
	NextURL   template.URL
	FirstURL  template.URL
	Download  template.URL
	FilterURL template.URL
	// Into is the suggested round for a re-queue.
	Into string
}

// failedQuery reads the failed list's filter and page from a request's
// query or form: also, done_later, failed_after.
func failedQuery(round string, get func(string) string) (crawlkeeper.FailedQuery, error) {
	q := crawlkeeper.FailedQuery{Round: round, Also: strings.TrimSpace(get("also")), After: get("failed_after")}
	switch v := get("done_later"); v {
	case "", "0":
	case "1", "on":
		q.DoneLater = true
	default:
		return q, crawlkeeper.Errorf(crawlkeeper.EINVALID, "done_later=%q: use 1 or leave it out", v)
	}
	if q.Also != "" {
		if err := crawlkeeper.ValidateRound(q.Also); err != nil {
			return q, err
		}
	}
	return q, nil
}

func doneLaterParam(q crawlkeeper.FailedQuery) string {
	if q.DoneLater {
		return "1"
	}
	return ""
}

// failedSection reads one page of the round's failed targets.
func (d *dash) failedSection(r *http.Request, round, base string) (*failedList, error) {
	q, err := failedQuery(round, r.URL.Query().Get)
	if err != nil {
		return nil, err
	}
	q.Limit = failedPageSize
	page, err := d.o.Monitor.Failed(r.Context(), q)
	if err != nil {
		return nil, err
	}
	later := doneLaterParam(q)
	fl := &failedList{Query: q, Page: page, Paged: q.After != "", Into: round + "-retry",
		FirstURL: link(base, "also", q.Also, "done_later", later) + "#failed",
		Download: link(base+"/failed.txt", "also", q.Also, "done_later", later)}
	if page.Next != "" {
		fl.NextURL = link(base, "also", q.Also, "done_later", later, "failed_after", page.Next) + "#failed"
	}
	return fl, nil
}

// failedText serves every name of a round's failed list (with its
// filter) as text, one per line: the file `crawlkeeper round queue`
// reads.
func (d *dash) failedText(w http.ResponseWriter, r *http.Request, v *view) error {
	if d.o.Monitor == nil {
		return crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "no crawl monitor: %s", d.o.MonitorReason)
	}
	round := r.PathValue("round")
	if err := crawlkeeper.ValidateRound(round); err != nil {
		return err
	}
	q, err := failedQuery(round, r.URL.Query().Get)
	if err != nil {
		return err
	}
	q.After, q.Limit = "", requeueChunk
	// The first page is read before anything is written, so an unknown
	// round is an error page rather than an empty file.
	page, err := d.o.Monitor.Failed(r.Context(), q)
	if err != nil {
		return err
	}
	name := "round-" + fileSafe(round) + "-failed"
	if q.Also != "" {
		name += "-also-" + fileSafe(q.Also)
	}
	if q.DoneLater {
		name += "-done-later"
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.txt"`)
	w.Header().Set("Cache-Control", "no-store")
	bw := bufio.NewWriter(w)
	for {
		for _, t := range page.Targets {
			bw.WriteString(t.Target)
			bw.WriteByte('\n')
		}
		if page.Next == "" {
			break
		}
		q.After = page.Next
		if page, err = d.o.Monitor.Failed(r.Context(), q); err != nil {
			// Headers are sent: the truncated file ends with the reason.
			fmt.Fprintf(bw, "# incomplete: %s\n", crawlkeeper.ErrorMessage(err))
			break
		}
	}
	return bw.Flush()
}

// fileSafe keeps the characters of s that are safe in a file name.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// requeueData is the re-queue page: a confirmation, then the outcome.
type requeueData struct {
	Round string
	Query crawlkeeper.FailedQuery
	Into  string
	// Count is how many targets the filter lists; Names the first of
	// them, for the confirmation, and More the rest.
	Count int64
	Names []string
	More  int64
	// Result is set once queued.
	Result  *crawlkeeper.QueueResult
	Back    template.URL
	IntoURL template.URL
}

// requeue queues a round's failed targets (with the list's filter) into
// another round, as `crawlkeeper round failed --all | crawlkeeper round
// queue` does. Without confirm=yes it only shows what it would do.
func (d *dash) requeue(w http.ResponseWriter, r *http.Request, v *view) error {
	if d.o.Monitor == nil {
		return crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "no crawl monitor: %s", d.o.MonitorReason)
	}
	ctx := r.Context()
	round := r.PathValue("round")
	if err := crawlkeeper.ValidateRound(round); err != nil {
		return err
	}
	q, err := failedQuery(round, r.PostForm.Get)
	if err != nil {
		return err
	}
	into := strings.TrimSpace(r.PostForm.Get("into"))
	if err := crawlkeeper.ValidateRound(into); err != nil {
		return crawlkeeper.Errorf(crawlkeeper.EINVALID, "the round to queue into: %s", crawlkeeper.ErrorMessage(err))
	}
	if into == round {
		return crawlkeeper.Errorf(crawlkeeper.EINVALID, "queue the failures of round %q into another round: in their own round they stay failed until they are done", round)
	}
	base := "/rounds/" + pathEscape(round)
	data := requeueData{Round: round, Query: q, Into: into, IntoURL: template.URL("/rounds/" + pathEscape(into)),
		Back: link(base, "also", q.Also, "done_later", doneLaterParam(q)) + "#failed"}
	q.After, q.Limit = "", requeueChunk
	page, err := d.o.Monitor.Failed(ctx, q)
	if err != nil {
		return err
	}
	data.Count = page.Count
	if r.PostForm.Get("confirm") != "yes" {
		for _, t := range page.Targets[:min(len(page.Targets), requeueShown)] {
			data.Names = append(data.Names, t.Target)
		}
		data.More = data.Count - int64(len(data.Names))
		v.Title, v.Nav, v.Data = "Re-queue the failures of round "+round, "rounds", data
		d.render(w, "requeue", v)
		return nil
	}
	if page.Count == 0 {
		return crawlkeeper.Errorf(crawlkeeper.EINVALID, "round %q has no failed target to queue with this filter", round)
	}
	res := &crawlkeeper.QueueResult{Round: into}
	for {
		names := make([]string, len(page.Targets))
		for i, t := range page.Targets {
			names[i] = t.Target
		}
		qr, err := d.o.Monitor.Queue(ctx, crawlkeeper.QueueRequest{Round: into, Targets: names, At: v.Now})
		if err != nil {
			if res.Queued > 0 {
				return crawlkeeper.Errorf(crawlkeeper.ErrorCode(err), "queued %d targets into round %q, then: %s (queueing again is harmless)", res.Queued, into, crawlkeeper.ErrorMessage(err))
			}
			return err
		}
		res.Queued += qr.Queued
		res.Total = qr.Total
		if page.Next == "" {
			break
		}
		q.After = page.Next
		if page, err = d.o.Monitor.Failed(ctx, q); err != nil {
			return err
		}
	}
	data.Result = res
	v.Title, v.Nav, v.Data = "Re-queued the failures of round "+round, "rounds", data
	v.Notice = fmt.Sprintf("Queued %d failed targets of round %s into round %s.", res.Queued, round, into)
	d.render(w, "requeue", v)
	return nil
}
