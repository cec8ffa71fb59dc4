//go:build race

package dashboard_test

// manyRecords is the size of the query-shape test's store. The race
// detector slows the pure-Go SQLite down some thirty times, and the shape
// of the queries does not depend on the size, so the race run uses fewer.
const manyRecords = 3000
