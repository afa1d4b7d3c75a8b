//go:build linux && cgo

package hostsim

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

typedef int (*rc_hs_program_fn)(unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, size_t, const uint64_t *, int);

static int rc_hs_call_program(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			      size_t smem, const uint64_t *args, int nargs) {
	return ((rc_hs_program_fn)fn)(gx, gy, gz, bx, by, bz, smem, args, nargs);
}

static const char *rc_hs_call_entry(void *fn) { return ((const char *(*)(void))fn)(); }
static unsigned long long rc_hs_call_u64(void *fn) { return ((unsigned long long (*)(void))fn)(); }

static void *rc_hs_dlopen(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static const char *rc_hs_dlerror(void) { const char *e = dlerror(); return e ? e : "unknown dlopen error"; }
*/
import "C"

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
)

// HostCompilerEnv names the environment variable that chooses the C++
// compiler the simulated device builds user programs with (default g++).
const HostCompilerEnv = "RINGACTOR_HOST_CXX"

// CacheDirEnv names the environment variable that chooses where built
// programs are cached (default: ringactor/hostsim under the user's cache
// directory, or the temporary directory).
const CacheDirEnv = "RINGACTOR_HOSTSIM_CACHE"

// ErrNoHostCompiler is the cause of the *gpu.DeviceError (kind
// gpu.DeviceUnavailable) BuildProgram returns when no C++ compiler can be
// run: the simulated device cannot run a user's device ring kernel without
// one, and refuses it with this error.
var ErrNoHostCompiler = errors.New("hostsim: the simulated device needs a C++20 compiler (g++) to run a user's device ring kernel")

// hostFlags are the flags of a program's host build: the same float
// semantics as the device build (no contraction into fma: NVRTC gets
// --fmad=false), position-independent, exporting only the launch entry.
// -Bsymbolic binds the library's references to its own definitions (the
// executable may define the same vague-linkage symbols: libstdc++'s
// templates are not hidden).
var hostFlags = []string{"-std=c++20", "-O2", "-fPIC", "-shared", "-pthread", "-ffp-contract=off", "-fvisibility=hidden",
	"-Wl,-Bsymbolic", "-x", "c++"}

// ErrKernelFault is the error of a launch whose kernel called __trap(): the
// simulated device's model of a device fault (a trap or an illegal address
// on a GPU, which leaves the context unusable).
var ErrKernelFault = errors.New("hostsim: the kernel trapped (a device fault)")

// Program is a user's device ring program built for the host: a shared
// library, loaded once per process and never unloaded, whose entry the
// simulated device launches like a kernel (see Device.LaunchProgram).
type Program struct {
	entry     string
	path      string
	launch    unsafe.Pointer
	gridEntry string         // the program's persistent grid of mailboxes ("" when the library has none)
	grid      unsafe.Pointer // its launch
	reads     unsafe.Pointer // rc_hs_mapped_reads (nil in a library built before it)
}

// MappedReads is how many loads of mapped host memory (the system-scope
// loads of ring_loop.cuh: each a round trip over the host link on a GPU)
// the program's launches have made in this process, summed over its
// grids, blocks and launches; 0 for a library without the counter.
func (p *Program) MappedReads() uint64 {
	if p == nil || p.reads == nil {
		return 0
	}
	return uint64(C.rc_hs_call_u64(p.reads))
}

// GridEntry is the __global__ entry of the program's persistent grid of
// mailboxes ("" when the library has none).
func (p *Program) GridEntry() string { return p.gridEntry }

// Entry is the program's __global__ entry name.
func (p *Program) Entry() string { return p.entry }

// Path is the shared library's file.
func (p *Program) Path() string { return p.path }

type buildResult struct {
	done chan struct{}
	p    *Program
	err  error
}

var (
	buildsMu sync.Mutex
	builds   = map[[32]byte]*buildResult{}
)

// BuildProgram compiles source (a whole translation unit that includes
// host_shim.h's text and defines rc_hs_program_launch, as gpu/cuda
// generates it) with the host compiler into a shared library and loads it.
// Libraries are cached on disk by the source's hash and each source is
// built once per process: a failure is remembered and returned again, never
// retried. A source that does not compile is a *gpu.CompilationError with
// the compiler's output; no compiler is a *gpu.DeviceError wrapping
// ErrNoHostCompiler. ctx bounds the wait for a compilation.
func BuildProgram(ctx context.Context, name, source string) (*Program, error) {
	key := programKey(source)
	buildsMu.Lock()
	r, ok := builds[key]
	if !ok {
		r = &buildResult{done: make(chan struct{})}
		builds[key] = r
		go func() {
			r.p, r.err = build(name, source, key)
			if r.err != nil && errors.Is(r.err, ErrNoHostCompiler) {
				// A compiler installed later may serve a later call.
				buildsMu.Lock()
				delete(builds, key)
				buildsMu.Unlock()
			}
			close(r.done)
		}()
	}
	buildsMu.Unlock()
	select {
	case <-r.done:
		return r.p, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("hostsim: building %s: %w", name, ctx.Err())
	}
}

// CachedProgram says where BuildProgram caches the library built from
// source (the file in the cache directory) and whether it is built already:
// loaded in this process, or in the cache. When it is not, BuildProgram
// runs the host compiler (seconds).
func CachedProgram(source string) (path string, built bool) {
	key := programKey(source)
	path = filepath.Join(cacheDir(), hex.EncodeToString(key[:])+".so")
	buildsMu.Lock()
	r, ok := builds[key]
	buildsMu.Unlock()
	if ok {
		select {
		case <-r.done:
			if r.err == nil {
				return path, true
			}
		default:
		}
	}
	_, err := os.Stat(path)
	return path, err == nil
}

// programKey is the cache key of source: its hash with the host flags,
// which shape the library too.
func programKey(source string) [32]byte {
	return sha256.Sum256([]byte(strings.Join(hostFlags, " ") + "\n" + source))
}

func cacheDir() string {
	if d := os.Getenv(CacheDirEnv); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ringactor", "hostsim")
	}
	return filepath.Join(os.TempDir(), "ringactor-hostsim")
}

func build(name, source string, key [32]byte) (*Program, error) {
	cxx := os.Getenv(HostCompilerEnv)
	if cxx == "" {
		cxx = "g++"
	}
	path, err := exec.LookPath(cxx)
	if err != nil {
		return nil, &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda:sim",
			Reason: fmt.Sprintf("no host compiler %q: %v", cxx, err), Err: ErrNoHostCompiler}
	}
	dir := cacheDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda:sim", Reason: "program cache: " + err.Error(), Err: err}
	}
	stem := filepath.Join(dir, hex.EncodeToString(key[:]))
	lib := stem + ".so"
	if _, err := os.Stat(lib); err != nil {
		if err := os.WriteFile(stem+".cc", []byte(source), 0o644); err != nil {
			return nil, &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda:sim", Reason: "program cache: " + err.Error(), Err: err}
		}
		tmp, err := os.CreateTemp(dir, "build-*.so")
		if err != nil {
			return nil, &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda:sim", Reason: "program cache: " + err.Error(), Err: err}
		}
		tmp.Close()
		args := append(append([]string(nil), hostFlags...), stem+".cc", "-o", tmp.Name())
		out, err := exec.Command(path, args...).CombinedOutput()
		if err != nil {
			os.Remove(tmp.Name())
			return nil, &gpu.CompilationError{Kernel: name, Log: string(out), Err: fmt.Errorf("hostsim: %s %v: %w", cxx, args, err)}
		}
		if err := os.Rename(tmp.Name(), lib); err != nil {
			os.Remove(tmp.Name())
			return nil, &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda:sim", Reason: "program cache: " + err.Error(), Err: err}
		}
	}
	return load(lib)
}

func load(lib string) (*Program, error) {
	cpath := C.CString(lib)
	defer C.free(unsafe.Pointer(cpath))
	h := C.rc_hs_dlopen(cpath)
	if h == nil {
		return nil, fmt.Errorf("hostsim: loading %s: %s: %w", lib, C.GoString(C.rc_hs_dlerror()), ErrUnknownKernel)
	}
	sym := func(n string) unsafe.Pointer {
		cn := C.CString(n)
		defer C.free(unsafe.Pointer(cn))
		return C.dlsym(h, cn)
	}
	launch, entry := sym("rc_hs_program_launch"), sym("rc_hs_program_entry")
	if launch == nil || entry == nil {
		return nil, fmt.Errorf("hostsim: %s lacks rc_hs_program_launch or rc_hs_program_entry: %w", lib, ErrUnknownKernel)
	}
	p := &Program{entry: C.GoString(C.rc_hs_call_entry(entry)), path: lib, launch: launch, reads: sym("rc_hs_mapped_reads")}
	if grid, gentry := sym("rc_hs_grid_launch"), sym("rc_hs_grid_entry"); grid != nil && gentry != nil {
		p.grid, p.gridEntry = grid, C.GoString(C.rc_hs_call_entry(gentry))
	}
	return p, nil
}

// LaunchGrid runs program p's persistent grid of mailboxes: blocks
// blocks of block threads, all at once (they wait for each other, as the
// blocks of a resident grid may), with smem bytes of dynamic shared
// memory per block. It returns when every block has left the loop.
func (d *Device) LaunchGrid(p *Program, blocks uint32, block [3]uint32, smem uint32, args []uint64) error {
	if p == nil || p.grid == nil {
		return fmt.Errorf("%w: no grid program", ErrUnknownKernel)
	}
	if blocks == 0 || block[0]*block[1]*block[2] == 0 || uint64(block[0])*uint64(block[1])*uint64(block[2]) > 1024 {
		return fmt.Errorf("%w: %q grid %d block %v", ErrBadLaunch, p.gridEntry, blocks, block)
	}
	var ap *C.uint64_t
	if len(args) > 0 {
		ap = (*C.uint64_t)(unsafe.Pointer(&args[0]))
	}
	d.mu.Lock()
	d.launches[p.gridEntry]++
	d.mu.Unlock()
	rc := C.rc_hs_call_program(p.grid, C.uint(blocks), 1, 1,
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.size_t(smem), ap, C.int(len(args)))
	switch rc {
	case 0:
		return nil
	case -5:
		return fmt.Errorf("%w: %q", ErrKernelFault, p.gridEntry)
	}
	return fmt.Errorf("%w: %q with %d parameters (status %d)", ErrBadLaunch, p.gridEntry, len(args), int(rc))
}

// LaunchProgram runs program p over grid × block (one 8-byte slot per
// parameter, as for Launch) with smem bytes of dynamic shared memory per
// block. It returns when the kernel has finished: for a device ring
// kernel, when its loop has exited. Launches of programs run at once with
// each other and with the built-in persistent loop (each has its own
// shared memory).
func (d *Device) LaunchProgram(p *Program, grid, block [3]uint32, smem uint32, args []uint64) error {
	if p == nil || p.launch == nil {
		return fmt.Errorf("%w: no program", ErrUnknownKernel)
	}
	if grid[0]*grid[1]*grid[2] == 0 || block[0]*block[1]*block[2] == 0 || uint64(block[0])*uint64(block[1])*uint64(block[2]) > 1024 {
		return fmt.Errorf("%w: %q grid %v block %v", ErrBadLaunch, p.entry, grid, block)
	}
	var ap *C.uint64_t
	if len(args) > 0 {
		ap = (*C.uint64_t)(unsafe.Pointer(&args[0]))
	}
	d.mu.Lock()
	d.launches[p.entry]++
	d.mu.Unlock()
	rc := C.rc_hs_call_program(p.launch, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.size_t(smem), ap, C.int(len(args)))
	switch rc {
	case 0:
		return nil
	case -5:
		return fmt.Errorf("%w: %q", ErrKernelFault, p.entry)
	}
	return fmt.Errorf("%w: %q with %d parameters (status %d)", ErrBadLaunch, p.entry, len(args), int(rc))
}
