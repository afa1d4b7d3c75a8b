//go:build linux && cgo

package cuda

import (
	"bytes"
	"testing"
)

// TestRingProgramCompiledForDeviceTarget loads a ring program on a
// simulated device that reports compute capability 9.0 (an H100): NVRTC
// must compile it for compute_90, not the fixed compute_70 it used before
// (which NVRTC 13 refuses).
func TestRingProgramCompiledForDeviceTarget(t *testing.T) {
	nv, err := LoadNVRTC()
	if err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	want, err := nv.ArchFor(ComputeCapability{Major: 9, Minor: 0})
	if err != nil {
		t.Skipf("NVRTC %v cannot target 9.0: %v", nv.Path(), err)
	}
	// The simulated device reports no compute capability: the default
	// target.
	plain, _ := newSimBackend(t, nil)
	if got, err := plain.NVRTCArch(); err != nil || got != nv.defaultArch() {
		t.Fatalf("simulated backend's target %q, %v; want %s", got, err, nv.defaultArch())
	}
	b, _ := newSimBackend(t, nil)
	sim := b.probeFn
	b.probeFn = func() Report {
		r := sim()
		r.Devices[0].ComputeCapability = ComputeCapability{Major: 9, Minor: 0}
		return r
	}
	if got, err := b.NVRTCArch(); err != nil || got != want {
		t.Fatalf("NVRTCArch() = %q, %v; want %s", got, err, want)
	}
	p := sumProgram(t, b)
	target := []byte(".target sm_" + want[len("compute_"):])
	if !bytes.Contains(p.PTX(), target) {
		t.Fatalf("the program's PTX does not contain %q", target)
	}
}
