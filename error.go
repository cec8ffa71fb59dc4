package crawlkeeper

import (
	"errors"
	"fmt"
)

// Error codes. Every error that reaches a user is mapped to one of these at
// the boundary (CLI exit status, HTTP status).
const (
	EINVALID      = "invalid"       // the input is wrong; the message says how to fix it
	ENOTFOUND     = "not_found"     // the thing asked for does not exist
	ECONFLICT     = "conflict"      // a concurrent change won; retrying may succeed
	ETOOLARGE     = "too_large"     // the input exceeds a configured limit
	EUNAUTHORIZED = "unauthorized"  // no or unknown credentials
	EFORBIDDEN    = "forbidden"     // credentials lack the needed scope
	EUNAVAILABLE  = "unavailable"   // a backend cannot be reached; retry later
	EINTERNAL     = "internal"      // a bug or an unexpected backend failure
	ENOTSUPPORTED = "not_supported" // the backend cannot do this; see the message
)

// Error is the application error: a code for machines and a message for
// people. Err, when set, is the underlying cause and is not shown to API
// clients.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of err: the message of the
// first *Error in its chain, or a generic text for internal errors so that
// backend details do not leak to API clients.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
