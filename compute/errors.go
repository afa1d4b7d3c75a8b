package compute

import (
	"errors"
	"fmt"
)

// ErrClosed: the orchestrator (or the actors.Runtime holding it) was closed.
// actors.ErrRuntimeClosed is the same error.
var ErrClosed = errors.New("ringactor: runtime closed")

// KernelError names the kernel an error is about (a compute kernel here; a
// ring kernel in package actors, whose KernelError is this type).
type KernelError struct {
	Kernel string
	Err    error
}

// Error implements error.
func (e *KernelError) Error() string { return fmt.Sprintf("kernel %q: %v", e.Kernel, e.Err) }

// Unwrap returns the cause.
func (e *KernelError) Unwrap() error { return e.Err }

func kernelErr(id string, err error) error { return &KernelError{Kernel: id, Err: err} }
