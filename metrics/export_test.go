package metrics

import "github.com/prometheus/client_golang/prometheus"

// Collectors returns crawlkeeper's own collectors of m, exported and
// unexported, for the tests of package metrics_test.
func Collectors(m *Metrics) []prometheus.Collector { return m.own }
