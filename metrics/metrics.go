// Package metrics exposes crawlkeeper's Prometheus metrics
// (github.com/prometheus/client_golang): ingest outcomes, the store's
// persistent delivery and duplicate counters, date errors,
// archive moves, pipeline freshness, round progress, notification lag and
// HTTP latency. Every metric is registered on the package's own registry,
// so tests can read values without global state.
package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/crawlkeeper/crawlkeeper/pipeline"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds crawlkeeper's collectors.
type Metrics struct {
	Registry *prometheus.Registry

	Items              *prometheus.CounterVec
	ItemsRejected      prometheus.Counter
	DateErrors         prometheus.Counter
	CrawledAtDefaulted prometheus.Counter
	ArchiveMoves       *prometheus.CounterVec
	ArchiveRuns        prometheus.Counter
	ArchiveLastRun     prometheus.Gauge
	Records            *prometheus.GaugeVec
	ScanPass           prometheus.Gauge
	ScanPosition       prometheus.Gauge
	ScanPassDuration   prometheus.Gauge
	OldestProcessedAge prometheus.Gauge
	DueRecords         prometheus.Gauge
	Processed          *prometheus.CounterVec
	NotificationLag    prometheus.Histogram
	RoundTargets       *prometheus.GaugeVec
	HTTPDuration       *prometheus.HistogramVec
	// Errors counts failures of background work that no request reports
	// (an archive pass, its lease, its journal entry), by operation.
	Errors *prometheus.CounterVec
	// deliveries are the store's delivery counters, per source.
	deliveries *deliveries

	// onScrape are read before every scrape (see OnScrape).
	onScrape []func(ctx context.Context) error
	// own are crawlkeeper's collectors, registered by New (without the
	// Go runtime's and the process's).
	own []prometheus.Collector
}

// New registers every collector on a fresh registry, with the Go runtime
// and process collectors.
func New() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry:   r,
		deliveries: newDeliveries(),
		Items: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawlkeeper_items_total", Help: "Items ingested, by outcome (inserted, changed, unchanged, revived, refreshed).",
		}, []string{"outcome"}),
		ItemsRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawlkeeper_items_rejected_total", Help: "Items rejected as invalid.",
		}),
		DateErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawlkeeper_date_errors_total", Help: "Event-field strings that could not be read as dates.",
		}),
		CrawledAtDefaulted: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawlkeeper_crawled_at_defaulted_total", Help: "Items whose _crawled_at was missing or unreadable.",
		}),
		ArchiveMoves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawlkeeper_archive_moves_total", Help: "Records moved to the archive, by reason.",
		}, []string{"reason"}),
		ArchiveRuns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawlkeeper_archive_runs_total", Help: "Archive passes run.",
		}),
		ArchiveLastRun: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawlkeeper_archive_last_run_timestamp_seconds", Help: "When the last archive pass finished.",
		}),
		Records: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "crawlkeeper_records", Help: "Records stored, by state (active, archived).",
		}, []string{"state"}),
		ScanPass: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawlkeeper_scan_pass", Help: "Number of the current rescan pass (0 before the first).",
		}),
		ScanPosition: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawlkeeper_scan_position", Help: "Record id up to which the current pass has processed everything (a pass covers the ids up to the highest one when it began).",
		}),
		ScanPassDuration: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawlkeeper_scan_pass_duration_seconds", Help: "Duration of the last complete rescan pass, from its start to its end (a paced pass spreads over most of the period).",
		}),
		OldestProcessedAge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawlkeeper_oldest_processed_age_seconds", Help: "Age of the oldest processing time among active records (processed_at, or when a later pass read the record, from its checkpoint).",
		}),
		DueRecords: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawlkeeper_due_records", Help: "Active records due for processing: never processed, processed at another version or chain, or longer than a period ago.",
		}),
		Processed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawlkeeper_processed_total", Help: "Records handled by the pipeline, by path (realtime, rescan) and result (written; unchanged: a pass found the stored result current; skipped: gone or changing; failed: sent to the dead letters).",
		}, []string{"path", "result"}),
		NotificationLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "crawlkeeper_notification_lag_seconds", Help: "Time from a batch's commit to its records being processed in real time.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		RoundTargets: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "crawlkeeper_round_targets", Help: "Targets of a crawl round, by state (queued, done, failed, remaining).",
		}, []string{"round", "state"}),
		HTTPDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "crawlkeeper_http_request_duration_seconds", Help: "HTTP request latency by route, method and status code.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method", "code"}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawlkeeper_errors_total", Help: "Failures of background work, by operation (archive, archive_lease, archive_journal, rare_fields, metrics).",
		}, []string{"op"}),
	}
	m.own = []prometheus.Collector{m.Items, m.ItemsRejected, m.DateErrors, m.CrawledAtDefaulted, m.ArchiveMoves, m.ArchiveRuns,
		m.ArchiveLastRun, m.Records, m.ScanPass, m.ScanPosition, m.ScanPassDuration, m.OldestProcessedAge,
		m.DueRecords, m.Processed, m.NotificationLag, m.RoundTargets, m.HTTPDuration, m.Errors, m.deliveries}
	r.MustRegister(m.own...)
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// OnScrape adds fn to what runs before every scrape: gauges that come
// from state shared by several processes (the store's counts, rounds, the
// pipeline's checkpoint and freshness) are read when they are asked for,
// so they are never older than the scrape. Call it before Handler serves.
func (m *Metrics) OnScrape(fn func(ctx context.Context) error) {
	m.onScrape = append(m.onScrape, fn)
}

// Handler serves the registry in the Prometheus exposition format. A
// refresh that fails is counted in crawlkeeper_errors_total{op="metrics"}
// and leaves its gauges as they were.
func (m *Metrics) Handler() http.Handler {
	h := promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.Refresh(r.Context())
		h.ServeHTTP(w, r)
	})
}

// Refresh runs the OnScrape functions; the first error is returned after
// all of them ran.
func (m *Metrics) Refresh(ctx context.Context) error {
	var first error
	for _, fn := range m.onScrape {
		if err := fn(ctx); err != nil {
			m.Error("metrics")
			if first == nil {
				first = err
			}
		}
	}
	return first
}

// ObserveProcessed counts one handling of records by the pipeline (it
// implements pipeline.Observer with ObserveNotificationLag). Processed
// includes Unchanged; the written result is the rest.
func (m *Metrics) ObserveProcessed(path string, out pipeline.Outcome) {
	for result, n := range map[string]int64{"written": out.Processed - out.Unchanged, "unchanged": out.Unchanged, "skipped": out.Skipped, "failed": out.Failed} {
		if n > 0 {
			m.Processed.WithLabelValues(path, result).Add(float64(n))
		}
	}
}

// ObserveNotificationLag records the time from a batch's commit to its
// records being processed in real time.
func (m *Metrics) ObserveNotificationLag(d time.Duration) {
	m.NotificationLag.Observe(max(d, 0).Seconds())
}

// SetPipeline sets the rescan gauges from the pipeline's status at now;
// lastPass is the duration of the last finished pass, when one finished.
func (m *Metrics) SetPipeline(st *pipeline.Status, lastPass time.Duration, finished bool, now time.Time) {
	m.ScanPass.Set(float64(st.Pass))
	m.ScanPosition.Set(float64(st.Position))
	m.DueRecords.Set(float64(st.Due))
	if st.OldestProcessedAt != nil {
		m.OldestProcessedAge.Set(max(now.Sub(*st.OldestProcessedAt), 0).Seconds())
	} else {
		m.OldestProcessedAge.Set(0)
	}
	if finished {
		m.ScanPassDuration.Set(lastPass.Seconds())
	}
}

// Error counts a failure of background work.
func (m *Metrics) Error(op string) { m.Errors.WithLabelValues(op).Inc() }

// ObserveIngest counts one ingest's summary.
func (m *Metrics) ObserveIngest(s *crawlkeeper.IngestSummary) {
	m.Items.WithLabelValues("inserted").Add(float64(s.Inserted))
	m.Items.WithLabelValues("changed").Add(float64(s.Changed))
	m.Items.WithLabelValues("unchanged").Add(float64(s.Unchanged))
	m.Items.WithLabelValues("revived").Add(float64(s.Revived))
	m.Items.WithLabelValues("refreshed").Add(float64(s.Refreshed))
	m.ItemsRejected.Add(float64(s.Rejected))
	m.DateErrors.Add(float64(s.DateErrors))
	m.CrawledAtDefaulted.Add(float64(s.CrawledAtDefaulted))
}

// ObserveArchive counts one archive pass.
func (m *Metrics) ObserveArchive(r *crawlkeeper.ArchiveReport, finished time.Time) {
	if r.DryRun {
		return
	}
	for reason, n := range r.ByReason {
		m.ArchiveMoves.WithLabelValues(string(reason)).Add(float64(n))
	}
	m.ArchiveRuns.Inc()
	m.ArchiveLastRun.Set(float64(finished.Unix()))
}

// RefreshStore sets the gauges that come from the store's counts.
func (m *Metrics) RefreshStore(ctx context.Context, st crawlkeeper.RecordStore) error {
	s, err := st.Stats(ctx)
	if err != nil {
		return err
	}
	m.Records.WithLabelValues("active").Set(float64(s.Active))
	m.Records.WithLabelValues("archived").Set(float64(s.Archived))
	m.deliveries.set(s)
	return nil
}

// RefreshRounds sets the round progress gauges from the monitor.
func (m *Metrics) RefreshRounds(ctx context.Context, mon crawlkeeper.Monitor) error {
	rounds, err := mon.Rounds(ctx)
	if err != nil {
		return err
	}
	m.RoundTargets.Reset()
	for _, r := range rounds {
		m.RoundTargets.WithLabelValues(r.Round, "queued").Set(float64(r.Queued))
		m.RoundTargets.WithLabelValues(r.Round, "done").Set(float64(r.Done))
		m.RoundTargets.WithLabelValues(r.Round, "failed").Set(float64(r.Failed))
		m.RoundTargets.WithLabelValues(r.Round, "remaining").Set(float64(r.Remaining))
	}
	return nil
}
