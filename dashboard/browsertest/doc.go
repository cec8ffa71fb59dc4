// Package browsertest holds the dashboard's browser tests: they drive a
// headless Chromium (Debian's chromium package) with chromedp against a
// server with the real handler. They are a module of their own, with a
// replace directive to the repository root, so that the main module and
// its users do not download chromedp and the Chrome DevTools protocol
// packages. Run them from this folder:
//
//	cd dashboard/browsertest && go test -race ./...
//
// Without Chromium they skip, unless CRAWLKEEPER_TEST_CHROMIUM is set,
// which makes a missing browser a failure (CI sets it).
package browsertest
