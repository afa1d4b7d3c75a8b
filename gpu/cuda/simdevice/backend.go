//go:build linux && cgo

package simdevice

import (
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

// Name is the name of a lone simulated device's backend; several are
// "cuda:sim0", "cuda:sim1", … (NewBackends).
const Name = cuda.BackendName + ":sim"

// NewBackend returns a CUDA backend whose device is simulated on the host
// (a [Device] of memBytes): its memory is the C heap, its streams run
// copies and launches in order on goroutines of their own, and its
// launches run the host-compiled bodies of kernels/*.cu (package hostsim),
// ring programs and their grids included. Every code path of the backend
// runs as it would on a GPU — allocation, staging, argument packing,
// launch shapes, ring programs, device epochs — only slower. Its hardware
// is a cuda.DeviceProfile (cuda.H100Profile unless cuda.WithDeviceProfile
// says otherwise). Its hazard model ([Hazards]) is in strict mode: a
// driver call that on a GPU would wait forever beside a running ring
// kernel fails with a *hostsim.HazardError instead — an implicit
// synchronisation, a launch that cannot become resident beside the
// persistent kernels (hostsim.ErrResidency: the profile's 129th
// persistent grid), or a command queued behind one on a hardware work
// queue other streams share (hostsim.ErrFalseDependency). It is for tests
// and for developing device code paths on machines without a GPU; Name
// reports "cuda:sim". Close it when done.
func NewBackend(memBytes uint64, opts ...cuda.BackendOption) *cuda.Backend {
	return NewBackendOn(NewDevice(memBytes), opts...)
}

// NewBackendOn is NewBackend on a device of the caller's (a test that
// inspects the device: its leaks, launches, module loads).
func NewBackendOn(d *Device, opts ...cuda.BackendOption) *cuda.Backend {
	return cuda.NewHostBackend(d, Name, 0, cuda.DeviceInfo{Name: "simulated", SMs: 2}, opts...)
}

// Hazards returns the hazard model of a backend on a simulated device
// (strict mode unless changed with SetMode), or nil for any other backend.
func Hazards(b *cuda.Backend) *hostsim.Hazards {
	if d, ok := b.HostDevice().(*Device); ok {
		return d.hz
	}
	return nil
}

// Of returns the simulated device of b, or nil when b runs on another.
func Of(b *cuda.Backend) *Device {
	d, _ := b.HostDevice().(*Device)
	return d
}
