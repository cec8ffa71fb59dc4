// Package longtest is the one switch for the tests that take minutes: the
// torture and crash tests that kill real processes, the load tests, the
// race tests that run two server processes, and the tests that read big
// corpora or sweep every benchmark. They skip unless CRAWLKEEPER_LONG=1,
// so the README's test command (go run ./internal/testrun) finishes in
// minutes; .ci/run sets the variable and runs them as steps of their own.
package longtest

import (
	"os"
	"testing"
)

// Env is the variable that turns the long tests on.
const Env = "CRAWLKEEPER_LONG"

// Enabled reports whether the long tests run (CRAWLKEEPER_LONG=1).
func Enabled() bool { return os.Getenv(Env) == "1" }

// Skip skips tb unless the long tests run; what says what makes the test
// long, and the message names the variable that runs it.
func Skip(tb testing.TB, what string) {
	tb.Helper()
	if !Enabled() {
		tb.Skipf("long test (%s): set %s=1 to run it (.ci/run does)", what, Env)
	}
}
