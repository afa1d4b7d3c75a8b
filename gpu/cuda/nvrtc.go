package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// Kernels from CUDA C source are compiled at run time by NVRTC, NVIDIA's
// run-time compiler, into PTX that the driver JIT-compiles for the device,
// or, for a real architecture (sm_XY), into a CUBIN the driver loads as is.
// Like the driver, NVRTC is loaded with dlopen on first use (never linked),
// once per process: a build needs no CUDA SDK, and NVRTC needs no GPU, so
// sources can be compiled, and their errors reported, on any machine that
// has the library.

// NVRTCLibraryEnv is the environment variable that, when set, names the one
// NVRTC library to load (a file name or a path) instead of the default
// candidates.
const NVRTCLibraryEnv = "RINGACTOR_NVRTC_LIBRARY"

// defaultNVRTCLibraries are tried in order when NVRTCLibraryEnv is unset:
// CUDA 13's soname, CUDA 12's, CUDA 11's (11.2 to 11.8 share it), then the
// unversioned development link.
var defaultNVRTCLibraries = []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}

// NVRTCLibraries returns the libraries [LoadNVRTC] tries, in order: the
// value of $RINGACTOR_NVRTC_LIBRARY alone when it is set, else
// libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so.11.2 and libnvrtc.so.
func NVRTCLibraries() []string {
	if p := os.Getenv(NVRTCLibraryEnv); p != "" {
		return []string{p}
	}
	return append([]string(nil), defaultNVRTCLibraries...)
}

// ErrNoNVRTC is the cause of the *gpu.DeviceError (kind
// gpu.DeviceUnavailable) that reports NVRTC cannot be used: no candidate
// library loads, one lacks an entry point, or NVRTC cannot load its
// builtins library. errors.Is matches both it and gpu.ErrDeviceNotAvailable.
var ErrNoNVRTC = driverapi.ErrNoNVRTC

// DefaultArch is the virtual architecture sources are compiled for unless
// [Source].Arch or an architecture option says otherwise, raised to the
// lowest the loaded NVRTC supports ([NVRTC.Compile]; NVRTC 13:
// compute_75). PTX for compute_70 is JIT-compiled forward by the driver
// for sm_70 and every later device (sm_80, sm_90, …). Code for a device
// is compiled for its own capability ([ChooseNVRTCArch]).
const DefaultArch = "compute_70"

// NVRTC result codes this package distinguishes (values of nvrtc.h).
const (
	nvrtcErrorOutOfMemory      = 1
	nvrtcErrorCompilation      = 6
	nvrtcErrorBuiltinOperation = 7
	nvrtcErrorInternal         = 11
)

// NVRTCError is an NVRTC call that returned a status other than
// NVRTC_SUCCESS. It is the cause (Unwrap) of the typed errors [Compile]
// returns, never returned bare.
type NVRTCError struct {
	Call    string // the entry point, e.g. "nvrtcCompileProgram"
	Code    int    // the nvrtcResult
	Message string // nvrtcGetErrorString, e.g. "NVRTC_ERROR_COMPILATION"
}

// Error implements error: "nvrtcCompileProgram: NVRTC_ERROR_COMPILATION (6)".
func (e *NVRTCError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "nvrtcResult"
	}
	return fmt.Sprintf("%s: %s (%d)", e.Call, msg, e.Code)
}

// Source is one CUDA C++ translation unit for [Compile].
type Source struct {
	// Name is the file name NVRTC reports in diagnostics and the kernel
	// name of a *gpu.CompilationError, e.g. "saxpy.cu" ("source.cu" if
	// empty).
	Name string
	// Code is the CUDA C++ source.
	Code string
	// Headers maps include names (as written in #include "…") to their
	// contents.
	Headers map[string]string
	// Arch is the architecture to compile for: a virtual one, e.g.
	// "compute_80" ([DefaultArch] if empty), or a real one, e.g. "sm_90",
	// whose CUBIN [Compiled].CUBIN then holds.
	Arch string
	// Options are further NVRTC options, after the defaults (see
	// [Source.CompileOptions]); e.g. "-DN=4", "--use_fast_math",
	// "-I/usr/include".
	Options []string
	// NameExpressions are names of __global__ functions (or template
	// instantiations such as "scale<float>") whose mangled names
	// [Compiled].LoweredNames should give.
	NameExpressions []string
}

// CompileOptions returns the options NVRTC gets for s: an architecture
// (--gpu-architecture=Arch, or DefaultArch), --std=c++17 and
// --device-as-default-execution-space (functions without __host__ or
// __device__ are device functions), then s.Options. An architecture or
// language-standard option in s.Options replaces the default one.
func (s Source) CompileOptions() []string {
	has := func(prefixes ...string) bool {
		for _, o := range s.Options {
			for _, p := range prefixes {
				if o == p || strings.HasPrefix(o, p+"=") {
					return true
				}
			}
		}
		return false
	}
	opts := make([]string, 0, 3+len(s.Options))
	if !has("-arch", "--gpu-architecture") {
		arch := s.Arch
		if arch == "" {
			arch = DefaultArch
		}
		opts = append(opts, "--gpu-architecture="+arch)
	}
	if !has("-std", "--std") {
		opts = append(opts, "--std=c++17")
	}
	if !has("-default-device", "--device-as-default-execution-space") {
		opts = append(opts, "--device-as-default-execution-space")
	}
	return append(opts, s.Options...)
}

func (s Source) name() string {
	if s.Name == "" {
		return "source.cu"
	}
	return s.Name
}

// validate rejects what cannot be passed to NVRTC.
func (s Source) validate() error {
	bad := func(arg, reason string) error {
		return &gpu.ArgumentError{Kernel: s.name(), Arg: arg, Reason: reason, Err: gpu.ErrArgument}
	}
	if strings.TrimSpace(s.Code) == "" {
		return bad("source", "no code")
	}
	if strings.ContainsRune(s.Code, 0) || strings.ContainsRune(s.Name, 0) {
		return bad("source", "contains a NUL byte")
	}
	for k, v := range s.Headers {
		if k == "" || strings.ContainsRune(k, 0) || strings.ContainsRune(v, 0) {
			return bad("headers", fmt.Sprintf("header %q: empty name or a NUL byte", k))
		}
	}
	for _, o := range s.Options {
		if o == "" || strings.ContainsRune(o, 0) {
			return bad("options", fmt.Sprintf("option %q is empty or contains a NUL byte", o))
		}
	}
	for _, e := range s.NameExpressions {
		if strings.TrimSpace(e) == "" || strings.ContainsRune(e, 0) {
			return bad("name expressions", fmt.Sprintf("%q is empty or contains a NUL byte", e))
		}
	}
	return nil
}

// Compiled is the result of compiling a [Source].
type Compiled struct {
	// PTX is the PTX text (no trailing NUL), for the virtual architecture
	// compiled for; load it with Driver.ModuleLoadData or Backend.RunPTX.
	// A compilation for a real architecture has it when NVRTC keeps it.
	PTX []byte
	// CUBIN is the ELF image of machine code (SASS) of a compilation for a
	// real architecture (sm_XY) with an NVRTC that has nvrtcGetCUBIN (CUDA
	// 11.1+); nil otherwise. The driver loads it without a JIT, on a device
	// of exactly that architecture.
	CUBIN []byte
	// Log is NVRTC's program log: warnings, or empty.
	Log string
	// LoweredNames maps each of the source's NameExpressions to the
	// (mangled) name of its entry in PTX.
	LoweredNames map[string]string
	// Options are the options NVRTC got.
	Options []string
}

// NVRTC is a loaded NVRTC library. Obtain it from [LoadNVRTC]; it is safe
// for concurrent use.
type NVRTC struct {
	lib          *nvrtcLib
	major, minor int
	archs        []int // nvrtcGetSupportedArchs; nil before CUDA 11.2
	cubin        bool  // nvrtcGetCUBIN is there (CUDA 11.1+)
	// sem serialises compilations: one at a time per library, so NVRTC's
	// thread safety (which differs between releases) does not matter, and
	// a caller waiting for its turn can give up when its context ends.
	sem chan struct{}
}

// nvrtcLoader loads NVRTC from the first candidate that works, once.
type nvrtcLoader struct {
	candidates []string
	once       sync.Once
	nv         *NVRTC
	err        error
}

var processNVRTC = sync.OnceValue(func() *nvrtcLoader { return &nvrtcLoader{candidates: NVRTCLibraries()} })

func (l *nvrtcLoader) load() (*NVRTC, error) {
	l.once.Do(func() {
		var reasons []string
		for _, path := range l.candidates {
			lib, reason := openNVRTC(path)
			if lib == nil {
				reasons = append(reasons, reason)
				continue
			}
			major, minor, err := lib.version()
			if err != nil {
				reasons = append(reasons, fmt.Sprintf("%s: %v", lib.path, err))
				continue
			}
			l.nv = &NVRTC{lib: lib, major: major, minor: minor, archs: lib.supportedArchs(), cubin: lib.hasCUBIN(),
				sem: make(chan struct{}, 1)}
			return
		}
		l.err = &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: BackendName,
			Reason: "no NVRTC library loads (" + strings.Join(reasons, "; ") + ")", Err: ErrNoNVRTC}
	})
	return l.nv, l.err
}

// LoadNVRTC loads NVRTC once per process from the first of
// [NVRTCLibraries] that loads and has every entry point the package uses.
// When none does, the error is a *gpu.DeviceError of kind
// gpu.DeviceUnavailable that wraps [ErrNoNVRTC] and gives each
// candidate's dlopen or dlsym message.
func LoadNVRTC() (*NVRTC, error) { return processNVRTC().load() }

// Path returns the file NVRTC was loaded from.
func (n *NVRTC) Path() string { return n.lib.path }

// Version returns NVRTC's version (nvrtcVersion), e.g. 11, 8.
func (n *NVRTC) Version() (major, minor int) { return n.major, n.minor }

// HasCUBIN reports whether this NVRTC gives CUBINs (nvrtcGetCUBINSize and
// nvrtcGetCUBIN, CUDA 11.1+): a compilation for a real architecture then
// fills [Compiled].CUBIN.
func (n *NVRTC) HasCUBIN() bool { return n.cubin }

// Compile compiles src to PTX with the process's NVRTC; see
// [NVRTC.Compile].
func Compile(ctx context.Context, src Source) (*Compiled, error) {
	nv, err := LoadNVRTC()
	if err != nil {
		return nil, err
	}
	return nv.Compile(ctx, src)
}

// Compile compiles src to PTX with the options [Source.CompileOptions]
// gives; a source without Arch is compiled for [DefaultArch], or the
// lowest architecture this NVRTC supports when that is higher. A source
// compiled for a real architecture (Arch "sm_90", or such an option) gets
// its CUBIN too when this NVRTC has nvrtcGetCUBIN ([NVRTC.HasCUBIN]).
//
// Errors:
//   - a source that does not compile (syntax or type errors, a bad option,
//     a name expression that names no __global__ function): a
//     *gpu.CompilationError whose Kernel is the source's name, whose Log is
//     NVRTC's full program log and whose cause is the *[NVRTCError];
//     errors.Is matches gpu.ErrCompilation;
//   - NVRTC missing or unable to load its builtins library: a
//     *gpu.DeviceError (gpu.DeviceUnavailable) wrapping [ErrNoNVRTC];
//   - an empty source, or a NUL byte in it, a header, an option or a name
//     expression: a *gpu.ArgumentError (gpu.ErrArgument);
//   - ctx ending: ctx.Err(), wrapped.
//
// ctx is checked before compiling, while waiting for an earlier
// compilation with this library to finish, and after. NVRTC itself cannot
// be interrupted: when ctx ends during a compilation Compile returns at
// once, and the compilation runs to its end in the background, its result
// discarded.
func (n *NVRTC) Compile(ctx context.Context, src Source) (*Compiled, error) {
	name := src.name()
	ctxErr := func(err error) error { return fmt.Errorf("cuda: compiling %s: %w", name, err) }
	if err := ctx.Err(); err != nil {
		return nil, ctxErr(err)
	}
	if err := src.validate(); err != nil {
		return nil, err
	}
	if src.Arch == "" {
		src.Arch = n.defaultArch()
	}
	opts := src.CompileOptions()
	cubin := n.cubin && realArch(archOption(opts))
	select {
	case n.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxErr(ctx.Err())
	}
	type result struct {
		out nvrtcOutput
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() { <-n.sem }()
		out, err := n.lib.compile(name, src.Code, src.Headers, opts, src.NameExpressions, cubin)
		done <- result{out, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		return nil, ctxErr(ctx.Err())
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxErr(err)
	}
	if r.err != nil {
		return nil, n.compileError(name, r.out.log, r.err)
	}
	return &Compiled{PTX: r.out.ptx, CUBIN: r.out.cubin, Log: r.out.log, LoweredNames: r.out.lowered, Options: opts}, nil
}

// archOption returns the architecture the last -arch or
// --gpu-architecture option of opts names, as "-arch=sm_90" or as
// "-arch", "sm_90" ("" if none).
func archOption(opts []string) string {
	arch := ""
	for i, o := range opts {
		switch {
		case (o == "-arch" || o == "--gpu-architecture") && i+1 < len(opts):
			arch = opts[i+1]
		case strings.HasPrefix(o, "-arch="):
			arch = strings.TrimPrefix(o, "-arch=")
		case strings.HasPrefix(o, "--gpu-architecture="):
			arch = strings.TrimPrefix(o, "--gpu-architecture=")
		}
	}
	return arch
}

// realArch reports whether arch is a real architecture (sm_90, sm_90a),
// whose compilation has machine code, not a virtual one (compute_90).
func realArch(arch string) bool { return strings.HasPrefix(arch, "sm_") }

// compileError classifies a failed NVRTC call.
func (n *NVRTC) compileError(name, log string, err error) error {
	var ne *NVRTCError
	if errors.As(err, &ne) {
		switch ne.Code {
		case nvrtcErrorOutOfMemory:
			return &gpu.MemoryError{Op: "nvrtc: compiling " + name, Reason: "out of host memory", Err: ne}
		case nvrtcErrorBuiltinOperation:
			return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: BackendName,
				Reason: fmt.Sprintf("%s cannot run (is its libnvrtc-builtins library installed?): %v", n.lib.path, ne),
				Err:    ErrNoNVRTC}
		}
	}
	if log == "" {
		log = err.Error()
	}
	return &gpu.CompilationError{Kernel: name, Log: log, Err: err}
}
