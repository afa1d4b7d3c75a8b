package ringrt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/ring"
)

// Program is a device ring program loaded on one device: compiled by
// NVRTC, its module loaded and its entry resolved (on the simulated device:
// built for the host and loaded), ready for Launch and Open.
type Program struct {
	src    *ProgramSource
	target driverapi.NVRTCTarget // what NVRTC compiled it for; zero without NVRTC (simulated device)
	image  []byte                // NVRTC's output: a CUBIN or PTX, as target.Image says
	fn     driverapi.Function
	gridFn driverapi.Function // the persistent grid's entry, resolved at its first start (on the device's thread)
	rt     *Runtime
	sim    bool
}

// Source returns the program's generated source.
func (p *Program) Source() *ProgramSource { return p.src }

// Image returns the kind of image NVRTC compiled the program into:
// driverapi.ImageCUBIN ("cubin": machine code for the device's exact
// architecture, loaded without a JIT) or driverapi.ImagePTX ("ptx":
// JIT-compiled by the driver as it loads); "" on the simulated device when
// NVRTC is not installed.
func (p *Program) Image() string {
	if p.image == nil {
		return ""
	}
	return p.target.Image
}

// Target returns the NVRTC target the program was compiled for ("sm_90"
// and a CUBIN, or "compute_90" and PTX); zero when it was not compiled
// (the simulated device without NVRTC).
func (p *Program) Target() driverapi.NVRTCTarget {
	if p.image == nil {
		return driverapi.NVRTCTarget{}
	}
	return p.target
}

// PTX returns NVRTC's PTX when the program's image is PTX, else nil (a
// CUBIN, or the simulated device without NVRTC).
func (p *Program) PTX() []byte {
	if p.Image() != driverapi.ImagePTX {
		return nil
	}
	return p.image
}

// CUBIN returns NVRTC's CUBIN (an ELF image) when the program's image is
// one, else nil.
func (p *Program) CUBIN() []byte {
	if p.Image() != driverapi.ImageCUBIN {
		return nil
	}
	return p.image
}

// Compiler compiles a program's device source with NVRTC for target,
// returning the image target.Image names (a CUBIN or PTX).
type Compiler func(ctx context.Context, name, code string, target driverapi.NVRTCTarget) ([]byte, error)

type compileResult struct {
	done  chan struct{}
	image []byte
	err   error
}

// compileKey names one compilation: a program's source for one target.
type compileKey struct {
	hash   [32]byte
	target driverapi.NVRTCTarget
}

var (
	compilesMu sync.Mutex
	compiles   = map[compileKey]*compileResult{}
)

// Compiled reports whether src's image for target is in the process's
// compilation cache (a compilation that succeeded; gpu/cuda's
// RingProgramCache on a GPU).
func Compiled(src *ProgramSource, target driverapi.NVRTCTarget) bool {
	compilesMu.Lock()
	r, ok := compiles[compileKey{src.Hash, target}]
	compilesMu.Unlock()
	if ok {
		select {
		case <-r.done:
			return r.err == nil
		default:
		}
	}
	return false
}

// compileProgram compiles src with compile (NVRTC) for target (zero for
// NVRTC's default target, PTX) once per process and target: a compilation
// error is remembered and returned again, never retried (a cancelled wait
// or a missing NVRTC is not remembered).
func compileProgram(ctx context.Context, compile Compiler, src *ProgramSource, target driverapi.NVRTCTarget) ([]byte, error) {
	key := compileKey{src.Hash, target}
	compilesMu.Lock()
	r, ok := compiles[key]
	if !ok {
		r = &compileResult{done: make(chan struct{})}
		compiles[key] = r
		go func() {
			image, err := compile(context.Background(), src.Name+".cu", src.Device, target)
			r.image, r.err = image, err
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
		return r.image, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("cuda: compiling %s: %w", src.Name, ctx.Err())
	}
}

// Load compiles src with NVRTC (Options.Compile, for Options.Target: a
// CUBIN for the device's exact architecture when NVRTC can, else PTX;
// once per process and target) and loads it on the device: module loaded
// and entry resolved, so a later Launch makes no module call beside the
// running rings. The compilation happens before any device epoch; the
// epoch (when rings run) holds only the module load, the entry's lookup
// and, when the lookup fails, the unload — a CUBIN's load takes
// milliseconds, PTX's the JIT's hundreds. On the simulated device the
// program is also built for the host (package hostsim) and NVRTC is
// optional (it only checks the source compiles for the device). A source
// is loaded once per device: loading it again returns the same function
// without a driver call beside the running rings.
//
// Errors: Options.Target's (an NVRTC newer than the driver, a device NVRTC
// cannot target), before anything is compiled or loaded; a source that
// does not compile is a *gpu.CompilationError with NVRTC's (or the host
// compiler's) log, the same every time; no NVRTC on a real device, or no
// host compiler on the simulated one, is a *gpu.DeviceError
// (gpu.DeviceUnavailable).
func (rt *Runtime) Load(ctx context.Context, src *ProgramSource) (*Program, error) {
	if src == nil {
		return nil, fmt.Errorf("cuda: no ring program: %w", gpu.ErrArgument)
	}
	d := rt.d
	loader, sim := rt.opt.Host, rt.sim()
	// The device's own target (sm_90 and a CUBIN on an H100), checked
	// against the driver's version; zero when NVRTC is missing, which the
	// compilation then reports.
	target, err := rt.opt.Target()
	if err != nil && !errors.Is(err, driverapi.ErrNoNVRTC) {
		return nil, err
	}
	if target.Image == "" {
		target.Image = driverapi.ImagePTX // NVRTC's default target is virtual
	}
	image, err := compileProgram(ctx, rt.opt.Compile, src, target)
	if err != nil && !(sim && errors.Is(err, driverapi.ErrNoNVRTC)) {
		return nil, err
	}
	p := &Program{src: src, target: target, image: image, rt: rt, sim: sim}
	if sim {
		// Loaded on this device before: no module load, as on a GPU (its
		// modules are kept by source below).
		if err := d.Do(func() error { p.fn = rt.hostProgs[src.Hash]; return nil }); err != nil {
			return nil, devcore.DeviceErr(d.Ordinal, err)
		}
		if p.fn.Raw() != nil {
			return p, nil
		}
		fn, err := loader.LoadHostProgram(ctx, src)
		if err != nil {
			return nil, err
		}
		// The simulated module load: in a device epoch when rings run, as on
		// a GPU; once per device and source.
		err = d.Do(func() error {
			if f, ok := rt.hostProgs[src.Hash]; ok {
				p.fn = f
				return nil
			}
			if err := d.Epoch(ctx, "cuModuleLoadDataEx", func() error { return loader.AttachHostProgram(fn) }); err != nil {
				return err
			}
			persistentCarveout(d, fn)
			rt.hostProgs[src.Hash], p.fn = fn, fn
			return nil
		})
		if err != nil {
			return nil, devcore.DeviceErr(d.Ordinal, err)
		}
		return p, nil
	}
	err = d.Do(func() error {
		if m, ok := d.Modules[src.Hash]; ok {
			p.fn = m.Fns[src.Entry]
			return nil
		}
		// cuModuleLoadDataEx and cuModuleUnload synchronise the device:
		// beside live rings they run in a device epoch (epoch.go), which
		// parks and relaunches them, and so does the entry's lookup between
		// them, so that a failed lookup unloads the module in that epoch.
		var m *devcore.LoadedModule
		err := d.Epoch(ctx, "cuModuleLoadDataEx", func() error {
			mod, log, err := d.API.ModuleLoadData(image, true)
			if err != nil {
				return &driverapi.ModuleLoadError{Image: fmt.Sprintf("ring program %s (%s %s)", src.Name, target.Image, target.Arch), Log: log, Err: err}
			}
			f, err := d.API.ModuleGetFunction(mod, src.Entry)
			if err != nil {
				return errors.Join(fmt.Errorf("cuda: entry %s of ring program %s: %w", src.Entry, src.Name, err), d.API.ModuleUnload(mod))
			}
			persistentCarveout(d, f)
			m = &devcore.LoadedModule{Mod: mod, Log: log, Fns: map[string]driverapi.Function{src.Entry: f}}
			return nil
		})
		if m != nil {
			// Loaded, even if relaunching a parked ring failed after: kept,
			// so that the device's close unloads it.
			d.Modules[src.Hash] = m
			p.fn = m.Fns[src.Entry]
		}
		return err
	})
	if err != nil {
		return nil, devcore.DeviceErr(d.Ordinal, err)
	}
	return p, nil
}

// programSlotSize is the smallest slot (a multiple of 16, at least 4096
// bytes) that holds a slot header and the larger of request and response.
func programSlotSize(src *ProgramSource) int {
	n := align16(int(unsafe.Sizeof(ring.SlotHeader{})) + max(src.ReqBytes, src.RespBytes))
	return max(n, 4096)
}

// Launch starts a persistent device ring kernel running p with
// its gate closed (open it with Activate): control block, rings and the
// program's State in one pinned allocation mapped into the device, the
// State zeroed. cfg.SlotSize defaults to the smallest slot that holds the
// program's messages (at least 4096 bytes); cfg.Threads to 32 (the simulated device
// runs fewer: simdevice's SetExecShape). The returned
// Kernel is driven with TrySubmit, TryPoll, Terminate,
// Wait, Close). The caller checks first that the device may run
// persistent kernels (gpu/cuda's CheckPersistent).
func (rt *Runtime) Launch(p *Program, cfg Config) (*Kernel, error) {
	if p == nil {
		return nil, fmt.Errorf("cuda: no ring program: %w", gpu.ErrArgument)
	}
	d := rt.d
	if p.rt != rt {
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
	k := &Kernel{d: d}
	err := d.Do(func() error {
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
		if k.stream, err = persistentStream(d); err != nil {
			return err
		}
		// The launch is kept for a device epoch's relaunch (epoch.go): the
		// loop resumes from its rings' indices and keeps its State.
		k.park.fn, k.park.threads, k.park.blocks = p.fn, uint32(cfg.Threads), 1
		k.park.smem = p.src.SharedBytes + 8*uint32(cfg.Threads) // the loop's, then the handler's reduction scratch
		k.park.args = []uint64{argPtr(base), argPtr(base + driverapi.DevicePtr(inOff)), argPtr(base + driverapi.DevicePtr(outOff)), argPtr(base + driverapi.DevicePtr(stateOff))}
		if k.claim, err = rt.claim("ring kernel of program "+p.src.Name, rt.shape(p.fn, 1, cfg.Threads, k.park.smem)); err != nil {
			return err
		}
		if err := d.API.LaunchKernel(p.fn, driverapi.Dim3{X: 1}, driverapi.Dim3{X: k.park.threads}, k.park.smem, k.stream, k.park.args...); err != nil {
			return err
		}
		k.addLive()
		return nil
	})
	if err != nil {
		_ = d.Do(k.release)
		return nil, devcore.DeviceErr(d.Ordinal, err)
	}
	return k, nil
}
