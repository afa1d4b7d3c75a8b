package actors

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/messages"
)

// DeviceSource is the CUDA C side of a device ring kernel
// (NewDeviceRingKernel).
type DeviceSource struct {
	// Code is the CUDA C source of the handler and its helpers. It needs no
	// #include: the C structs of Req, Resp and State (named as the Go
	// types, members named as the Go fields, padding explicit), rc_ctx,
	// RC_STATUS_OK and the uint*_t/int*_t types are declared before it.
	Code string
	// Entry is the name of the handler, a __device__ function of Code:
	//
	//	__device__ uint32_t Entry(const rc_ctx *ctx, const Req *req, Resp *resp, State *state)
	//
	// called by every thread of the block for each message (ctx->thread,
	// ctx->threads; __syncthreads() is allowed where every thread reaches
	// it). resp is zeroed before the call. It returns RC_STATUS_OK (0), or
	// a status of its own that the message's requester gets as an
	// ExecutionError wrapping a *DeviceStatusError; thread 0's return value
	// counts. A stateless kernel's State is rc_no_state.
	Entry string
	// State is a value of the kernel's fixed-layout State type (its zero
	// value, e.g. Histogram{}), or nil for a stateless kernel. The State
	// lives in memory the device reaches and is zeroed at every (re)start,
	// as a restarted Go fallback starts from a fresh state.
	State any
	// Threads is the block size of the kernel (default: 32 on a GPU, 4 on
	// the simulated device, where every thread is a host thread). Kernels
	// of one program and block size share one persistent grid, whose
	// blocks serve them as mailboxes; another block size starts another
	// grid (a device keeps at most 120 of them for ring programs).
	Threads int
	// Types are values of further fixed-layout struct types Code uses
	// (e.g. a helper struct), declared in C after Req, Resp and State.
	Types []any
}

// DeviceStatusError is the cause of the ExecutionError of a message whose
// device handler returned a status other than RC_STATUS_OK.
type DeviceStatusError struct {
	Kernel string
	Status uint32
}

// Error implements error.
func (e *DeviceStatusError) Error() string {
	return fmt.Sprintf("device ring kernel %q: handler returned status %d", e.Kernel, e.Status)
}

// deviceProgram is a device ring kernel's program: its generated source,
// and per CUDA backend the loaded program or why it cannot run there.
type deviceProgram struct {
	src     *cuda.RingProgramSource
	threads int
	typeID  uint32

	mu     sync.Mutex
	loaded map[*cuda.Backend]*cuda.RingProgram
	why    map[*cuda.Backend]error
}

// deviceCompileTimeout bounds compiling and loading a device ring
// kernel's program at registration.
const deviceCompileTimeout = 2 * time.Minute

// NewDeviceRingKernel declares a ring kernel whose handler is CUDA C code
// running in a persistent CUDA kernel loop (see DeviceSource), with a Go
// fallback: at every (re)start the kernel runs on the device when the
// runtime has a usable CUDA backend that allows persistent kernels (the
// simulated device of simdevice.NewBackend counts), and otherwise runs
// the handler newFallback returns, in the same binary. The fallback must
// compute the same replies (rounding each float operation as the device
// does: NVRTC compiles with --fmad=false, so write float32(a*x)+y in Go).
// Kernel.Placement, the kernel's stats and a log line at each start say
// where it runs and why.
//
// Req, Resp and the State are fixed-layout structs (numbers, bools, arrays
// and structs of them; messages.CheckFixed); anything else, an empty Code,
// an Entry that is not a C identifier or a nil newFallback is an error
// (ErrInvalidKernel) here, not at the first message. Registering the
// kernel compiles its program with NVRTC for each usable CUDA backend (and
// builds it with g++ for the simulated device) and loads it before any
// ring launches; a program that does not compile fails the registration
// with a *gpu.CompilationError carrying the compiler's log (never
// retried). Every KernelOption keeps its meaning.
func NewDeviceRingKernel[Req, Resp any](id string, src DeviceSource, newFallback func() Handler[Req, Resp], opts ...KernelOption) (*KernelDef[Req, Resp], error) {
	invalid := func(err error) error {
		if ae, ok := errors.AsType[*gpu.ArgumentError](err); ok && ae.Kernel == id {
			return fmt.Errorf("%w: %w", ErrInvalidKernel, err) // it names the kernel already
		}
		return fmt.Errorf("%w: kernel %q: %w", ErrInvalidKernel, id, err)
	}
	if newFallback == nil {
		return nil, invalid(errors.New("a device ring kernel needs a Go fallback (newFallback is nil)"))
	}
	if src.Threads < 0 || src.Threads > 1024 {
		return nil, invalid(fmt.Errorf("%d device threads: want 1 to 1024 (0: the default)", src.Threads))
	}
	spec := cuda.RingProgramSpec{Name: id, Code: src.Code, Handler: src.Entry,
		Req: reflect.TypeFor[Req](), Resp: reflect.TypeFor[Resp]()}
	if src.State != nil {
		spec.State = reflect.TypeOf(src.State)
	}
	for _, v := range src.Types {
		spec.Types = append(spec.Types, reflect.TypeOf(v))
	}
	ps, err := cuda.NewRingProgramSource(spec)
	if err != nil {
		return nil, invalid(err)
	}
	def := NewKernel(id, newFallback, opts...)
	def.prog = &deviceProgram{src: ps, threads: src.Threads, loaded: map[*cuda.Backend]*cuda.RingProgram{}, why: map[*cuda.Backend]error{}}
	if tid, err := messages.IDOf[Req](); err == nil {
		def.prog.typeID = uint32(tid)
	}
	return def, nil
}

// PrepareDevice compiles and loads def's device program on rt's CUDA
// backends now, as registering def would: for a host that declares kernels
// later under a short deadline (a cluster activation), so the compilation
// happens up front. Programs are cached by source, so a kernel declared
// later with the same source loads at once. A program that does not
// compile is a *gpu.CompilationError; a def without a device program is
// accepted (nothing to do).
func PrepareDevice[Req, Resp any](rt *Runtime, def *KernelDef[Req, Resp]) error {
	if def == nil || def.prog == nil {
		return nil
	}
	if rt.closed.Load() {
		return ErrRuntimeClosed
	}
	if err := def.prog.prepare(rt); err != nil {
		return kernelErr(def.id, err)
	}
	return nil
}

// prepare compiles and loads the program on every CUDA backend of rt that
// can run persistent kernels. A compilation error is returned (the kernel
// cannot be registered); any other failure is remembered as the reason the
// kernel falls back on that backend.
func (p *deviceProgram) prepare(rt *Runtime) error {
	ctx, cancel := context.WithTimeout(context.Background(), deviceCompileTimeout)
	defer cancel()
	for _, cb := range rt.ringBackends() {
		p.mu.Lock()
		_, done := p.loaded[cb]
		p.mu.Unlock()
		if done {
			continue
		}
		err := cb.Available()
		if err == nil {
			err = cb.CheckPersistent()
		}
		var prog *cuda.RingProgram
		if err == nil {
			prog, err = p.load(ctx, rt, cb)
		}
		if err == nil {
			// The program's persistent grid starts now, once: its kernels
			// are mailboxes of it, never launches.
			err = cb.StartRingGrid(prog, p.threads)
		}
		if errors.Is(err, gpu.ErrCompilation) {
			return err
		}
		p.mu.Lock()
		if err != nil {
			p.why[cb] = err
		} else {
			p.loaded[cb] = prog
			delete(p.why, cb)
		}
		p.mu.Unlock()
	}
	return nil
}

// load loads the program on cb. When that compiles it first (seconds: g++
// on the simulated device, NVRTC on a GPU), it logs one line as the
// compilation starts and one as it ends, with where the result is cached.
func (p *deviceProgram) load(ctx context.Context, rt *Runtime, cb *cuda.Backend) (*cuda.RingProgram, error) {
	cache, built := cb.RingProgramCache(p.src)
	if built {
		return cb.LoadRingProgram(ctx, p.src)
	}
	log := rt.logger.With("kernel", p.src.Name, "backend", cb.Name(), "cache", cache)
	log.Info("ringactor: compiling a device ring program (first use; cached after, takes seconds)")
	start := time.Now()
	prog, err := cb.LoadRingProgram(ctx, p.src)
	if err != nil {
		log.Info("ringactor: compiling a device ring program failed", "duration", time.Since(start).Round(time.Millisecond), "error", err)
		return nil, err
	}
	log.Info("ringactor: compiled a device ring program", "duration", time.Since(start).Round(time.Millisecond),
		"image", prog.Image(), "target", prog.Target().Arch)
	return prog, nil
}

// deviceLaunch is a device ring kernel's mailbox opened for an
// incarnation, or why it has none.
type deviceLaunch struct {
	ring    *cuda.RingKernel
	backend *cuda.Backend
	why     error
}
