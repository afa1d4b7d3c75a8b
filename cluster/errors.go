package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
)

// Errors of the client API, matched with errors.Is.
var (
	// ErrUnknownKind: no member of the cluster hosts the addressed kind.
	ErrUnknownKind = errors.New("ringactor/cluster: unknown kind")
	// ErrTimeout: the request's deadline passed before a reply came. It
	// wraps context.DeadlineExceeded.
	ErrTimeout = fmt.Errorf("ringactor/cluster: request timed out: %w", context.DeadlineExceeded)
	// ErrMemberUnavailable: no member could activate or reach the identity,
	// or the member that hosts it is shutting down.
	ErrMemberUnavailable = errors.New("ringactor/cluster: member unavailable")
	// ErrClosed: the local member is closed.
	ErrClosed = errors.New("ringactor/cluster: member closed")
	// ErrOverloaded: the activation refused the request without handling
	// it, at once, because it already holds as many requests as it may
	// (its inbox's queue and its kernel's ring are full). The request may
	// be sent again after a pause (with jitter); unlike ErrTimeout, it
	// says that the request was not handled.
	ErrOverloaded = errors.New("ringactor/cluster: overloaded")
)

// RemoteError is a failure reported by the member that hosts the identity:
// its handler failed (Kind "execution"), or it could not decode, type-check
// or encode a message. Match it with [errors.Is] against the sentinels its
// Is method names rather than by Kind.
type RemoteError struct {
	// Kind names what failed: "execution", "decode", "unregistered",
	// "too_large", "unknown_kind", "unavailable", "timeout",
	// "overloaded", "stale_activation", "state_unavailable",
	// "state_corrupt" or "state_too_large" (the kinds of the cluster's
	// wire protocol).
	Kind      string
	Message   string // the remote error's text
	MessageID uint64 // the id of the request that failed; 0 = unknown
}

// Error implements error.
func (e *RemoteError) Error() string {
	return fmt.Sprintf("ringactor/cluster: remote %s error (message %d): %s", e.Kind, e.MessageID, e.Message)
}

// Is matches the sentinel of the error's kind: gpu.ErrExecution for
// execution errors, ErrTimeout and context.DeadlineExceeded when the
// request's deadline passed remotely, ErrOverloaded when the activation
// refused it for being full, ErrStaleActivation for a stale activation,
// ErrStateStore and the persistence sentinel (ErrStoreUnavailable,
// ErrCorruptRecord, ErrRecordTooLarge) for a state store's failure,
// messages.ErrDecode, messages.ErrUnregistered,
// ErrUnknownKind and ErrMemberUnavailable for the others.
func (e *RemoteError) Is(target error) bool {
	switch e.Kind {
	case wire.KindExecution:
		return target == gpu.ErrExecution
	case wire.KindDecode:
		return target == messages.ErrDecode
	case wire.KindUnregistered:
		return target == messages.ErrUnregistered
	case wire.KindUnknownKind:
		return target == ErrUnknownKind
	case wire.KindUnavailable:
		return target == ErrMemberUnavailable
	case wire.KindTimeout:
		return target == ErrTimeout || target == context.DeadlineExceeded
	case wireKindOverloaded:
		return target == ErrOverloaded
	case wireKindStale:
		return target == ErrStaleActivation
	}
	if sentinel, ok := stateKindSentinel(e.Kind); ok {
		return target == ErrStateStore || target == sentinel
	}
	return false
}

// fromWireError converts a remote WireError into a *RemoteError.
func fromWireError(w *wire.WireError) error {
	return &RemoteError{Kind: w.GetKind(), Message: w.GetMessage(), MessageID: w.GetMessageId()}
}
