package dashboard

import (
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/httpapi"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
)

// sourceRow is one source's line in the overview.
type sourceRow struct {
	Name string
	*crawlkeeper.SourceStats
	// Alerts names the rules firing on the source.
	Alerts []string
}

type overviewData struct {
	Stats   *crawlkeeper.Stats
	Sources []sourceRow
	// Metrics is set when the process's counters are available.
	Metrics   bool
	Accepted  float64
	Unchanged float64
	Rejected  float64
	Rate      float64
	RateOver  time.Duration
	Pipeline  *pipeline.Status
	// PipelineNote says why Pipeline is nil.
	PipelineNote string
	// Small charts next to the numbers: items ingested per hour (nil
	// without an ingest history), records archived per day, freshness.
	IngestChart    *Chart
	MovesChart     Chart
	FreshnessChart *Chart
}

// Overview charts' spans.
const (
	overviewHours = 48
	overviewDays  = 8
)

func (d *dash) overview(w http.ResponseWriter, r *http.Request, v *view) error {
	ctx := r.Context()
	st, err := d.o.Store.Stats(ctx)
	if err != nil {
		return err
	}
	data := overviewData{Stats: st}
	firing := badges(v.Alerts)
	for name, s := range st.Sources {
		data.Sources = append(data.Sources, sourceRow{name, s, firing.Sources[name]})
	}
	sort.Slice(data.Sources, func(i, j int) bool { return data.Sources[i].Name < data.Sources[j].Name })
	if m := d.o.Metrics; m != nil {
		data.Metrics = true
		data.Accepted = ingestTotal(m)
		data.Unchanged = counterValue(m, "unchanged")
		data.Rejected = readCounter(m.ItemsRejected)
		data.Rate, data.RateOver = d.rate.observe(v.Now, data.Accepted)
	}
	data.Pipeline, data.PipelineNote = d.pipelineStatus(r)
	if h := d.o.IngestHistory; h != nil {
		c := h.Chart(v.Now, overviewHours)
		data.IngestChart = &c
	}
	runs, err := d.o.Store.Journal(ctx, crawlkeeper.JournalArchiveRun, archiveRunsShown)
	if err != nil {
		return err
	}
	data.MovesChart = MovesPerDayChart(runs, v.Now, overviewDays)
	if data.Pipeline != nil {
		c := FreshnessChart(data.Pipeline)
		// The card is narrow: short labels, the legend is in its title.
		c.Labels = []string{"fresh", "due", "never"}
		data.FreshnessChart = &c
	}
	v.Title, v.Nav, v.Data = "Overview", "overview", data
	d.render(w, "overview", v)
	return nil
}

// pipelineStatus reads the pipeline's status, or says why it cannot.
func (d *dash) pipelineStatus(r *http.Request) (*pipeline.Status, string) {
	if d.o.PipelineStatus == nil {
		return nil, "the reprocessing pipeline is not running in this process"
	}
	st, err := d.o.PipelineStatus(r.Context())
	if err != nil {
		return nil, "pipeline status: " + crawlkeeper.ErrorMessage(err)
	}
	return st, ""
}

// monitorMissing is the page shown instead of a monitor page when the
// server has no monitor.
func (d *dash) monitorMissing(w http.ResponseWriter, v *view, name, title string) error {
	reason := d.o.MonitorReason
	if reason == "" {
		reason = "no crawl monitor is configured"
	}
	v.Title, v.Nav, v.Data = title, name, struct{ Unavailable string }{reason}
	d.render(w, name, v)
	return nil
}

type roundRow struct {
	crawlkeeper.RoundSummary
	URL template.URL
	// Alerts names the rules firing on the round.
	Alerts []string
}

type roundsData struct {
	Unavailable string
	Rounds      []roundRow
}

func (d *dash) rounds(w http.ResponseWriter, r *http.Request, v *view) error {
	if d.o.Monitor == nil {
		return d.monitorMissing(w, v, "rounds", "Rounds")
	}
	rs, err := d.o.Monitor.Rounds(r.Context())
	if err != nil {
		return err
	}
	data := roundsData{}
	firing := badges(v.Alerts)
	// Newest first: the running round is the one people look for.
	for i := len(rs) - 1; i >= 0; i-- {
		data.Rounds = append(data.Rounds, roundRow{rs[i], template.URL("/rounds/" + pathEscape(rs[i].Round)), firing.Rounds[rs[i].Round]})
	}
	v.Title, v.Nav, v.Data = "Rounds", "rounds", data
	d.render(w, "rounds", v)
	return nil
}

type roundData struct {
	Unavailable string
	Status      *crawlkeeper.RoundStatus
	Chart       Chart
	// Remaining targets: Q filters them (contains, case-insensitive);
	// Examined counts the targets a search page looked at.
	Q         string
	Targets   []string
	NextURL   template.URL
	FirstURL  template.URL
	Paged     bool
	Examined  int
	Searching bool
	// Failed targets, with their filter and paging.
	Failed *failedList
	// Diff with another round.
	Others   []string
	Vs       string
	Diff     *crawlkeeper.RoundDiff
	Side     string
	DiffNext template.URL
	DiffURLs map[string]template.URL
	// Alerts names the rules firing on the round.
	Alerts []string
}

func (d *dash) round(w http.ResponseWriter, r *http.Request, v *view) error {
	if d.o.Monitor == nil {
		return d.monitorMissing(w, v, "round", "Round")
	}
	ctx := r.Context()
	name := r.PathValue("round")
	if err := crawlkeeper.ValidateRound(name); err != nil {
		return err
	}
	st, err := d.o.Monitor.Status(ctx, name)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	base := "/rounds/" + pathEscape(name)
	data := roundData{Status: st, Chart: ThroughputChart(st.Buckets), Q: strings.TrimSpace(q.Get("q")), Vs: q.Get("vs"), Side: q.Get("side"),
		Alerts: badges(v.Alerts).Rounds[name]}
	after := q.Get("after")
	data.Paged = after != ""
	data.FirstURL = link(base, "q", data.Q, "vs", data.Vs)
	if data.Q == "" {
		names, err := d.o.Monitor.Remaining(ctx, name, after, targetsPageSize+1)
		if err != nil {
			return err
		}
		if len(names) > targetsPageSize {
			names = names[:targetsPageSize]
			data.NextURL = link(base, "after", names[len(names)-1], "vs", data.Vs)
		}
		data.Targets = names
	} else {
		data.Searching = true
		targets, next, examined, err := searchRemaining(ctx, d.o.Monitor, name, data.Q, after)
		if err != nil {
			return err
		}
		data.Targets, data.Examined = targets, examined
		if next != "" {
			data.NextURL = link(base, "q", data.Q, "after", next, "vs", data.Vs)
		}
	}
	if data.Failed, err = d.failedSection(r, name, base); err != nil {
		return err
	}
	rounds, err := d.o.Monitor.Rounds(ctx)
	if err != nil {
		return err
	}
	for i := len(rounds) - 1; i >= 0; i-- {
		if rounds[i].Round != name {
			data.Others = append(data.Others, rounds[i].Round)
		}
	}
	if data.Vs != "" {
		if err := crawlkeeper.ValidateRound(data.Vs); err != nil {
			return err
		}
		if data.Side != "vs" {
			data.Side = "round"
		}
		diffAfter := q.Get("diff_after")
		diff, err := d.o.Monitor.Diff(ctx, name, data.Vs, diffAfter, diffPageSize)
		if err != nil {
			return err
		}
		data.Diff = diff
		side := diff.OnlyRound
		if data.Side == "vs" {
			side = diff.OnlyVs
		}
		if len(side.Names) == diffPageSize {
			data.DiffNext = link(base, "vs", data.Vs, "side", data.Side, "diff_after", side.Names[len(side.Names)-1])
		}
		data.DiffURLs = map[string]template.URL{
			"round": link(base, "vs", data.Vs, "side", "round"),
			"vs":    link(base, "vs", data.Vs, "side", "vs"),
		}
	}
	v.Title, v.Nav, v.Data = "Round "+name, "rounds", data
	d.render(w, "round", v)
	return nil
}

// searchRemaining pages through a round's remaining targets, keeping the
// names that contain q (case-insensitive), until it has a page of
// matches or has examined remainingSearchBudget names. next continues the
// search after the last name examined (empty at the end). The monitor
// keeps targets as bitmaps of dictionary ids, with no index on names, so
// a bounded walk is what keeps a search on millions of targets from
// holding a request for long.
func searchRemaining(ctx context.Context, mon crawlkeeper.Monitor, round, q, after string) (matches []string, next string, examined int, err error) {
	needle := strings.ToLower(q)
	const chunk = 1000
	for examined < remainingSearchBudget {
		names, err := mon.Remaining(ctx, round, after, chunk)
		if err != nil {
			return nil, "", examined, err
		}
		for _, n := range names {
			examined++
			after = n
			if strings.Contains(strings.ToLower(n), needle) {
				matches = append(matches, n)
				if len(matches) == targetsPageSize {
					return matches, n, examined, nil
				}
			}
		}
		if len(names) < chunk {
			return matches, "", examined, nil
		}
	}
	return matches, after, examined, nil
}

type fieldsData struct {
	Unavailable string
	Source      string
	Fields      []crawlkeeper.FieldReport
	Chart       Chart
}

func (d *dash) fields(w http.ResponseWriter, r *http.Request, v *view) error {
	if d.o.Monitor == nil {
		return d.monitorMissing(w, v, "fields", "Rare fields")
	}
	ctx := r.Context()
	src := strings.TrimSpace(r.URL.Query().Get("source"))
	fs, err := d.o.Monitor.Fields(ctx, src)
	if err != nil {
		return err
	}
	rounds, err := d.o.Monitor.Rounds(ctx)
	if err != nil {
		return err
	}
	order := make([]string, len(rounds))
	for i, rd := range rounds {
		order[i] = rd.Round
	}
	v.Title, v.Nav = "Rare fields", "fields"
	v.Data = fieldsData{Source: src, Fields: fs, Chart: FillRateChart(fs, order)}
	d.render(w, "fields", v)
	return nil
}

// archiveRun is one journal entry of an archive pass.
type archiveRun struct {
	crawlkeeper.ArchiveReport
}

type sourceLifetime struct {
	Source          string
	MedianLifetimeS *float64
	ChangesPerWeek  *float64
	Archived        int64
	ByReason        map[crawlkeeper.ArchiveReason]int64
}

type archiveData struct {
	Runs          []archiveRun
	MovesChart    Chart
	LifetimeChart Chart
	// Sampled counts the lifetimes in the histogram; FromIndex says they
	// came from the store's index rather than a page of the listing.
	Sampled      int
	FromIndex    bool
	Sources      []sourceLifetime
	ChangesChart Chart
	Top          []SourceChange
	Reasons      []crawlkeeper.ArchiveReason
	// Report is the outcome of an action: a dry-run preview or a forced
	// pass.
	Report       *crawlkeeper.ArchiveReport
	ReportSource string
	CanArchive   bool
}

func (d *dash) archive(w http.ResponseWriter, r *http.Request, v *view) error {
	return d.renderArchive(w, r, v, nil, "")
}

func (d *dash) renderArchive(w http.ResponseWriter, r *http.Request, v *view, rep *crawlkeeper.ArchiveReport, source string) error {
	ctx := r.Context()
	data := archiveData{Report: rep, ReportSource: source, Reasons: crawlkeeper.ArchiveReasons, CanArchive: d.o.Archiver != nil}
	entries, err := d.o.Store.Journal(ctx, crawlkeeper.JournalArchiveRun, archiveRunsShown)
	if err != nil {
		return err
	}
	var reports []crawlkeeper.ArchiveReport
	for _, e := range entries {
		var rep crawlkeeper.ArchiveReport
		if err := json.Unmarshal(e.Body, &rep); err != nil {
			continue // a journal entry from another version: skip it
		}
		if rep.StartedAt.IsZero() {
			rep.StartedAt = e.At
		}
		reports = append(reports, rep)
		data.Runs = append(data.Runs, archiveRun{rep})
	}
	data.MovesChart = MovesChart(reports)

	lifetimes, fromIndex, err := d.lifetimes(r)
	if err != nil {
		return err
	}
	data.LifetimeChart, data.Sampled, data.FromIndex = LifetimeChart(lifetimes), len(lifetimes), fromIndex

	st, err := d.o.Store.Stats(ctx)
	if err != nil {
		return err
	}
	extra, err := d.o.Store.ArchiveStats(ctx, v.Now)
	if err != nil {
		return err
	}
	st.Merge(extra)
	for name, s := range st.Sources {
		data.Sources = append(data.Sources, sourceLifetime{Source: name, MedianLifetimeS: s.MedianLifetimeS,
			ChangesPerWeek: s.ChangesPerWeek, Archived: s.Archived, ByReason: s.ArchivedByReason})
	}
	sort.Slice(data.Sources, func(i, j int) bool { return data.Sources[i].Source < data.Sources[j].Source })
	data.Top = TopChanges(st.Sources, 15)
	data.ChangesChart = ChangesChart(data.Top)
	v.Title, v.Nav, v.Data = "Archive", "archive", data
	d.render(w, "archive", v)
	return nil
}

// lifetimes reads recent archived lifetimes: from the store's index when
// it can (crawlkeeper.LifetimeReader), else from one page of the archive
// listing, newest first.
func (d *dash) lifetimes(r *http.Request) ([]crawlkeeper.Lifetime, bool, error) {
	if lr, ok := d.o.Store.(crawlkeeper.LifetimeReader); ok {
		ls, err := lr.RecentLifetimes(r.Context(), lifetimesSampled)
		return ls, true, err
	}
	page, err := d.o.Store.List(r.Context(), crawlkeeper.RecordQuery{Archived: true, Order: crawlkeeper.OrderNewest, Limit: lifetimesFallback})
	if err != nil {
		return nil, false, err
	}
	out := make([]crawlkeeper.Lifetime, len(page.Records))
	for i, rec := range page.Records {
		out[i] = crawlkeeper.Lifetime{Source: rec.Source, Lifetime: rec.LastUpdatedAt.Sub(rec.CrawledAt)}
	}
	return out, false, nil
}

func (d *dash) archiveRun(w http.ResponseWriter, r *http.Request, v *view, opts crawlkeeper.ArchiveOptions) error {
	if d.o.Archiver == nil {
		return crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "no archiver in this process")
	}
	opts.Source = strings.TrimSpace(r.PostFormValue("source"))
	run := d.o.Archiver.Run
	if d.o.RunArchive != nil {
		run = d.o.RunArchive
	}
	rep, err := run(r.Context(), opts)
	if err != nil {
		return err
	}
	if d.o.Metrics != nil {
		d.o.Metrics.ObserveArchive(rep, d.o.Now())
	}
	if opts.DryRun {
		v.Notice = "Dry run: nothing was moved."
	} else {
		v.Notice = "Archive pass done: " + strconv.Itoa(rep.Archived) + " moved."
	}
	return d.renderArchive(w, r, v, rep, opts.Source)
}

func (d *dash) archivePreview(w http.ResponseWriter, r *http.Request, v *view) error {
	return d.archiveRun(w, r, v, crawlkeeper.ArchiveOptions{DryRun: true})
}

func (d *dash) archiveForce(w http.ResponseWriter, r *http.Request, v *view) error {
	return d.archiveRun(w, r, v, crawlkeeper.ArchiveOptions{Force: true})
}

type pipelineData struct {
	Status      *pipeline.Status
	Note        string
	Chart       Chart
	DeadLetters []crawlkeeper.DeadLetter
	Retry       *RetryResult
	CanRetry    bool
	// PassDone of PassTotal ids of the current pass are processed.
	PassDone, PassTotal int64
	// PassPct is that share in percent.
	PassPct int64
}

func (d *dash) pipeline(w http.ResponseWriter, r *http.Request, v *view) error {
	return d.renderPipeline(w, r, v, nil)
}

func (d *dash) renderPipeline(w http.ResponseWriter, r *http.Request, v *view, retry *RetryResult) error {
	data := pipelineData{Retry: retry, CanRetry: d.o.RetryDeadLetters != nil}
	data.Status, data.Note = d.pipelineStatus(r)
	if st := data.Status; st != nil {
		data.Chart = FreshnessChart(st)
		data.PassDone, data.PassTotal = min(max(st.PassDone, st.Position), st.PassEnd), st.PassEnd
		data.PassPct = 100
		if data.PassTotal > 0 {
			data.PassPct = data.PassDone * 100 / data.PassTotal
		}
	}
	dls, err := d.o.Store.DeadLetters(r.Context(), deadLettersShown)
	if err != nil {
		return err
	}
	data.DeadLetters = dls
	v.Title, v.Nav, v.Data = "Pipeline", "pipeline", data
	d.render(w, "pipeline", v)
	return nil
}

func (d *dash) retry(w http.ResponseWriter, r *http.Request, v *view) error {
	if d.o.RetryDeadLetters == nil {
		return crawlkeeper.Errorf(crawlkeeper.ENOTSUPPORTED, "the reprocessing pipeline is not running in this process")
	}
	var ids []int64
	if raw := r.PostFormValue("id"); raw != "" {
		id, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || id <= 0 {
			return crawlkeeper.Errorf(crawlkeeper.EINVALID, "record id %q is not a positive number", raw)
		}
		ids = []int64{id}
	}
	res, err := d.o.RetryDeadLetters(r.Context(), ids)
	if err != nil {
		return err
	}
	v.Notice = "Retried " + strconv.Itoa(res.Retried) + ": " + strconv.FormatInt(res.Processed, 10) + " processed, " +
		strconv.FormatInt(res.Failed, 10) + " failed again, " + strconv.FormatInt(res.Skipped, 10) + " gone or changing."
	return d.renderPipeline(w, r, v, res)
}

type recordsData struct {
	Query    crawlkeeper.RecordQuery
	Records  []*crawlkeeper.Record
	NextURL  template.URL
	FirstURL template.URL
	// Search is the full-text query; when set, Hits holds the page of
	// matches instead of Records (see search.go).
	Search string
	Hits   []searchHit
	// Round is the round filter of the search or the listing (the round
	// of each record's last delivery that carried one).
	Round string
}

func (d *dash) records(w http.ResponseWriter, r *http.Request, v *view) error {
	raw := r.URL.Query()
	if raw.Get("search") != "" {
		return d.searchRecords(w, r, v)
	}
	raw.Del("search")
	// The form sends every field, empty or not; the API's parser treats
	// an empty filter as none, but "archived" is a checkbox ("on").
	if raw.Get("archived") == "on" {
		raw.Set("archived", "true")
	}
	q, err := httpapi.ParseRecordQuery(raw)
	if err != nil {
		return err
	}
	if raw.Get("limit") == "" {
		q.Limit = recordsPageSize
	}
	q.Limit = min(q.Limit, 200)
	page, err := d.o.Store.List(r.Context(), q)
	if err != nil {
		return err
	}
	archived := ""
	if q.Archived {
		archived = "true"
	}
	data := recordsData{Query: q, Records: page.Records, Round: q.Round}
	if page.Next != "" {
		data.NextURL = link("/records", "q", q.Q, "source", q.Source, "round", q.Round, "target", q.Target, "archived", archived, "cursor", page.Next)
	}
	if q.Cursor != "" {
		data.FirstURL = link("/records", "q", q.Q, "source", q.Source, "round", q.Round, "target", q.Target, "archived", archived)
	}
	v.Title, v.Nav, v.Data = "Records", "records", data
	d.render(w, "records", v)
	return nil
}

// version is one version of a record on its page, with what changed from
// the version before it.
type version struct {
	Version  int64
	From, To time.Time
	Current  bool
	// Oldest is the oldest kept version: nothing to compare it with.
	Oldest    bool
	Changes   []Change
	DiffError string
}

type itemField struct {
	Name  string
	Value string
	// Kind is how the field changed in the latest version ("" when it
	// did not).
	Kind ChangeKind
}

type recordData struct {
	Record   *crawlkeeper.Record
	Fields   []itemField
	Versions []version
}

func (d *dash) record(w http.ResponseWriter, r *http.Request, v *view) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return crawlkeeper.Errorf(crawlkeeper.EINVALID, "record id %q is not a positive number", r.PathValue("id"))
	}
	ctx := r.Context()
	rec, err := d.o.Store.Get(ctx, id)
	if err != nil {
		return err
	}
	hist, err := d.o.Store.History(ctx, id)
	if err != nil {
		return err
	}
	// Versions oldest first, the current one last; each diffed against
	// the one before.
	all := make([]version, 0, len(hist)+1)
	items := make([][]byte, 0, len(hist)+1)
	for _, h := range hist {
		all = append(all, version{Version: h.Version, From: h.ValidFrom, To: h.ValidTo})
		items = append(items, h.Item)
	}
	all = append(all, version{Version: rec.Version, From: rec.LastChangedAt, Current: true})
	all[0].Oldest = true
	items = append(items, rec.Item)
	for i := 1; i < len(all); i++ {
		changes, err := DiffItems(items[i-1], items[i])
		if err != nil {
			all[i].DiffError = err.Error()
			continue
		}
		all[i].Changes = changes
	}
	latest := map[string]ChangeKind{}
	if n := len(all); n > 1 {
		latest = ChangedFields(all[n-1].Changes)
	}
	data := recordData{Record: rec, Fields: itemFields(rec.Item, latest)}
	// Removed fields are not in the current item; list them too so the
	// highlight shows what went away.
	for name, kind := range latest {
		if kind == Removed {
			data.Fields = append(data.Fields, itemField{Name: name, Value: "(removed)", Kind: Removed})
		}
	}
	sort.SliceStable(data.Fields, func(i, j int) bool { return data.Fields[i].Name < data.Fields[j].Name })
	slices.Reverse(all)
	data.Versions = all
	v.Title, v.Nav, v.Data = "Record "+strconv.FormatInt(id, 10), "records", data
	d.render(w, "record", v)
	return nil
}

// itemFields lists the item's top-level fields with compact JSON values.
func itemFields(item []byte, kinds map[string]ChangeKind) []itemField {
	v, err := decodeJSON(item)
	if err != nil {
		return []itemField{{Name: "(item)", Value: string(item)}}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []itemField{{Name: "(item)", Value: compact(v)}}
	}
	out := make([]itemField, 0, len(obj))
	for k, x := range obj {
		out = append(out, itemField{Name: k, Value: compact(x), Kind: kinds[k]})
	}
	return out
}

func pathEscape(s string) string { return url.PathEscape(s) }
