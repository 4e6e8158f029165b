package model

import (
	"errors"
	"fmt"
)

// Kind classifies an error so that callers branch on what went wrong, never on message text.
type Kind string

// The error kinds every service method reports. The api package holds the only table that
// maps them to HTTP statuses.
const (
	KindInvalid     Kind = "invalid"
	KindNotFound    Kind = "not_found"
	KindConflict    Kind = "conflict"
	KindForbidden   Kind = "forbidden"
	KindUnavailable Kind = "unavailable"
	KindInternal    Kind = "internal"
	// KindGone: the id exists, but what was asked of it has been removed on purpose (a
	// trimmed assembly record, DESIGN §10).
	KindGone Kind = "gone"
)

// Error is the one error type of the domain: a kind, a message safe to show a client, the
// request field it concerns (for invalid input) and the underlying cause, which is never
// shown to a client.
type Error struct {
	Kind    Kind
	Message string
	Field   string
	Err     error
	// RetryAfter, when positive, is how many seconds a client should wait before retrying.
	RetryAfter int
}

// Error renders the message and, for logs, the cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Kind, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

// Unwrap exposes the cause to errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// Invalid reports bad input in the named request field.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// NotFound reports an id that does not exist in the caller's account. It is also the answer
// for ids of other accounts, so that no response reveals that such an id exists.
func NotFound(what, id string) *Error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf("%s %q not found", what, id)}
}

// Conflict reports a request that contradicts the current state.
func Conflict(format string, args ...any) *Error {
	return &Error{Kind: KindConflict, Message: fmt.Sprintf(format, args...)}
}

// Gone reports that what a request asks for was removed on purpose; the message says why.
func Gone(format string, args ...any) *Error {
	return &Error{Kind: KindGone, Message: fmt.Sprintf(format, args...)}
}

// Unavailable reports that a dependency (Neo4j, the blob store) cannot be reached now.
func Unavailable(message string, cause error) *Error {
	return &Error{Kind: KindUnavailable, Message: message, Err: cause}
}

// Internal wraps an unexpected failure; its cause is logged, never sent to a client.
func Internal(message string, cause error) *Error {
	return &Error{Kind: KindInternal, Message: message, Err: cause}
}

// KindOf returns the kind of err, KindInternal for errors that carry none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}
