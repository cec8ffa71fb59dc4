package sqlstore

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/crawlkeeper/crawlkeeper"
)

// NetworkError reports whether err comes from the connection to the
// server (refused, reset, closed, timed out) rather than from a
// statement: the server is away, and the operation may be retried once it
// is back.
func NetworkError(err error) bool {
	var ne net.Error // *net.OpError is one
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Known returns err when it already carries crawlkeeper's error code, so
// that an engine's error mapping passes it through unchanged.
func Known(err error) (error, bool) {
	var ce *crawlkeeper.Error
	if errors.As(err, &ce) {
		return err, true
	}
	return nil, false
}

// Attempts bounds how often a server engine's Write runs a transaction
// that lost a deadlock or a serialization race (Retry's attempts).
const Attempts = 5

// Retry runs fn up to attempts times while it fails with an error that
// retryable accepts (a deadlock or serialization failure the engine broke
// by aborting the transaction) and ctx is live.
func Retry(ctx context.Context, attempts int, retryable func(error) bool, fn func() error) error {
	var err error
	for attempt := 1; attempt <= attempts; attempt++ {
		if err = fn(); err == nil || !retryable(err) || ctx.Err() != nil {
			break
		}
	}
	return err
}
