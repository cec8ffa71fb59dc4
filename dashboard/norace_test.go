//go:build !race

package dashboard_test

// manyRecords is the size of the query-shape test's store (see
// race_test.go).
const manyRecords = 20000
