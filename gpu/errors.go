package gpu

import (
	"errors"
	"fmt"
)

// The error hierarchy of compute failures. Every concrete error below is
// errors.Is-equal to its class sentinels, so callers can match a whole class:
//
//	ErrCompute
//	├── ErrCompilation      (*CompilationError)
//	├── ErrDevice           (*DeviceError)
//	│   ├── ErrOutOfMemory
//	│   ├── ErrDeviceNotAvailable
//	│   └── ErrDeviceCapacity
//	├── ErrMemory           (*MemoryError)
//	└── ErrExecution        (*ExecutionError)
var (
	ErrCompute            = errors.New("compute error")
	ErrCompilation        = errors.New("compilation error")
	ErrDevice             = errors.New("device error")
	ErrOutOfMemory        = errors.New("out of device memory")
	ErrDeviceNotAvailable = errors.New("device not available")
	// ErrDeviceCapacity: the device holds no more of what was asked for —
	// its mailbox table is full, or its resident grids are used up — and
	// waiting would not help (on a GPU such a launch would wait forever).
	ErrDeviceCapacity = errors.New("device capacity reached")
	ErrMemory         = errors.New("memory error")
	ErrExecution      = errors.New("execution error")
)

// IsTransient reports whether err (or an error it wraps) says that retrying
// the same work may succeed.
func IsTransient(err error) bool {
	var t interface{ Transient() bool }
	return errors.As(err, &t) && t.Transient()
}

// CompilationError reports a kernel that failed to compile; never transient.
type CompilationError struct {
	Kernel string
	Log    string
	Err    error
}

// Error implements error.
func (e *CompilationError) Error() string {
	return fmt.Sprintf("compilation error: kernel %q: %v\n%s", e.Kernel, e.Err, e.Log)
}

// Unwrap returns the cause.
func (e *CompilationError) Unwrap() error { return e.Err }

// Is matches ErrCompilation and ErrCompute.
func (e *CompilationError) Is(target error) bool {
	return target == ErrCompilation || target == ErrCompute
}

// Transient is false: compiling again gives the same result.
func (e *CompilationError) Transient() bool { return false }

// DeviceKind says which device failure a DeviceError is.
type DeviceKind uint8

// Device failure kinds.
const (
	DeviceFailed        DeviceKind = iota // the device or driver failed (lost, reset, launch failure)
	DeviceOutOfMemory                     // an allocation did not fit
	DeviceUnavailable                     // no usable device: no driver, no device, or disabled
	DeviceBusyTransient                   // a transient condition (busy, not ready); retry may succeed
	DeviceCapacity                        // a limit of the device is reached (mailbox table, resident grids); matches ErrDeviceCapacity
)

// DeviceError reports a failure of a device or its driver.
type DeviceError struct {
	Kind    DeviceKind
	Backend string
	Device  int
	Reason  string
	Err     error
}

// Error implements error.
func (e *DeviceError) Error() string {
	what := map[DeviceKind]string{
		DeviceFailed:        "device error",
		DeviceOutOfMemory:   "out of device memory",
		DeviceUnavailable:   "device not available",
		DeviceBusyTransient: "device busy",
		DeviceCapacity:      "device capacity reached",
	}[e.Kind]
	s := fmt.Sprintf("%s: %s device %d", what, e.Backend, e.Device)
	if e.Kind == DeviceUnavailable { // about the backend as a whole
		s = fmt.Sprintf("%s: %s", what, e.Backend)
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *DeviceError) Unwrap() error { return e.Err }

// Is matches ErrDevice, ErrCompute and, by kind, ErrOutOfMemory,
// ErrDeviceNotAvailable or ErrDeviceCapacity.
func (e *DeviceError) Is(target error) bool {
	switch target {
	case ErrDevice, ErrCompute:
		return true
	case ErrOutOfMemory:
		return e.Kind == DeviceOutOfMemory
	case ErrDeviceNotAvailable:
		return e.Kind == DeviceUnavailable
	case ErrDeviceCapacity:
		return e.Kind == DeviceCapacity
	}
	return false
}

// Transient is true for busy conditions only.
func (e *DeviceError) Transient() bool { return e.Kind == DeviceBusyTransient }

// MemoryError reports a host-side buffer problem: a freed buffer, a size or
// dtype that does not match, a failed host allocation.
type MemoryError struct {
	Op     string
	Reason string
	Err    error
}

// Error implements error.
func (e *MemoryError) Error() string {
	s := "memory error: " + e.Op + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *MemoryError) Unwrap() error { return e.Err }

// Is matches ErrMemory and ErrCompute.
func (e *MemoryError) Is(target error) bool { return target == ErrMemory || target == ErrCompute }

// Transient is false.
func (e *MemoryError) Transient() bool { return false }

// ExecutionError reports a kernel that failed while handling one message or
// running one launch: its handler returned an error or panicked.
type ExecutionError struct {
	Kernel    string
	MessageID uint64
	Err       error  // the handler's error, or a description of the panic
	Panic     any    // the recovered panic value; nil when the handler returned an error
	Stack     []byte // the panicking goroutine's stack; nil when the handler returned an error
}

// Error implements error.
func (e *ExecutionError) Error() string {
	if e.Panic != nil {
		return fmt.Sprintf("execution error: kernel %q message %d: handler panicked: %v", e.Kernel, e.MessageID, e.Panic)
	}
	return fmt.Sprintf("execution error: kernel %q message %d: %v", e.Kernel, e.MessageID, e.Err)
}

// Unwrap returns the handler's error.
func (e *ExecutionError) Unwrap() error { return e.Err }

// Is matches ErrExecution and ErrCompute.
func (e *ExecutionError) Is(target error) bool { return target == ErrExecution || target == ErrCompute }

// Transient is false: the same message would fail the same way. A
// transient cause reports itself through Unwrap.
func (e *ExecutionError) Transient() bool { return false }
