// Command crawlkeeper keeps crawled data clean, fresh and accountable:
// crawlers push items, crawlkeeper deduplicates them, keeps their history,
// archives expired records, tracks crawl rounds and reprocesses every
// record continuously. Run `crawlkeeper help` for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
