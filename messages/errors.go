package messages

import (
	"errors"
	"fmt"
	"reflect"
)

// ErrNilMessage is returned when a nil message is marshalled, wrapped in an
// envelope or looked up.
var ErrNilMessage = errors.New("messages: nil message")

// ErrUnregistered is matched (with [errors.Is]) by [*UnregisteredTypeError]
// and [*UnknownTypeIDError].
var ErrUnregistered = errors.New("messages: unregistered type")

// ErrDecode is matched (with [errors.Is]) by every [*DecodeError].
var ErrDecode = errors.New("messages: decode failed")

// UnregisteredTypeError reports a Go type that has no registered type id.
type UnregisteredTypeError struct {
	// Type is the unregistered Go type.
	Type reflect.Type
}

// Error implements error.
func (e *UnregisteredTypeError) Error() string {
	return fmt.Sprintf("messages: type %v is not registered (call messages.Register[%v](name))", e.Type, e.Type)
}

// Is reports whether target is [ErrUnregistered].
func (e *UnregisteredTypeError) Is(target error) bool { return target == ErrUnregistered }

// UnknownTypeIDError reports a type id that no registered type has.
type UnknownTypeIDError struct {
	// ID is the unknown type id.
	ID TypeID
}

// Error implements error.
func (e *UnknownTypeIDError) Error() string {
	return fmt.Sprintf("messages: unknown type id %v (no type is registered under it)", e.ID)
}

// Is reports whether target is [ErrUnregistered].
func (e *UnknownTypeIDError) Is(target error) bool { return target == ErrUnregistered }

// DuplicateTypeError reports a registration that conflicts with an earlier
// one: the name is taken by another type, the type is registered under
// another name, or (Collision) the name hashes to the id of another name.
type DuplicateTypeError struct {
	// Name is the name passed to the failed registration.
	Name string
	// ExistingName is the name of the earlier, conflicting registration.
	ExistingName string
	// Existing is the type of the earlier, conflicting registration.
	Existing reflect.Type
	// New is the type passed to the failed registration.
	New reflect.Type
	// Collision is true when Name differs from ExistingName but both hash to
	// the same type id.
	Collision bool
}

// Error implements error.
func (e *DuplicateTypeError) Error() string {
	switch {
	case e.Collision:
		return fmt.Sprintf("messages: type id collision: name %q (type %v) hashes to %v, the id of name %q (type %v); choose another name",
			e.Name, e.New, typeIDOf(e.Name), e.ExistingName, e.Existing)
	case e.Existing == e.New:
		return fmt.Sprintf("messages: type %v is already registered as %q, cannot register it again as %q",
			e.New, e.ExistingName, e.Name)
	default:
		return fmt.Sprintf("messages: name %q is already registered for type %v, cannot register it for type %v",
			e.Name, e.Existing, e.New)
	}
}

// InvalidTypeError reports a type that cannot be registered as a message
// type (an interface, func, chan or unsafe pointer type).
type InvalidTypeError struct {
	// Type is the rejected type.
	Type reflect.Type
	// Reason says why it was rejected.
	Reason string
}

// Error implements error.
func (e *InvalidTypeError) Error() string {
	return fmt.Sprintf("messages: cannot register type %v: %s", e.Type, e.Reason)
}

// DecodeError reports input that could not be decoded. It wraps the cause
// and matches [ErrDecode] with [errors.Is].
type DecodeError struct {
	// ID is the type id being decoded, or 0 when it is not known (yet).
	ID TypeID
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *DecodeError) Error() string {
	if e.ID == 0 {
		return fmt.Sprintf("messages: decode failed: %v", e.Err)
	}
	return fmt.Sprintf("messages: decode failed for type id %v: %v", e.ID, e.Err)
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrDecode].
func (e *DecodeError) Is(target error) bool { return target == ErrDecode }

// PayloadTooLargeError reports a payload bigger than [MaxPayloadSize].
type PayloadTooLargeError struct {
	// Size is the size of the payload in bytes.
	Size int
	// Max is the limit it exceeds.
	Max int
}

// Error implements error.
func (e *PayloadTooLargeError) Error() string {
	return fmt.Sprintf("messages: payload of %d bytes exceeds the maximum of %d bytes", e.Size, e.Max)
}
