//go:build linux && cgo

package ringrt

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/messages"
)

// fakeCompiler is an Options.Compile that returns image for every
// target and records the targets it was asked for.
type fakeCompiler struct {
	mu      sync.Mutex
	image   []byte
	targets []driverapi.NVRTCTarget
}

func (c *fakeCompiler) compile(_ context.Context, _, _ string, target driverapi.NVRTCTarget) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.targets = append(c.targets, target)
	return c.image, nil
}

func (c *fakeCompiler) calls() []driverapi.NVRTCTarget {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]driverapi.NVRTCTarget(nil), c.targets...)
}

// forgetCompiles drops src's entries from the process's compilation cache
// now and when the test ends, so that a fake compiler's image serves no
// other test (and -count=N runs compile again).
func forgetCompiles(t *testing.T, src *ProgramSource) {
	forget := func() {
		compilesMu.Lock()
		for k := range compiles {
			if k.hash == src.Hash {
				delete(compiles, k)
			}
		}
		compilesMu.Unlock()
	}
	forget()
	t.Cleanup(forget)
}

// namedSaxpy is the saxpy program under another name, with a comment
// naming it in its code: another source (the name alone does not go into
// it), so its compilations and modules are its own.
func namedSaxpy(t *testing.T, name string) *ProgramSource {
	t.Helper()
	spec := saxpySpec()
	spec.Name = name
	spec.Code += "\n// " + name + "\n"
	src, err := NewProgramSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	forgetCompiles(t, src)
	return src
}

// liveSaxpyRing launches a saxpy ring on rt, gate open, closed when the
// test ends.
func liveSaxpyRing(t *testing.T, rt *Runtime) *Kernel {
	t.Helper()
	k, err := rt.Launch(loadSaxpy(t, rt), Config{Capacity: 8, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	k.Activate()
	t.Cleanup(func() {
		if err := k.Close(context.Background()); err != nil {
			t.Errorf("closing the ring: %v", err)
		}
	})
	return k
}

// checkSaxpyServes exchanges one message with k.
func checkSaxpyServes(t *testing.T, k *Kernel, id uint64, seen uint64) {
	t.Helper()
	req := saxpyReq{N: 2, A: 3, X: [64]float32{1, 2}, Y: [64]float32{10, 20}}
	h, got := exchangeProgram(t, k, id, messages.FixedBytes(&req))
	want := saxpyWant(req, seen)
	if h.Status != ring.StatusOK || string(got) != string(messages.FixedBytes(&want)) {
		t.Fatalf("ring: status %d, reply %d bytes, want the saxpy of message %d", h.Status, len(got), seen)
	}
}

// driverRuntime is a ring runtime over rt's device that takes the GPU's
// path (no host programs: NVRTC's image goes to ModuleLoadData), with
// target and compile as its NVRTC.
func driverRuntime(rt *Runtime, target func() (driverapi.NVRTCTarget, error), compile Compiler) *Runtime {
	return &Runtime{d: rt.d, opt: Options{Name: "cuda:sim", Target: target, Compile: compile},
		hostProgs: map[[32]byte]driverapi.Function{}}
}

// TestLoadFailedLookupUnloadsInEpoch loads a ring program by the GPU's
// path beside a running ring, on the simulated device in strict hazard
// mode, where the module loads but its entry's lookup fails
// (CUDA_ERROR_NOT_FOUND: the simulator has no build of it). The module
// must be unloaded inside the same device epoch as its load —
// cuModuleUnload synchronises, and beside the running ring it would wait
// forever on a GPU (a *hostsim.HazardError here) — so the load fails with
// the lookup's error alone, no module is left loaded, one epoch parked the
// ring and the ring serves on.
func TestLoadFailedLookupUnloadsInEpoch(t *testing.T) {
	rt, fd := newSimBackend(t, nil)
	k := liveSaxpyRing(t, rt)
	checkSaxpyServes(t, k, 1, 1)
	src := namedSaxpy(t, "lookupfail")
	fc := &fakeCompiler{image: []byte(".version 7.8\n.target sm_90\n.visible .entry " + src.Entry + "(\n)\n{\n\tret;\n}\n")}
	ptx := driverapi.NVRTCTarget{Arch: "compute_90", Image: driverapi.ImagePTX}
	gpuRT := driverRuntime(rt, func() (driverapi.NVRTCTarget, error) { return ptx, nil }, fc.compile)

	loads, epochs := fd.ModuleLoads(), rt.d.Epochs.Stats().Count
	p, err := gpuRT.Load(context.Background(), src)
	var de *driverapi.DriverError
	if p != nil || !errors.As(err, &de) || de.Code != int(driverapi.ErrNotFound) || de.Call != "cuModuleGetFunction" {
		t.Fatalf("Load: %v, %v; want cuModuleGetFunction's CUDA_ERROR_NOT_FOUND", p, err)
	}
	if errors.Is(err, hostsim.ErrHazard) {
		t.Fatalf("the failed lookup's unload ran beside the ring: %v", err)
	}
	if got := fd.ModuleLoads(); got != loads+1 {
		t.Fatalf("%d module loads, want 1", got-loads)
	}
	if got := rt.d.Epochs.Stats().Count; got != epochs+1 {
		t.Fatalf("%d device epochs for the load, want 1 (load, lookup and unload together)", got-epochs)
	}
	if err := rt.d.Do(func() error {
		if _, ok := rt.d.Modules[src.Hash]; ok {
			return errors.New("the failed program's module is kept")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if calls := fc.calls(); len(calls) != 1 || calls[0] != ptx {
		t.Fatalf("compilations %+v, want one for %+v", calls, ptx)
	}
	checkSaxpyServes(t, k, 2, 2)
	// The cleanup's Leaks check finds no module left loaded.
}

// TestLoadTargetErrorBeforeEpoch has Options.Target refuse (an NVRTC newer
// than the driver) while a ring runs: Load returns that error, compiles
// nothing, loads nothing and parks no ring.
func TestLoadTargetErrorBeforeEpoch(t *testing.T) {
	rt, fd := newSimBackend(t, nil)
	k := liveSaxpyRing(t, rt)
	refused := &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda", Reason: "NVRTC 13.0 is newer than the driver (CUDA 12.4)",
		Err: errors.New("cuda: NVRTC is newer than the driver")}
	fc := &fakeCompiler{image: []byte("unused")}
	src := namedSaxpy(t, "refused")
	for _, name := range []string{"driver", "simulated"} {
		r := driverRuntime(rt, func() (driverapi.NVRTCTarget, error) { return driverapi.NVRTCTarget{}, refused }, fc.compile)
		if name == "simulated" {
			r.opt.Host = fd
		}
		loads, epochs := fd.ModuleLoads(), rt.d.Epochs.Stats().Count
		p, err := r.Load(context.Background(), src)
		if p != nil || !errors.Is(err, refused.Err) || !errors.Is(err, gpu.ErrDeviceNotAvailable) {
			t.Fatalf("%s: Load: %v, %v; want the target's error", name, p, err)
		}
		if got := rt.d.Epochs.Stats().Count; got != epochs {
			t.Fatalf("%s: %d device epochs for a refused load", name, got-epochs)
		}
		if got := fd.ModuleLoads(); got != loads {
			t.Fatalf("%s: %d module loads for a refused load", name, got-loads)
		}
	}
	if calls := fc.calls(); len(calls) != 0 {
		t.Fatalf("compiled for %+v after the target was refused", calls)
	}
	checkSaxpyServes(t, k, 1, 1)
}

// TestLoadImageKinds loads a program on the simulated device with a target
// of each kind: the program reports the kind and holds NVRTC's image as
// that kind (CUBIN or PTX, never both), and the compilation is cached per
// target — a second load for the same target compiles nothing, one for
// the other target compiles once.
func TestLoadImageKinds(t *testing.T) {
	rt, fd := newSimBackend(t, nil)
	src := namedSaxpy(t, "imagekinds")
	cubin := driverapi.NVRTCTarget{Arch: "sm_90", Image: driverapi.ImageCUBIN}
	ptx := driverapi.NVRTCTarget{Arch: "compute_90", Image: driverapi.ImagePTX}
	fc := &fakeCompiler{image: []byte("\x7fELF a stand-in CUBIN")}
	target := cubin
	r := &Runtime{d: rt.d, opt: Options{Name: "cuda:sim", Host: fd, Compile: fc.compile,
		Target: func() (driverapi.NVRTCTarget, error) { return target, nil }}, hostProgs: rt.hostProgs}
	p := loadSource(t, r, src)
	if p.Image() != driverapi.ImageCUBIN || p.Target() != cubin || string(p.CUBIN()) != string(fc.image) || p.PTX() != nil {
		t.Fatalf("CUBIN target: image %q, target %+v, CUBIN %q, PTX %q", p.Image(), p.Target(), p.CUBIN(), p.PTX())
	}
	if !Compiled(src, cubin) || Compiled(src, ptx) {
		t.Fatalf("cache: cubin %v, ptx %v; want only the CUBIN", Compiled(src, cubin), Compiled(src, ptx))
	}
	_ = loadSource(t, r, src)
	target = ptx
	p = loadSource(t, r, src)
	if p.Image() != driverapi.ImagePTX || p.Target() != ptx || p.CUBIN() != nil || string(p.PTX()) != string(fc.image) {
		t.Fatalf("PTX target: image %q, target %+v, CUBIN %q, PTX %q", p.Image(), p.Target(), p.CUBIN(), p.PTX())
	}
	if calls := fc.calls(); len(calls) != 2 || calls[0] != cubin || calls[1] != ptx {
		t.Fatalf("compilations %+v, want one for %+v then one for %+v", calls, cubin, ptx)
	}
	// A zero target (NVRTC's default) is PTX.
	target = driverapi.NVRTCTarget{}
	if p = loadSource(t, r, src); p.Image() != driverapi.ImagePTX {
		t.Fatalf("default target: image %q, want ptx", p.Image())
	}
}

// loadSource loads src on rt; the test is skipped without a host compiler.
func loadSource(t *testing.T, rt *Runtime, src *ProgramSource) *Program {
	t.Helper()
	p, err := rt.Load(context.Background(), src)
	if errors.Is(err, hostsim.ErrNoHostCompiler) {
		t.Skip("no host compiler:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}
