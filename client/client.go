// Package client pushes crawled items to a crawlkeeper server
// (POST /api/v1/items) from Go crawlers.
//
// A Client batches items, sends batches from one background goroutine in
// the order they were added, retries with exponential backoff on 429, 5xx
// and network errors (never on other 4xx responses), splits a batch the
// server refuses as too large, and bounds memory: at most Options.Buffer
// items may be added and not yet acknowledged, and Add blocks while the
// buffer is full. Flush and Close wait until everything added before them
// was acknowledged or finally failed.
//
// Retrying a batch is safe because ingest deduplicates: items the server
// stored before a failure come back as "unchanged" the second time.
//
//	c, err := client.New(client.Options{URL: "http://127.0.0.1:8080", Token: tok, Source: "jobs", Round: "7"})
//	...
//	for _, it := range items {
//		if err := c.Add(ctx, it); err != nil { ... }
//	}
//	if err := c.Close(ctx); err != nil { ... } // waits for every batch
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// Defaults of Options.
const (
	DefaultBatchSize     = 500
	DefaultBatchBytes    = 4 << 20
	DefaultFlushInterval = time.Second
	DefaultBuffer        = 10000
	DefaultRetries       = 5
	DefaultMinBackoff    = 200 * time.Millisecond
	DefaultMaxBackoff    = 30 * time.Second
	DefaultTimeout       = 2 * time.Minute
)

// ErrClosed is returned by Add after Close.
var ErrClosed = errors.New("crawlkeeper client: closed")

// Summary is the server's report of one ingest request.
type Summary = crawlkeeper.IngestSummary

// Options configure a Client. Only URL is required.
type Options struct {
	// URL is the server's base URL, such as http://127.0.0.1:8080.
	URL string
	// Token is sent as "Authorization: Bearer"; it needs the ingest
	// scope. Empty sends none (a loopback server without tokens).
	Token string
	// Source, Round and Target are sent with every batch as request
	// metadata; an item's own _source, _round and _target win.
	Source, Round, Target string
	// BatchSize is the most items sent per request. Defaults to 500.
	BatchSize int
	// BatchBytes is the most body bytes per request (a single larger item
	// is sent alone). Keep it under the server's limits.max_body_bytes.
	// Defaults to 4 MiB.
	BatchBytes int
	// FlushInterval sends a partial batch once its first item has waited
	// this long. Defaults to 1s.
	FlushInterval time.Duration
	// Buffer is how many items may be added and not yet acknowledged;
	// Add blocks while it is full. Defaults to 10000.
	Buffer int
	// Retries is how many times a batch is retried after a retryable
	// failure (429, 5xx, network error); negative disables retries.
	// Defaults to 5.
	Retries int
	// MinBackoff and MaxBackoff bound the wait before a retry, which
	// doubles per attempt with random jitter; a Retry-After header is
	// honoured up to MaxBackoff. Default to 200ms and 30s.
	MinBackoff, MaxBackoff time.Duration
	// Timeout bounds one request. Defaults to 2m.
	Timeout time.Duration
	// HTTPClient sends the requests. Defaults to a client with Timeout.
	HTTPClient *http.Client
	// OnResult, when set, is called from the sending goroutine after each
	// batch was acknowledged or finally failed. It must not block for long
	// and must not call Flush or Close.
	OnResult func(BatchResult)
}

// BatchResult is the outcome of one batch.
type BatchResult struct {
	// Items is how many items the batch held.
	Items int
	// Summary is the server's ingest summary; nil when no request got an
	// answer with one.
	Summary *Summary
	// Rejected lists the items the server refused, with its reason.
	Rejected []Rejected
	// Attempts counts the requests sent for the batch.
	Attempts int
	// Err is nil when every item was stored. It is an *Error when the
	// server answered (see Error.Code), or the network error of the last
	// attempt.
	Err error
}

// Rejected is an item the server refused and why.
type Rejected struct {
	Item  json.RawMessage
	Error string
}

// Error is an error answer of the server. Code is one of crawlkeeper's
// error codes (crawlkeeper.EINVALID, EUNAUTHORIZED, EFORBIDDEN, ETOOLARGE,
// EUNAVAILABLE, EINTERNAL, ...).
type Error struct {
	StatusCode int
	Code       string
	Message    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("crawlkeeper: %s (HTTP %d %s)", e.Message, e.StatusCode, e.Code)
}

// Temporary reports whether retrying the request may succeed.
func (e *Error) Temporary() bool { return retryableStatus(e.StatusCode) }

// ErrorCode returns the server's error code in err's chain, or "".
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Stats are counters since the client was created.
type Stats struct {
	Added    int64 // items accepted by Add
	Sent     int64 // items in batches the server acknowledged
	Rejected int64 // items the server refused (invalid)
	Failed   int64 // items in batches that finally failed
	Batches  int64 // batches acknowledged or failed
	Retries  int64 // requests sent again after a retryable failure
}

// Client batches and sends items. It is safe for concurrent use.
type Client struct {
	opts     Options
	endpoint string
	http     *http.Client

	slots   chan struct{} // one per item added and not yet acknowledged
	pending chan json.RawMessage
	kick    chan struct{} // asks the sender to send what it holds now
	stop    chan struct{} // closed by Close once everything is flushed
	done    chan struct{} // closed when the sender exits
	ctx     context.Context
	cancel  context.CancelFunc

	// wait sleeps before a retry; tests replace it to record the waits
	// instead of spending them.
	wait func(ctx context.Context, d time.Duration) error

	mu       sync.Mutex
	closed   bool
	added    int64 // items pushed to pending
	acked    int64 // items whose batch finished
	ackedCh  chan struct{}
	errs     []error // batch failures since the last Flush
	failures int     // how many batches failed since the last Flush
	stats    Stats
}

// New returns a client and starts its sending goroutine; call Close to
// stop it.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("crawlkeeper client: URL %q: use the server's base URL, such as http://127.0.0.1:8080", opts.URL)
	}
	// The server refuses every request whose metadata breaks its limits;
	// better to say so here than at the first batch.
	if err := (crawlkeeper.Meta{Source: opts.Source, Target: opts.Target, Round: opts.Round}).Validate([3]string{"Options.Source", "Options.Target", "Options.Round"}); err != nil {
		return nil, fmt.Errorf("crawlkeeper client: %w", err)
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = DefaultBatchBytes
	}
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = DefaultFlushInterval
	}
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	if opts.Retries == 0 {
		opts.Retries = DefaultRetries
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = DefaultMinBackoff
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.MinBackoff)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: opts.Timeout}
	}
	q := url.Values{}
	for k, v := range map[string]string{"source": opts.Source, "round": opts.Round, "target": opts.Target} {
		if v != "" {
			q.Set(k, v)
		}
	}
	endpoint := strings.TrimRight(u.String(), "/") + "/api/v1/items"
	if len(q) > 0 {
		endpoint += "?" + q.Encode()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		opts:     opts,
		endpoint: endpoint,
		http:     hc,
		slots:    make(chan struct{}, opts.Buffer),
		pending:  make(chan json.RawMessage, opts.Buffer),
		kick:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		ctx:      ctx,
		cancel:   cancel,
		wait:     sleep,
		ackedCh:  make(chan struct{}),
	}
	go c.run()
	return c, nil
}

// Add queues one item: a map, a struct or a json.RawMessage that encodes
// as a JSON object. It blocks while Options.Buffer items are waiting for
// acknowledgement, until there is room or ctx ends (then it returns
// ctx.Err() and the item is not queued). It returns ErrClosed after Close.
// A failure to deliver the item is reported later, by Flush, Close and
// OnResult.
func (c *Client) Add(ctx context.Context, item any) error {
	b, err := encodeItem(item)
	if err != nil {
		return err
	}
	if c.isClosed() {
		return ErrClosed
	}
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.stop:
		return ErrClosed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		<-c.slots
		return ErrClosed
	}
	// A slot guarantees room in pending, so this never blocks.
	c.pending <- b
	c.added++
	c.stats.Added++
	return nil
}

func encodeItem(item any) (json.RawMessage, error) {
	var b []byte
	switch x := item.(type) {
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	default:
		var err error
		if b, err = json.Marshal(item); err != nil {
			return nil, fmt.Errorf("crawlkeeper client: encode item: %w", err)
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("crawlkeeper client: item is not valid JSON: %w", err)
	}
	if buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return nil, errors.New("crawlkeeper client: an item must be a JSON object")
	}
	return buf.Bytes(), nil
}

func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Flush sends the items waiting in a partial batch now and waits until
// every item added before the call was acknowledged or finally failed. It
// returns the batch failures since the previous Flush (an error wrapping
// the first one, so ErrorCode and errors.As work on it), or ctx.Err() when
// ctx ends first.
func (c *Client) Flush(ctx context.Context) error {
	c.mu.Lock()
	target := c.added
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default: // a kick is already pending; it will drain our items too
	}
	for {
		c.mu.Lock()
		if c.acked >= target {
			err := c.takeErrors()
			c.mu.Unlock()
			return err
		}
		ch := c.ackedCh
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			c.mu.Lock()
			n := target - c.acked
			c.mu.Unlock()
			if n > 0 {
				return fmt.Errorf("crawlkeeper client: stopped with %d items not sent", n)
			}
		}
	}
}

// takeErrors returns and resets the failures since the last Flush; c.mu
// is held.
func (c *Client) takeErrors() error {
	if len(c.errs) == 0 {
		return nil
	}
	first, n := c.errs[0], c.failures
	c.errs, c.failures = nil, 0
	if n == 1 {
		return fmt.Errorf("crawlkeeper client: a batch failed: %w", first)
	}
	return fmt.Errorf("crawlkeeper client: %d batches failed; the first: %w", n, first)
}

// Close stops accepting items, sends everything added and waits until it
// is acknowledged, then stops the sending goroutine. When ctx ends first
// the request in flight is cancelled and the items not yet acknowledged
// are reported as lost. It returns what Flush returns.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	already := c.closed
	c.closed = true
	c.mu.Unlock()
	if already {
		<-c.done
		return nil
	}
	err := c.Flush(ctx)
	var lost int64
	if ctx.Err() != nil {
		c.mu.Lock()
		lost = c.added - c.acked
		c.mu.Unlock()
		// Cancelling fails the request in flight and every batch still
		// waiting at once, so the sender can stop.
		c.cancel()
	}
	close(c.stop)
	<-c.done
	c.cancel()
	if ctx.Err() != nil {
		return fmt.Errorf("crawlkeeper client: closed before %d items were acknowledged: %w", lost, ctx.Err())
	}
	return err
}

// Stats returns the counters so far.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// run is the sending goroutine: it gathers batches and sends them one at
// a time, so batches reach the server in the order items were added.
func (c *Client) run() {
	defer close(c.done)
	var (
		batch []json.RawMessage
		size  int
		timer *time.Timer
		timeC <-chan time.Time
	)
	send := func() {
		if timer != nil {
			timer.Stop()
			timer, timeC = nil, nil
		}
		if len(batch) == 0 {
			return
		}
		c.sendBatch(batch)
		batch, size = nil, 0
	}
	add := func(it json.RawMessage) {
		if len(batch) > 0 && size+len(it)+1 > c.opts.BatchBytes {
			send()
		}
		batch = append(batch, it)
		size += len(it) + 1
		if len(batch) == 1 && timer == nil {
			timer = time.NewTimer(c.opts.FlushInterval)
			timeC = timer.C
		}
		if len(batch) >= c.opts.BatchSize {
			send()
		}
	}
	drain := func() {
		for {
			select {
			case it := <-c.pending:
				add(it)
			default:
				send()
				return
			}
		}
	}
	for {
		select {
		case it := <-c.pending:
			add(it)
		case <-timeC:
			timer, timeC = nil, nil
			send()
		case <-c.kick:
			drain()
		case <-c.stop:
			drain()
			return
		}
	}
}

// sendBatch delivers one batch (splitting it when the server says it is
// too large) and records the result.
func (c *Client) sendBatch(batch []json.RawMessage) {
	res := c.deliver(batch)
	c.mu.Lock()
	c.acked += int64(len(batch))
	c.stats.Batches++
	c.stats.Retries += int64(max(res.Attempts-1, 0))
	c.stats.Rejected += int64(len(res.Rejected))
	if res.Err != nil && len(res.Rejected) == 0 {
		c.stats.Failed += int64(len(batch))
	} else {
		c.stats.Sent += int64(len(batch) - len(res.Rejected))
	}
	if res.Err != nil {
		c.failures++
		if len(c.errs) == 0 {
			c.errs = append(c.errs, res.Err)
		}
	}
	close(c.ackedCh)
	c.ackedCh = make(chan struct{})
	c.mu.Unlock()
	for range batch {
		<-c.slots
	}
	if c.opts.OnResult != nil {
		c.opts.OnResult(res)
	}
}

// deliver sends batch with retries; on 413 it sends each half on its own,
// since ingest is idempotent and the items before the cut count as
// unchanged the second time.
func (c *Client) deliver(batch []json.RawMessage) BatchResult {
	res := c.post(c.ctx, batch)
	var e *Error
	if len(batch) > 1 && errors.As(res.Err, &e) && e.StatusCode == http.StatusRequestEntityTooLarge {
		half := len(batch) / 2
		a, b := c.deliver(batch[:half]), c.deliver(batch[half:])
		return mergeResults(a, b, res.Attempts)
	}
	return res
}

func mergeResults(a, b BatchResult, attempts int) BatchResult {
	out := BatchResult{Items: a.Items + b.Items, Attempts: attempts + a.Attempts + b.Attempts}
	out.Rejected = append(a.Rejected, b.Rejected...)
	out.Err = a.Err
	if out.Err == nil {
		out.Err = b.Err
	}
	if a.Summary != nil || b.Summary != nil {
		s := &Summary{Errors: []crawlkeeper.ItemError{}}
		for _, x := range []*Summary{a.Summary, b.Summary} {
			if x == nil {
				continue
			}
			s.Read += x.Read
			s.Inserted += x.Inserted
			s.Changed += x.Changed
			s.Unchanged += x.Unchanged
			s.Revived += x.Revived
			s.Refreshed += x.Refreshed
			s.Rejected += x.Rejected
			s.CrawledAtDefaulted += x.CrawledAtDefaulted
			s.NoSource += x.NoSource
			s.DateErrors += x.DateErrors
			s.Marked += x.Marked
			s.Errors = append(s.Errors, x.Errors...)
			s.ErrorsTruncated = s.ErrorsTruncated || x.ErrorsTruncated
		}
		out.Summary = s
	}
	return out
}

// Send posts items as one request right away, with the client's retries
// but without batching or the buffer, and returns the server's summary.
// Items the server rejected make it return an *Error with code
// crawlkeeper.EINVALID together with the summary, whose Errors name each
// rejected item by its 1-based position.
func (c *Client) Send(ctx context.Context, items ...any) (*Summary, error) {
	batch := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		b, err := encodeItem(it)
		if err != nil {
			return nil, err
		}
		batch = append(batch, b)
	}
	res := c.post(ctx, batch)
	return res.Summary, res.Err
}

// post sends one request with retries.
func (c *Client) post(ctx context.Context, batch []json.RawMessage) BatchResult {
	res := BatchResult{Items: len(batch)}
	var body bytes.Buffer
	for _, it := range batch {
		body.Write(it)
		body.WriteByte('\n')
	}
	for attempt := 0; ; attempt++ {
		res.Attempts++
		sum, retryAfter, err := c.once(ctx, body.Bytes())
		res.Summary, res.Err = sum, err
		if err == nil || !retryable(err) || attempt >= c.opts.Retries || ctx.Err() != nil {
			break
		}
		if werr := c.wait(ctx, c.backoff(attempt, retryAfter)); werr != nil {
			break
		}
	}
	if res.Summary != nil {
		for _, e := range res.Summary.Errors {
			if e.Line >= 1 && e.Line <= len(batch) {
				res.Rejected = append(res.Rejected, Rejected{Item: batch[e.Line-1], Error: e.Error})
			}
		}
	}
	return res
}

// once sends one request. A 400 answer with an ingest summary (some items
// rejected, the others stored) returns the summary and an *Error.
func (c *Client) once(ctx context.Context, body []byte) (*Summary, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("Accept", "application/json")
	if c.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("crawlkeeper client: post items: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("crawlkeeper client: read answer: %w", err)
	}
	retryAfter := parseRetryAfter(resp.Header.Get("Retry-After"))
	var answer struct {
		*Summary
		Stopped string `json:"stopped"`
		Error   *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	jsonErr := json.Unmarshal(b, &answer)
	if resp.StatusCode == http.StatusOK {
		if jsonErr != nil || answer.Summary == nil {
			return nil, 0, &Error{StatusCode: resp.StatusCode, Code: crawlkeeper.EINTERNAL, Message: fmt.Sprintf("unexpected answer %q", truncate(b))}
		}
		return answer.Summary, 0, nil
	}
	e := &Error{StatusCode: resp.StatusCode, Code: codeOfStatus(resp.StatusCode), Message: strings.TrimSpace(truncate(b))}
	if jsonErr == nil && answer.Error != nil {
		e.Code, e.Message = answer.Error.Code, answer.Error.Message
	} else if jsonErr == nil && answer.Summary != nil {
		e.Message = fmt.Sprintf("%d of %d items rejected", answer.Rejected, answer.Read)
		if answer.Stopped != "" {
			e.Message = answer.Stopped
		}
		return answer.Summary, retryAfter, e
	}
	return nil, retryAfter, e
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// codeOfStatus names the error of an answer without a JSON error body (a
// proxy's HTML page, say).
func codeOfStatus(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return crawlkeeper.EUNAUTHORIZED
	case status == http.StatusForbidden:
		return crawlkeeper.EFORBIDDEN
	case status == http.StatusNotFound:
		return crawlkeeper.ENOTFOUND
	case status == http.StatusRequestEntityTooLarge:
		return crawlkeeper.ETOOLARGE
	case status == http.StatusTooManyRequests || status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		return crawlkeeper.EUNAVAILABLE
	case status >= 500:
		return crawlkeeper.EINTERNAL
	default:
		return crawlkeeper.EINVALID
	}
}

func retryableStatus(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// retryable reports whether err may go away on its own: a 429 or 5xx
// answer, or a network error. Other answers (bad items, bad token) fail
// the same way every time.
func retryable(err error) bool {
	var e *Error
	if errors.As(err, &e) {
		return e.Temporary()
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// backoff is the wait before retry attempt+1: exponential with full
// jitter, so many crawlers hitting one restarted server spread out, and at
// least what the server asked for with Retry-After.
func (c *Client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	d := c.opts.MinBackoff << min(attempt, 30)
	if d <= 0 || d > c.opts.MaxBackoff {
		d = c.opts.MaxBackoff
	}
	d = d/2 + rand.N(d/2+1)
	if retryAfter > d {
		d = min(retryAfter, c.opts.MaxBackoff)
	}
	return d
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
