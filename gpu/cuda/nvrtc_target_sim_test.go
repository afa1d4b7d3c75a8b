//go:build linux && cgo

package cuda

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// withDevice makes b's probe report compute capability cc for device 0
// and, when driver is not 0, driver version driver (before b's first
// use).
func withDevice(b *Backend, cc ComputeCapability, driver int) {
	sim := b.probeFn
	b.probeFn = func() Report {
		r := sim()
		r.Devices[0].ComputeCapability = cc
		if driver != 0 {
			r.DriverVersion = driver
		}
		return r
	}
}

// TestRingProgramCompiledForDeviceTarget loads a ring program on a
// simulated device that reports no compute capability (the default
// target, PTX) and on one that reports 9.0 (an H100): NVRTC compiles the
// latter for sm_90 into a CUBIN, the ELF image the driver loads without a
// JIT, and the program says so; the compilation is cached per target.
func TestRingProgramCompiledForDeviceTarget(t *testing.T) {
	nv, err := LoadNVRTC()
	if err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	h100 := ComputeCapability{Major: 9, Minor: 0}
	want, err := nv.TargetFor(h100)
	if err != nil {
		t.Skipf("NVRTC %v cannot target 9.0: %v", nv.Path(), err)
	}
	// The simulated device reports no compute capability: the default
	// target, PTX.
	plain, _ := newSimBackend(t, nil)
	if got, err := plain.NVRTCArch(); err != nil || got != nv.defaultArch() {
		t.Fatalf("simulated backend's arch %q, %v; want %s", got, err, nv.defaultArch())
	}
	if got, err := plain.RingProgramTarget(); err != nil || got != (NVRTCTarget{Arch: nv.defaultArch(), Image: ImagePTX}) {
		t.Fatalf("simulated backend's ring target %+v, %v; want PTX for %s", got, err, nv.defaultArch())
	}
	p := sumProgram(t, plain)
	if p.Image() != ImagePTX || p.CUBIN() != nil || !bytes.Contains(p.PTX(), []byte(".target sm_"+nv.defaultArch()[len("compute_"):])) {
		t.Fatalf("default target: image %q, CUBIN %d bytes, PTX %.300q", p.Image(), len(p.CUBIN()), p.PTX())
	}

	b, _ := newSimBackend(t, nil)
	withDevice(b, h100, 0)
	if got, err := b.RingProgramTarget(); err != nil || got != want {
		t.Fatalf("RingProgramTarget() = %+v, %v; want %+v", got, err, want)
	}
	p = sumProgram(t, b)
	if p.Target() != want {
		t.Fatalf("program target %+v, want %+v", p.Target(), want)
	}
	if _, built := b.RingProgramCache(p.Source()); !built {
		t.Fatal("after loading the program, RingProgramCache says it is not built")
	}
	if !nv.HasCUBIN() {
		if p.Image() != ImagePTX || !bytes.Contains(p.PTX(), []byte(".target sm_90")) {
			t.Fatalf("NVRTC without CUBINs: image %q, PTX %.300q", p.Image(), p.PTX())
		}
		return
	}
	if want.Arch != "sm_90" || p.Image() != ImageCUBIN || p.PTX() != nil {
		t.Fatalf("H100: target %+v, image %q, PTX %d bytes; want a CUBIN for sm_90", want, p.Image(), len(p.PTX()))
	}
	if !bytes.HasPrefix(p.CUBIN(), []byte("\x7fELF")) || !bytes.Contains(p.CUBIN(), []byte(p.Source().Entry+"\x00")) {
		t.Fatalf("the program's CUBIN (%d bytes) is not an ELF image naming %s", len(p.CUBIN()), p.Source().Entry)
	}
}

// sumProgramSource is the built-in sum handler's program source
// (ringmsg.Sum), not loaded.
func sumProgramSource(t *testing.T) *RingProgramSource {
	t.Helper()
	spec := RingProgramSpec{Name: "ringmsg-sum", Code: ringmsg.DeviceCode, Handler: ringmsg.Sum.DeviceEntry(),
		Req: reflect.TypeFor[ringmsg.ReduceMsg](), Resp: reflect.TypeFor[ringmsg.ScalarReply]()}
	for _, v := range ringmsg.DeviceTypes {
		spec.Types = append(spec.Types, reflect.TypeOf(v))
	}
	src, err := NewRingProgramSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestRingProgramNVRTCNewerThanDriver loads a ring program on a simulated
// device whose driver is a major release older than the installed NVRTC:
// the load fails with ErrNVRTCNewerThanDriver (a DeviceUnavailable
// error). (ringrt's TestLoadTargetErrorBeforeEpoch shows that nothing is
// compiled or loaded for it and no ring is parked.)
func TestRingProgramNVRTCNewerThanDriver(t *testing.T) {
	nv, err := LoadNVRTC()
	if err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	major, minor := nv.Version()
	b, _ := newSimBackend(t, nil)
	withDevice(b, ComputeCapability{Major: 9, Minor: 0}, (major-1)*1000+minor*10)
	if _, err := b.RingProgramTarget(); !errors.Is(err, ErrNVRTCNewerThanDriver) {
		t.Fatalf("RingProgramTarget: %v; want ErrNVRTCNewerThanDriver", err)
	}
	src := sumProgramSource(t)
	_, err = b.LoadRingProgram(t.Context(), src)
	var de *gpu.DeviceError
	if !errors.Is(err, ErrNVRTCNewerThanDriver) || !errors.As(err, &de) || de.Kind != gpu.DeviceUnavailable {
		t.Fatalf("LoadRingProgram with an older driver: %v; want a DeviceUnavailable error wrapping ErrNVRTCNewerThanDriver", err)
	}
}
