package sqlstore

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// NetworkError reports whether err comes from the connection to the
// server (refused, reset, closed, timed out) rather than from a
// statement: the server is away, and the operation may be retried once it
// is back.
func NetworkError(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	var oe *net.OpError
	switch {
	case errors.As(err, &oe), errors.As(err, &ne):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return false
}
