package metrics

import (
	"sync"

	"github.com/crawlkeeper/crawlkeeper"
	"github.com/prometheus/client_golang/prometheus"
)

// deliveries exposes the store's persistent delivery counters
// (crawlkeeper.SourceStats.Deliveries) as Prometheus counters. The values
// are the store's, not this process's: they survive restarts and add up
// every process that ingests into the store, so they are read from the
// store (RefreshStore) and exported as they were last read.
type deliveries struct {
	total, dups *prometheus.Desc

	mu   sync.Mutex
	last map[string][2]int64 // source → deliveries, duplicates
}

func newDeliveries() *deliveries {
	return &deliveries{
		total: prometheus.NewDesc("crawlkeeper_deliveries_total",
			"Items delivered to the store, by source, since the store was created (persistent; read from the store).", []string{"source"}, nil),
		dups: prometheus.NewDesc("crawlkeeper_duplicate_deliveries_total",
			"Delivered items that went to a record the store already held (re-crawls merged instead of stored twice), by source (persistent; read from the store).", []string{"source"}, nil),
	}
}

// set records the counters of the stats st.
func (d *deliveries) set(st *crawlkeeper.Stats) {
	last := make(map[string][2]int64, len(st.Sources))
	for name, ss := range st.Sources {
		if ss.Deliveries > 0 {
			last[name] = [2]int64{ss.Deliveries, ss.DuplicateDeliveries}
		}
	}
	d.mu.Lock()
	d.last = last
	d.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (d *deliveries) Describe(ch chan<- *prometheus.Desc) {
	ch <- d.total
	ch <- d.dups
}

// Collect implements prometheus.Collector.
func (d *deliveries) Collect(ch chan<- prometheus.Metric) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for name, v := range d.last {
		ch <- prometheus.MustNewConstMetric(d.total, prometheus.CounterValue, float64(v[0]), name)
		ch <- prometheus.MustNewConstMetric(d.dups, prometheus.CounterValue, float64(v[1]), name)
	}
}
