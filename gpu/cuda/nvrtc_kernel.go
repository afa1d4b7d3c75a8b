package cuda

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/ringactor/ringactor/gpu"
)

// SourceSpec describes a compute kernel written in CUDA C++ and registered
// at run time; [SourceKernel] compiles it into a gpu.KernelSpec.
//
// # Calling convention
//
// The kernel's entry is a __global__ function that Backend.RunPTX launches
// with these parameters, in this order:
//
//   - one device pointer per input, in input order (const T*),
//   - the output's device pointer (T*),
//   - each scalar as a double, in Scalars order (defaults filled in),
//   - the output's element count as an unsigned long long.
//
// The launch is 1-D over the output's elements: enough blocks that every
// element has a thread, so the entry must bound-check its global index
// against the count. For example, with two inputs and one scalar:
//
//	extern "C" __global__ void axpy(const float *x, const float *y, float *out,
//	                                double a, unsigned long long n) {
//		unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
//		if (i < n) out[i] = (float)a * x[i] + y[i];
//	}
//
// [SourceKernel] checks the entry's parameter list in the compiled PTX
// against this convention, so a mismatch is a registration error, not a
// fault on the device.
type SourceSpec struct {
	// Name is the registry key, e.g. "axpy".
	Name string
	// Description is one line for `ringactor kernels` (default: the entry
	// and "CUDA C source").
	Description string
	// Code is the CUDA C++ source.
	Code string
	// Headers maps include names to contents, as in [Source].
	Headers map[string]string
	// Arch and Options are passed to NVRTC as in [Source]; an empty Arch is
	// the device's own target ([Backend.NVRTCArch]) when b has a usable
	// device.
	Arch    string
	Options []string
	// Entry names the __global__ function run for every dtype: its
	// extern "C" name, or a C++ name expression such as "axpy<float>".
	Entry string
	// Entries names the entry per dtype (e.g. F32: "axpy<float>", F64:
	// "axpy<double>"), overriding Entry for those dtypes. Every dtype in
	// DTypes needs an entry from Entries or Entry.
	Entries map[gpu.DType]string
	// DTypes are the element types of input 0 the kernel takes.
	DTypes []gpu.DType
	// Inputs is the number of input buffers (at least 1).
	Inputs int
	// Scalars are the scalar parameters, passed to the entry as doubles.
	Scalars []gpu.ScalarSpec
	// OutShape gives the output shape (and so the launch size) from the
	// input shapes and scalars; nil requires every input to have input 0's
	// shape and gives that shape.
	OutShape func(in []gpu.Shape, scalars []float64) (gpu.Shape, error)
	// Elementwise says that output element i depends on input elements i
	// only, so the orchestrator may split a call into chunks.
	Elementwise bool
	// Cost is the approximate number of operations per output element, for
	// backend selection (0: 1).
	Cost float64
	// CPU is an optional Go implementation, used when no CUDA device is
	// usable (and by the orchestrator's policy for small work). Without it
	// the kernel runs only on a CUDA device, and a call on a machine
	// without one fails with a *gpu.DeviceError (gpu.DeviceUnavailable).
	CPU gpu.KernelFunc
}

// SourceKernel compiles spec's code with NVRTC, now, and returns a
// gpu.KernelSpec to register (gpu.Registry.Register or
// actors.Runtime.RegisterKernel) whose CUDA implementation runs the
// compiled entry on b with [Backend.RunPTX] (see [SourceSpec] for the
// calling convention) and whose CPU implementation is spec.CPU, if any.
// The returned spec is the caller's: fields SourceSpec does not cover
// (OutDType, InputDTypes) may be set before registering it.
//
// Compiling at registration means a source error is reported here, not at
// the first call. Errors:
//   - a malformed spec (no name, code, entry or dtypes, an entry for a dtype
//     not in DTypes, too many parameters, …) or an entry whose parameter
//     list does not follow the calling convention: *gpu.RegistrationError;
//   - a source that does not compile, or an entry that names no function
//     of the source: *gpu.CompilationError (Kernel is spec.Name, Log is
//     NVRTC's log);
//   - NVRTC not available: the *gpu.DeviceError of [LoadNVRTC] — unless
//     spec.CPU is set, in which case the kernel is returned with its CPU
//     implementation only (its Description says so), so that a program
//     with a Go fallback runs on machines without the CUDA toolkit;
//   - ctx ending: ctx.Err(), wrapped.
//
// With a usable device the module is loaded (and its entries resolved)
// at registration, through [Backend.LoadPTX]: in a device epoch if ring
// kernels run, never later beside them. A module the driver refuses is
// then an error of SourceKernel.
//
// b may be on a machine without a GPU: compiling needs only NVRTC, and
// running the CUDA implementation then returns b's DeviceUnavailable
// error (the orchestrator does not choose b there, and uses spec.CPU).
func SourceKernel(ctx context.Context, b *Backend, spec SourceSpec) (*gpu.KernelSpec, error) {
	entries, err := spec.validate(b)
	if err != nil {
		return nil, err
	}
	ks := &gpu.KernelSpec{
		Name: spec.Name, Description: spec.Description, Inputs: spec.Inputs,
		Scalars: slices.Clone(spec.Scalars), DTypes: slices.Clone(spec.DTypes),
		OutShape: spec.OutShape, Elementwise: spec.Elementwise, Cost: spec.Cost, CPU: spec.CPU,
	}
	if ks.OutShape == nil {
		ks.OutShape = sameShapes
	}
	if ks.Description == "" {
		ks.Description = "CUDA C source kernel " + strings.Join(uniqueEntries(entries), ", ")
	}
	exprs := uniqueEntries(entries)
	arch := spec.Arch
	if arch == "" && b != nil && b.Available() == nil {
		// The device's own target (compute_90 on an H100).
		if a, err := b.NVRTCArch(); err == nil {
			arch = a
		}
	}
	c, err := Compile(ctx, Source{
		Name: spec.Name + ".cu", Code: spec.Code, Headers: spec.Headers,
		Arch: arch, Options: spec.Options, NameExpressions: exprs,
	})
	switch {
	case err == nil:
	case errors.Is(err, ErrNoNVRTC) && spec.CPU != nil:
		ks.Description += " (CPU only: CUDA source not compiled, NVRTC not available)"
		return ks, nil
	default:
		var ce *gpu.CompilationError
		if errors.As(err, &ce) {
			return nil, &gpu.CompilationError{Kernel: spec.Name, Log: ce.Log, Err: ce.Err}
		}
		var ae *gpu.ArgumentError
		if errors.As(err, &ae) {
			return nil, &gpu.RegistrationError{Kernel: spec.Name, Reason: ae.Arg + ": " + ae.Reason}
		}
		return nil, err
	}
	lowered := make(map[gpu.DType]string, len(entries))
	for dt, e := range entries {
		name := c.LoweredNames[e]
		if err := checkEntry(c.PTX, name, spec.Inputs, len(spec.Scalars)); err != nil {
			return nil, &gpu.RegistrationError{Kernel: spec.Name, Reason: fmt.Sprintf("entry %q: %v", e, err)}
		}
		lowered[dt] = name
	}
	ptx := c.PTX
	if b.Available() == nil {
		// Load the module now, at registration, not at the first run,
		// which may come while ring kernels run (see Backend.LoadPTX).
		names := make([]string, 0, len(lowered))
		for _, e := range uniqueEntries(entries) {
			names = append(names, c.LoweredNames[e])
		}
		if err := b.LoadPTX(ctx, ptx, names...); err != nil {
			return nil, err
		}
	}
	nIn, nScalars, kernel := spec.Inputs, len(spec.Scalars), spec.Name
	ks.Device = map[string]gpu.KernelFunc{string(gpu.KindCUDA): func(ctx context.Context, in []*gpu.UnifiedBuffer, out *gpu.UnifiedBuffer, scalars []float64) error {
		if len(in) != nIn {
			return &gpu.ArgumentError{Kernel: kernel, Arg: "inputs", Reason: fmt.Sprintf("takes %d inputs, got %d", nIn, len(in)), Err: gpu.ErrInputCount}
		}
		if len(scalars) != nScalars {
			return &gpu.ArgumentError{Kernel: kernel, Arg: "scalars", Reason: fmt.Sprintf("takes %d scalars, got %d", nScalars, len(scalars)), Err: gpu.ErrArgument}
		}
		if out == nil || in[0] == nil {
			return &gpu.ArgumentError{Kernel: kernel, Arg: "buffers", Reason: "nil buffer", Err: gpu.ErrArgument}
		}
		entry, ok := lowered[in[0].DType()]
		if !ok {
			return &gpu.ArgumentError{Kernel: kernel, Arg: "input 0", Reason: fmt.Sprintf("dtype %v not supported", in[0].DType()), Err: gpu.ErrUnsupportedDType}
		}
		return b.RunPTX(ctx, ptx, entry, in, out, scalars)
	}}
	if err := ks.Validate(); err != nil {
		return nil, err
	}
	return ks, nil
}

// validate checks spec and returns the entry (name expression) per dtype.
func (spec *SourceSpec) validate(b *Backend) (map[gpu.DType]string, error) {
	bad := func(format string, args ...any) error {
		return &gpu.RegistrationError{Kernel: spec.Name, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case b == nil:
		return nil, bad("nil CUDA backend")
	case spec.Name == "":
		return nil, bad("empty name")
	case strings.TrimSpace(spec.Code) == "":
		return nil, bad("no CUDA source code")
	case spec.Inputs < 1:
		return nil, bad("a kernel takes at least one input")
	case len(spec.DTypes) == 0:
		return nil, bad("no supported dtypes")
	case spec.Inputs+1+len(spec.Scalars)+1 > MaxKernelArgs:
		return nil, bad("%d inputs and %d scalars make more than %d kernel parameters", spec.Inputs, len(spec.Scalars), MaxKernelArgs)
	}
	entries := make(map[gpu.DType]string, len(spec.DTypes))
	for _, dt := range spec.DTypes {
		if !dt.Valid() {
			return nil, bad("invalid dtype %v", dt)
		}
		if _, dup := entries[dt]; dup {
			return nil, bad("dtype %v listed twice", dt)
		}
		e := spec.Entry
		if pe, ok := spec.Entries[dt]; ok {
			e = pe
		}
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, bad("no entry for dtype %v (set Entry or Entries)", dt)
		}
		entries[dt] = e
	}
	for dt := range spec.Entries {
		if !slices.Contains(spec.DTypes, dt) {
			return nil, bad("entry for dtype %v, which is not in DTypes", dt)
		}
	}
	return entries, nil
}

// uniqueEntries returns the distinct entries, sorted.
func uniqueEntries(entries map[gpu.DType]string) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// sameShapes is the default output shape: every input has input 0's shape.
// (Output shapes are copied into the output buffer; no need to clone.)
func sameShapes(in []gpu.Shape, _ []float64) (gpu.Shape, error) {
	for i, s := range in[1:] {
		if !s.Equal(in[0]) {
			return nil, &gpu.ShapeError{Shape: s.Clone(), Reason: fmt.Sprintf("input %d must have input 0's shape %v", i+1, in[0])}
		}
	}
	return in[0], nil
}

// ptxParam matches one parameter declaration of an entry: its first
// qualifier after .param (the type, for scalar and pointer parameters).
var ptxParam = regexp.MustCompile(`^\s*\.param\s+(\.\w+)`)

// checkEntry finds the .entry name in ptx and checks its parameters against
// the calling convention: inputs+1 64-bit pointers, scalars f64, one u64.
func checkEntry(ptx []byte, name string, inputs, scalars int) error {
	text := string(ptx)
	head := regexp.MustCompile(`\.entry\s+` + regexp.QuoteMeta(name) + `\s*\(`).FindStringIndex(text)
	if head == nil {
		if regexp.MustCompile(`\.func\s+(\([^)]*\)\s*)?` + regexp.QuoteMeta(name) + `\s*\(`).MatchString(text) {
			return errors.New("is a device function, not a __global__ kernel")
		}
		return fmt.Errorf("no .entry %s in the compiled PTX", name)
	}
	rest := text[head[1]:]
	end := strings.IndexByte(rest, ')')
	if end < 0 {
		return fmt.Errorf("unterminated parameter list of .entry %s", name)
	}
	var got []string
	for _, decl := range strings.Split(rest[:end], ",") {
		if strings.TrimSpace(decl) == "" {
			continue
		}
		m := ptxParam.FindStringSubmatch(decl)
		if m == nil {
			got = append(got, strings.TrimSpace(decl))
			continue
		}
		t := m[1]
		if t == ".b64" || t == ".s64" { // the same 8 bytes, whatever the compiler calls them
			t = ".u64"
		}
		got = append(got, t)
	}
	want := make([]string, 0, inputs+scalars+2)
	for range inputs + 1 {
		want = append(want, ".u64")
	}
	for range scalars {
		want = append(want, ".f64")
	}
	want = append(want, ".u64")
	if !slices.Equal(got, want) {
		return fmt.Errorf("parameters (%s) do not follow the calling convention (%s): "+
			"%d input pointers, the output pointer, %d scalars as double, the element count as unsigned long long",
			strings.Join(got, ", "), strings.Join(want, ", "), inputs, scalars)
	}
	return nil
}
