package cuda

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/ring"
)

// RingProgramOptions are the NVRTC options of every device ring program:
// no contraction of a*b+c into fma, so the device computes what the host
// build (g++ -ffp-contract=off) and a Go fallback that rounds each step
// compute, bit for bit.
var RingProgramOptions = []string{"--fmad=false"}

// simRingThreads is the default block size of a device ring kernel on the
// simulated device, where every thread is a host thread.
const simRingThreads = 4

// RingProgram is a device ring program loaded on one backend: compiled by
// NVRTC, its module loaded and its entry resolved (on the simulated device:
// built for the host and loaded), ready for LaunchRingProgram.
type RingProgram struct {
	src    *RingProgramSource
	ptx    []byte
	fn     Function
	gridFn Function // the persistent grid's entry, resolved at its first start (on the device's thread)
	d      *device
	sim    bool
}

// Source returns the program's generated source.
func (p *RingProgram) Source() *RingProgramSource { return p.src }

// PTX returns NVRTC's output (nil on the simulated device when NVRTC is
// not installed).
func (p *RingProgram) PTX() []byte { return p.ptx }

type compileResult struct {
	done chan struct{}
	ptx  []byte
	err  error
}

// compileKey names one compilation: a program's source for one target.
type compileKey struct {
	hash [32]byte
	arch string
}

var (
	compilesMu sync.Mutex
	compiles   = map[compileKey]*compileResult{}
)

// RingProgramCache says where b keeps the program built from src and
// whether LoadRingProgram would find it built: on the simulated device the
// host build's library in hostsim's cache (hostsim.CachedProgram); on a
// GPU, NVRTC's PTX, kept in memory once per process (cache is then
// "memory"). When built is false, loading src compiles it first, which
// takes seconds: a caller may say so.
func (b *Backend) RingProgramCache(src *RingProgramSource) (cache string, built bool) {
	if src == nil {
		return "", false
	}
	if b.sim != nil {
		return b.sim.ProgramCache(src)
	}
	arch, err := b.NVRTCArch()
	if err != nil {
		return "memory", false
	}
	compilesMu.Lock()
	r, ok := compiles[compileKey{src.Hash, arch}]
	compilesMu.Unlock()
	if ok {
		select {
		case <-r.done:
			return "memory", r.err == nil
		default:
		}
	}
	return "memory", false
}

// compileRingProgram compiles src with NVRTC for arch ("" for NVRTC's
// default target) once per process: a compilation error is remembered and
// returned again, never retried (a cancelled wait or a missing NVRTC is
// not remembered).
func compileRingProgram(ctx context.Context, src *RingProgramSource, arch string) ([]byte, error) {
	key := compileKey{src.Hash, arch}
	compilesMu.Lock()
	r, ok := compiles[key]
	if !ok {
		r = &compileResult{done: make(chan struct{})}
		compiles[key] = r
		go func() {
			c, err := Compile(context.Background(), Source{Name: src.Name + ".cu", Code: src.Device, Arch: arch, Options: RingProgramOptions})
			if err == nil {
				r.ptx = c.PTX
			}
			r.err = err
			if err != nil && !errors.Is(err, gpu.ErrCompilation) {
				compilesMu.Lock()
				delete(compiles, key)
				compilesMu.Unlock()
			}
			close(r.done)
		}()
	}
	compilesMu.Unlock()
	select {
	case <-r.done:
		return r.ptx, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("cuda: compiling %s: %w", src.Name, ctx.Err())
	}
}

// LoadRingProgram compiles src with NVRTC (RingProgramOptions, for the
// device's compute capability: [Backend.NVRTCArch]; once per process and
// target) and loads it on the backend's device: module loaded and entry
// resolved, so a later LaunchRingProgram makes no module call beside the
// running rings. On the simulated device the program is also built for the
// host (package hostsim) and NVRTC is optional (it only checks the source
// compiles for the device).
//
// Errors: a source that does not compile is a *gpu.CompilationError with
// NVRTC's (or the host compiler's) log, the same every time; no NVRTC on a
// real device, or no host compiler on the simulated one, is a
// *gpu.DeviceError (gpu.DeviceUnavailable); a backend that is not
// available returns its Available error.
func (b *Backend) LoadRingProgram(ctx context.Context, src *RingProgramSource) (*RingProgram, error) {
	if src == nil {
		return nil, fmt.Errorf("cuda: no ring program: %w", gpu.ErrArgument)
	}
	if err := b.Available(); err != nil {
		return nil, err
	}
	d, err := b.device()
	if err != nil {
		return nil, err
	}
	loader, sim := d.API.(HostDevice)
	// The device's own target (compute_90 on an H100); "" when NVRTC is
	// missing, which the compilation then reports.
	arch, err := b.NVRTCArch()
	if err != nil && !errors.Is(err, ErrNoNVRTC) {
		return nil, err
	}
	ptx, err := compileRingProgram(ctx, src, arch)
	if err != nil && !(sim && errors.Is(err, ErrNoNVRTC)) {
		return nil, err
	}
	p := &RingProgram{src: src, ptx: ptx, d: d, sim: sim}
	if sim {
		if p.fn, err = loader.LoadHostProgram(ctx, src); err != nil {
			return nil, err
		}
		// The simulated module load: in a device epoch when rings run, as on
		// a GPU.
		err = d.Do(func() error {
			return d.Epoch(ctx, "cuModuleLoadDataEx", func() error { return loader.AttachHostProgram(p.fn) })
		})
		if err != nil {
			return nil, deviceErr(d.Ordinal, err)
		}
		return p, nil
	}
	err = d.Do(func() error {
		if m, ok := d.Modules[src.Hash]; ok {
			p.fn = m.Fns[src.Entry]
			return nil
		}
		// cuModuleLoadDataEx synchronises the device: beside live rings it
		// runs in a device epoch (epoch.go), which parks and relaunches them.
		var mod Module
		var log JITLog
		err := d.Epoch(ctx, "cuModuleLoadDataEx", func() error {
			var err error
			mod, log, err = d.API.ModuleLoadData(ptx, true)
			return err
		})
		if err != nil {
			return &ModuleLoadError{Image: "ring program " + src.Name, Log: log, Err: err}
		}
		f, err := d.API.ModuleGetFunction(mod, src.Entry)
		if err != nil {
			return errors.Join(err, d.API.ModuleUnload(mod))
		}
		d.Modules[src.Hash] = &devcore.LoadedModule{Mod: mod, Log: log, Fns: map[string]Function{src.Entry: f}}
		p.fn = f
		return nil
	})
	if err != nil {
		return nil, deviceErr(d.Ordinal, err)
	}
	return p, nil
}

// programSlotSize is the smallest slot (a multiple of 16, at least 4096
// bytes) that holds a slot header and the larger of request and response.
func programSlotSize(src *RingProgramSource) int {
	n := align16(int(unsafe.Sizeof(ring.SlotHeader{})) + max(src.ReqBytes, src.RespBytes))
	return max(n, 4096)
}

// LaunchRingProgram starts a persistent device ring kernel running p with
// its gate closed (open it with Activate): control block, rings and the
// program's State in one pinned allocation mapped into the device, the
// State zeroed. cfg.SlotSize defaults to the smallest slot that holds the
// program's messages (at least 4096 bytes); cfg.Threads to 32 (4 on the
// simulated device, where each thread is a host thread). The returned
// RingKernel is driven with TrySubmit, TryPoll, Terminate,
// Wait, Close).
func (b *Backend) LaunchRingProgram(p *RingProgram, cfg RingConfig) (*RingKernel, error) {
	if p == nil {
		return nil, fmt.Errorf("cuda: no ring program: %w", gpu.ErrArgument)
	}
	if err := b.CheckPersistent(); err != nil {
		return nil, err
	}
	d, err := b.device()
	if err != nil {
		return nil, err
	}
	if d != p.d {
		return nil, fmt.Errorf("cuda: ring program %s was loaded on another device: %w", p.src.Name, gpu.ErrArgument)
	}
	if cfg.Capacity == 0 {
		cfg.Capacity = 64
	}
	if cfg.SlotSize == 0 {
		cfg.SlotSize = programSlotSize(p.src)
	}
	if cfg.Threads == 0 {
		cfg.Threads = 32
		if p.sim {
			cfg.Threads = simRingThreads
		}
	}
	switch {
	case !ring.ValidCapacity(cfg.Capacity):
		return nil, &ring.CapacityError{Capacity: cfg.Capacity}
	case !ring.ValidSlotSize(cfg.SlotSize) || cfg.SlotSize < programSlotSize(p.src):
		return nil, fmt.Errorf("cuda: slot size %d: want a multiple of 16 of at least %d for %s's messages: %w",
			cfg.SlotSize, programSlotSize(p.src), p.src.Name, gpu.ErrArgument)
	case cfg.Threads < 1 || cfg.Threads > 1024 || cfg.Threads > d.Attrs.MaxThreadsPerBlock:
		return nil, fmt.Errorf("cuda: %d ring kernel threads: want 1 to %d: %w", cfg.Threads, min(1024, d.Attrs.MaxThreadsPerBlock), gpu.ErrArgument)
	}
	inOff, outOff, ringsSize := ringLayout(cfg.Capacity, cfg.SlotSize)
	stateOff := ringsSize
	size := stateOff + align64(uintptr(p.src.StateBytes))
	k := &RingKernel{d: d}
	err = d.Do(func() error {
		// Control block, rings and State come from the device's pinned arena
		// (no cuMemHostAlloc beside running rings; see arena.go).
		mem, base, err := d.Pinned(size)
		if err != nil {
			return err
		}
		k.mem = mem
		clear(unsafe.Slice((*byte)(mem), size)) // the State starts zeroed at every launch
		k.cb = (*ring.ControlBlock)(mem)
		k.cb.LatencyMin.Store(^uint64(0))
		k.cb.Close()
		k.in = ring.NewSlotRing(unsafe.Add(mem, inOff), cfg.Capacity, cfg.SlotSize)
		k.out = ring.NewSlotRing(unsafe.Add(mem, outOff), cfg.Capacity, cfg.SlotSize)
		if k.stream, err = d.API.StreamCreate(StreamNonBlocking); err != nil {
			return err
		}
		// The launch is kept for a device epoch's relaunch (epoch.go): the
		// loop resumes from its rings' indices and keeps its State.
		k.park.fn, k.park.threads, k.park.blocks = p.fn, uint32(cfg.Threads), 1
		k.park.smem = p.src.SharedBytes + 8*uint32(cfg.Threads) // the loop's, then the handler's reduction scratch
		k.park.args = []uint64{ArgPtr(base), ArgPtr(base + DevicePtr(inOff)), ArgPtr(base + DevicePtr(outOff)), ArgPtr(base + DevicePtr(stateOff))}
		if err := d.API.LaunchKernel(p.fn, Dim3{X: 1}, Dim3{X: k.park.threads}, k.park.smem, k.stream, k.park.args...); err != nil {
			return err
		}
		d.addLive(k)
		return nil
	})
	if err != nil {
		_ = d.Do(k.release)
		return nil, deviceErr(d.Ordinal, err)
	}
	return k, nil
}
