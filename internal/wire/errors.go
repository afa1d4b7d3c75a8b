package wire

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/ringactor/ringactor/messages"
)

// The kinds of a [WireError], which name what failed on the remote side.
const (
	// KindUnregistered: a type or type id is not registered.
	KindUnregistered = "unregistered"
	// KindDecode: a message could not be decoded.
	KindDecode = "decode"
	// KindTooLarge: a payload exceeds the configured maximum.
	KindTooLarge = "too_large"
	// KindExecution: the handler failed; the message says how.
	KindExecution = "execution"
	// KindUnknownKind: the addressed cluster kind does not exist.
	KindUnknownKind = "unknown_kind"
	// KindUnavailable: the member or kernel cannot serve the request.
	KindUnavailable = "unavailable"
	// KindTimeout: the request's deadline, carried in timeout_ns, passed
	// while the remote side handled it.
	KindTimeout = "timeout"
)

// kinds lists the kinds in code order; code i+1 is kinds[i].
var kinds = [...]string{
	KindUnregistered, KindDecode, KindTooLarge,
	KindExecution, KindUnknownKind, KindUnavailable,
	KindTimeout,
}

// ErrorCode returns the numeric code of a [WireError] kind (1 to 7, in the
// order of the Kind constants), or 0 for an unknown kind.
func ErrorCode(kind string) uint32 {
	for i, k := range kinds {
		if k == kind {
			return uint32(i + 1)
		}
	}
	return 0
}

// NewError builds the [WireError] that reports err for the message with id
// messageID. An error of package messages is classified by its type
// (too_large, unregistered, decode, in that order of precedence); any other
// error is an execution error. Callers with a more specific kind
// (unknown_kind, unavailable) use [NewErrorOf].
func NewError(err error, messageID uint64) *WireError {
	kind := KindExecution
	var tooLarge *messages.PayloadTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		kind = KindTooLarge
	case errors.Is(err, messages.ErrUnregistered):
		kind = KindUnregistered
	case errors.Is(err, messages.ErrDecode):
		kind = KindDecode
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return NewErrorOf(kind, msg, messageID)
}

// NewErrorOf builds a [WireError] of an explicit kind (one of the Kind
// constants) with the text msg for the message with id messageID.
func NewErrorOf(kind, msg string, messageID uint64) *WireError {
	return &WireError{Code: ErrorCode(kind), Kind: kind, Message: msg, MessageId: messageID}
}

// TypeMismatchError reports a wire envelope whose payload is registered,
// but as another type than the one the caller decodes. It matches
// [messages.ErrDecode] with [errors.Is].
type TypeMismatchError struct {
	// Want is the type the caller asked for, WantID its type id (0 when it
	// is not registered).
	Want   reflect.Type
	WantID messages.TypeID
	// Got is the type registered under the envelope's type id GotID.
	Got   reflect.Type
	GotID messages.TypeID
}

// Error implements error.
func (e *TypeMismatchError) Error() string {
	return fmt.Sprintf("wire: payload is %v (type id %v), want %v", e.Got, e.GotID, e.Want)
}

// Is reports whether target is [messages.ErrDecode].
func (e *TypeMismatchError) Is(target error) bool { return target == messages.ErrDecode }
