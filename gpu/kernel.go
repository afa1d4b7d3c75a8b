package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
)

// KernelFunc is a kernel's implementation on one backend: it reads inputs and
// writes out, whose dtype and shape the orchestrator has already checked
// against the spec. For the CPU backend the buffers' host memory is the
// device memory.
type KernelFunc func(ctx context.Context, in []*UnifiedBuffer, out *UnifiedBuffer, scalars []float64) error

// ScalarSpec names one scalar parameter of a kernel.
type ScalarSpec struct {
	Name    string
	Default float64
}

// KernelSpec describes a compute kernel: its parameters, the element types
// and backends it supports, how its output shape follows from its inputs,
// and its implementations.
type KernelSpec struct {
	// Name is the registry key, e.g. "add".
	Name string
	// Description is one line for `ringactor kernels`.
	Description string
	// Inputs is the number of input buffers.
	Inputs int
	// Scalars are the scalar parameters, in the order Execute takes them.
	Scalars []ScalarSpec
	// DTypes are the element types of the primary input (input 0).
	DTypes []DType
	// InputDTypes gives the dtype every input must have for a primary dtype
	// (nil: every input has the primary dtype).
	InputDTypes func(primary DType) []DType
	// OutDType gives the output dtype for a primary dtype (nil: the same).
	OutDType func(primary DType) DType
	// OutShape checks the input shapes and scalars and returns the output
	// shape; errors are *ShapeError or *ArgumentError. The input shapes are
	// the buffers' own (read-only); the result may alias one of them.
	OutShape func(in []Shape, scalars []float64) (Shape, error)
	// Elementwise kernels compute output element i from input elements i
	// only: the orchestrator may split them into chunks (Map, OOM recovery).
	Elementwise bool
	// Cost is the approximate number of operations per output element, for
	// backend selection (default 1).
	Cost float64
	// CPU is the implementation on the CPU backend.
	CPU KernelFunc
	// Device holds implementations for device backends by backend kind
	// (e.g. "cuda"); a device backend may also carry its own.
	Device map[string]KernelFunc
}

// Validate checks a spec for registration.
func (s *KernelSpec) Validate() error {
	bad := func(reason string) error { return &RegistrationError{Kernel: s.Name, Reason: reason} }
	switch {
	case s == nil:
		return &RegistrationError{Reason: "nil spec"}
	case s.Name == "":
		return bad("empty name")
	case s.Inputs < 1:
		return bad("a kernel takes at least one input")
	case len(s.DTypes) == 0:
		return bad("no supported dtypes")
	case s.OutShape == nil:
		return bad("no output shape function")
	case s.CPU == nil && len(s.Device) == 0:
		return bad("no implementation")
	case s.Cost < 0 || math.IsNaN(s.Cost) || math.IsInf(s.Cost, 0):
		return bad("cost must be a finite number ≥ 0")
	}
	for _, d := range s.DTypes {
		if !d.Valid() {
			return bad(fmt.Sprintf("invalid dtype %v", d))
		}
	}
	seen := map[string]bool{}
	for _, sc := range s.Scalars {
		if sc.Name == "" || seen[sc.Name] {
			return bad(fmt.Sprintf("scalar name %q empty or repeated", sc.Name))
		}
		seen[sc.Name] = true
	}
	return nil
}

// Supports reports whether the kernel takes dt as its primary dtype.
func (s *KernelSpec) Supports(dt DType) bool { return slices.Contains(s.DTypes, dt) }

// InputDType returns the dtype input i must have for primary dtype dt.
func (s *KernelSpec) InputDType(dt DType, i int) DType {
	if s.InputDTypes == nil {
		return dt
	}
	return s.InputDTypes(dt)[i]
}

// OutputDType returns the output dtype for primary dtype dt.
func (s *KernelSpec) OutputDType(dt DType) DType {
	if s.OutDType == nil {
		return dt
	}
	return s.OutDType(dt)
}

// ResolveScalars fills defaults for scalars not given; more scalars than the
// spec names is an *ArgumentError.
func (s *KernelSpec) ResolveScalars(given []float64, dst []float64) ([]float64, error) {
	if len(given) > len(s.Scalars) {
		return nil, &ArgumentError{Kernel: s.Name, Arg: "scalars", Reason: fmt.Sprintf("takes %d scalars, got %d", len(s.Scalars), len(given)), Err: ErrArgument}
	}
	dst = append(dst[:0], given...)
	for _, sc := range s.Scalars[len(given):] {
		dst = append(dst, sc.Default)
	}
	return dst, nil
}

// Errors of bad kernel calls and registrations.
var (
	// ErrArgument: a kernel call's arguments do not fit the kernel.
	ErrArgument = errors.New("gpu: invalid kernel argument")
	// ErrUnsupportedDType: the kernel has no implementation for that dtype.
	ErrUnsupportedDType = errors.New("gpu: dtype not supported by kernel")
	// ErrInputCount: the wrong number of input buffers.
	ErrInputCount = errors.New("gpu: wrong number of inputs")
	// ErrDTypeMismatch: an input or output buffer has the wrong dtype.
	ErrDTypeMismatch = errors.New("gpu: buffer of the wrong dtype")
	// ErrRegistration: a kernel spec was rejected.
	ErrRegistration = errors.New("gpu: kernel registration rejected")
	// ErrUnknownKernel: no kernel of that name is registered.
	ErrUnknownKernel = errors.New("unknown kernel")
)

// ArgumentError reports a call whose arguments do not fit the kernel.
type ArgumentError struct {
	Kernel string
	Arg    string // "inputs", "input 1", "output", "scalars", "radius", …
	Reason string
	Err    error // ErrArgument, ErrUnsupportedDType, ErrInputCount, ErrDTypeMismatch, ErrShape…
}

// Error implements error.
func (e *ArgumentError) Error() string {
	return fmt.Sprintf("kernel %q: %s: %s", e.Kernel, e.Arg, e.Reason)
}

// Unwrap returns the class of the error.
func (e *ArgumentError) Unwrap() error { return e.Err }

// RegistrationError reports a rejected kernel spec.
type RegistrationError struct {
	Kernel string
	Reason string
}

// Error implements error.
func (e *RegistrationError) Error() string {
	return fmt.Sprintf("gpu: cannot register kernel %q: %s", e.Kernel, e.Reason)
}

// Is matches ErrRegistration.
func (e *RegistrationError) Is(target error) bool { return target == ErrRegistration }
