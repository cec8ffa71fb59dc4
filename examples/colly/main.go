// Command colly is an example crawler: it crawls one site with Colly
// (github.com/gocolly/colly/v2) and pushes one item per HTML page to a
// crawlkeeper server through the Go client. Each page is also a crawl
// target, so the round's progress shows which pages were done.
//
//	go run ./examples/colly --start https://example.org/ --api http://127.0.0.1:8080 --round 1
//
// The token comes from --token or CRAWLKEEPER_TOKEN (scope ingest).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/crawlkeeper/crawlkeeper/client"
	"github.com/gocolly/colly/v2"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "colly example:", err)
		}
		os.Exit(1)
	}
}

// maxText bounds the page text kept per item, well under the server's
// item limit.
const maxText = 64 << 10

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("colly", flag.ContinueOnError)
	fs.SetOutput(stderr)
	start := fs.String("start", "", "`URL` to start from; links are followed on its host only")
	api := fs.String("api", envOr("CRAWLKEEPER_URL", "http://127.0.0.1:8080"), "crawlkeeper server base `URL` (also CRAWLKEEPER_URL)")
	token := fs.String("token", os.Getenv("CRAWLKEEPER_TOKEN"), "API `token` with the ingest scope (also CRAWLKEEPER_TOKEN)")
	source := fs.String("source", "", "source `name` (default: the start URL's host)")
	round := fs.String("round", "", "crawl `round` to record the pages in")
	depth := fs.Int("depth", 5, "follow links this many `levels` deep")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*start)
	if err != nil || u.Host == "" {
		return fmt.Errorf("--start %q: give the absolute URL of the first page", *start)
	}
	if *source == "" {
		*source = u.Hostname()
	}
	push, err := client.New(client.Options{
		URL: *api, Token: *token, Source: *source, Round: *round,
		OnResult: func(r client.BatchResult) {
			if r.Err != nil {
				fmt.Fprintf(stderr, "batch of %d items: %v\n", r.Items, r.Err)
			}
		},
	})
	if err != nil {
		return err
	}
	c := colly.NewCollector(
		colly.AllowedDomains(u.Hostname()),
		colly.MaxDepth(*depth),
		colly.StdlibContext(ctx),
		colly.UserAgent("crawlkeeper-colly-example"),
	)
	var addErr error
	pages := 0
	c.OnHTML("html", func(e *colly.HTMLElement) {
		text := strings.Join(strings.Fields(e.DOM.Find("body").Text()), " ")
		item := map[string]any{
			"title":    strings.TrimSpace(e.ChildText("title")),
			"url":      e.Request.URL.String(),
			"h1":       strings.TrimSpace(e.ChildText("h1")),
			"headings": e.ChildTexts("h2"),
			"words":    len(strings.Fields(text)),
			"text":     truncate(text, maxText),
			// The page is the crawl target: the round shows it done.
			"_target": e.Request.URL.String(),
		}
		// Add blocks while the client's buffer is full, which slows the
		// crawl down to what the server takes instead of piling up items.
		if err := push.Add(ctx, item); err != nil && addErr == nil {
			addErr = err
		}
		pages++
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		e.Request.Visit(e.Attr("href"))
	})
	c.OnError(func(r *colly.Response, err error) {
		fmt.Fprintf(stderr, "fetch %s: %v\n", r.Request.URL, err)
	})
	visitErr := c.Visit(u.String())
	c.Wait()
	closeErr := push.Close(ctx)
	st := push.Stats()
	fmt.Fprintf(stdout, "crawled %d pages; sent %d items in %d batches (%d rejected, %d failed)\n", pages, st.Sent, st.Batches, st.Rejected, st.Failed)
	return errors.Join(visitErr, addErr, closeErr)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary so the item stays valid UTF-8.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
