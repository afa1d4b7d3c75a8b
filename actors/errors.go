package actors

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/ringactor/ringactor/compute"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/lifecycle"
)

// Errors of the runtime API. Each is matched with errors.Is; the typed
// errors below carry the details and match the sentinels too.
var (
	// ErrUnknownKernel: no ring kernel with that id is registered in this
	// runtime, or no compute kernel of that name (it is gpu.ErrUnknownKernel).
	ErrUnknownKernel = gpu.ErrUnknownKernel
	// ErrDuplicateKernel: a kernel with that id is already launched.
	ErrDuplicateKernel = errors.New("ringactor: duplicate kernel id")
	// ErrNotLaunched: the kernel exists but was never launched.
	ErrNotLaunched = errors.New("ringactor: kernel not launched")
	// ErrTerminated: the kernel is terminated (or terminating); it takes no
	// messages, and messages it held when it stopped without draining get
	// this error.
	ErrTerminated = errors.New("ringactor: kernel terminated")
	// ErrEndOfStream: the kernel has ended and its receive stream is empty:
	// no outcome will come any more. It is what Receive returns at the end,
	// and it matches ErrTerminated too; test for it (not ErrTerminated,
	// which the outcome of a message the terminate did not run also
	// matches) to tell the end of the stream from one message's error.
	ErrEndOfStream = fmt.Errorf("%w: end of the receive stream", ErrTerminated)
	// ErrWrongMessageType: the message or reply type does not match the kernel.
	ErrWrongMessageType = errors.New("ringactor: wrong message type")
	// ErrNilMessage: a nil pointer, map, slice, func, chan or interface was sent.
	ErrNilMessage = errors.New("ringactor: nil message")
	// ErrRingFull: the kernel's ring and overflow are full and its
	// backpressure policy is Reject, or the message was posted to the
	// kernel's PID (a Proto.Actor Send or Request cannot wait for room).
	ErrRingFull = errors.New("ringactor: ring full")
	// ErrNotActive: a Request's context ended while the kernel was not
	// active (launched and never activated, or deactivated): its gate was
	// closed, so the message waited in its queue. The error matches the
	// context's error (context.DeadlineExceeded, context.Canceled) too.
	ErrNotActive = errors.New("ringactor: kernel not active")
	// ErrDropped: the message was evicted by the DropOldest policy.
	ErrDropped = errors.New("ringactor: message dropped")
	// ErrRuntimeClosed: the runtime was closed (it is compute.ErrClosed:
	// the runtime's compute orchestrator closes with it).
	ErrRuntimeClosed = compute.ErrClosed
	// ErrInvalidKernel: a kernel definition is malformed (empty id, no
	// handler, a handler factory that returns nil or panics at launch).
	ErrInvalidKernel = errors.New("ringactor: invalid kernel definition")
	// ErrInternalEvent: a lifecycle.Command carried an event that only the
	// kernel itself raises (Fault, Restart); it is refused and changes nothing.
	ErrInternalEvent = errors.New("ringactor: internal lifecycle event")
)

// InternalEventError reports a lifecycle.Command with an event that only the
// kernel raises itself. It matches ErrInternalEvent.
type InternalEventError struct {
	Event lifecycle.Event
}

// Error implements error.
func (e *InternalEventError) Error() string {
	return fmt.Sprintf("ringactor: lifecycle event %q is internal to a kernel and cannot be sent to it", e.Event)
}

// Is matches ErrInternalEvent.
func (e *InternalEventError) Is(target error) bool { return target == ErrInternalEvent }

// KernelError names the kernel an error is about: a ring kernel, or a
// compute kernel of the runtime's orchestrator (it is compute.KernelError).
type KernelError = compute.KernelError

func kernelErr(id string, err error) error { return &KernelError{Kernel: id, Err: err} }

// WrongMessageTypeError says which type a kernel wanted and which it got.
type WrongMessageTypeError struct {
	Kernel string
	Role   string // "message", "reply" or RoleChainReply
	Want   reflect.Type
	Got    reflect.Type
}

// RoleChainReply is the Role of a *WrongMessageTypeError from a typed
// handle on the head of a chain whose last kernel replies another type
// than the handle's.
const RoleChainReply = "chain reply"

// Error implements error.
func (e *WrongMessageTypeError) Error() string {
	if e.Role == RoleChainReply {
		return fmt.Sprintf("ringactor: kernel %q routes downstream and its chain's last kernel replies %v, not the handle's %v (actors.Request[%v] or actors.RequestAsync[%v] take it)", e.Kernel, e.Want, e.Got, e.Want, e.Want)
	}
	return fmt.Sprintf("ringactor: kernel %q takes %s type %v, got %v", e.Kernel, e.Role, e.Want, e.Got)
}

// Is matches ErrWrongMessageType.
func (e *WrongMessageTypeError) Is(target error) bool { return target == ErrWrongMessageType }

// BackpressureError reports a message refused or evicted by a kernel's
// admission policy.
type BackpressureError struct {
	Kernel    string
	MessageID uint64
	Policy    Backpressure
	Err       error // ErrRingFull or ErrDropped
}

// Error implements error.
func (e *BackpressureError) Error() string {
	return fmt.Sprintf("ringactor: kernel %q message %d: %v (policy %v)", e.Kernel, e.MessageID, e.Err, e.Policy)
}

// Unwrap returns ErrRingFull or ErrDropped.
func (e *BackpressureError) Unwrap() error { return e.Err }

// notActiveError is the end of a wait (err, the context's error) for a
// kernel whose gate was closed: it says why the message was not handled. It
// matches err and ErrNotActive.
type notActiveError struct {
	err   error
	state lifecycle.State
}

// Error implements error.
func (e *notActiveError) Error() string {
	why := "it was launched and never activated"
	if e.state == lifecycle.Deactivated {
		why = "it is deactivated"
	}
	return fmt.Sprintf("%v (kernel is not active: the message waited in its queue; %s)", e.err, why)
}

// Unwrap returns the context's error and ErrNotActive.
func (e *notActiveError) Unwrap() []error { return []error{e.err, ErrNotActive} }

// waitErr is the error of a wait for the kernel id that ctxErr, the
// context's error, ended: it says so when the kernel was in state st, one
// that holds messages without handling them (Launched, Deactivated).
func waitErr(id string, st lifecycle.State, ctxErr error) error {
	if st == lifecycle.Launched || st == lifecycle.Deactivated {
		return kernelErr(id, &notActiveError{err: ctxErr, state: st})
	}
	return kernelErr(id, ctxErr)
}
