//go:build linux && cgo

package simdevice

import (
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
)

// The simulated device's hardware: a cuda.DeviceProfile (cuda.H100Profile unless
// cuda.WithDeviceProfile chose another) that its hazard model enforces —
// resident grids, resident blocks, threads, shared memory and registers
// per SM, and hardware work queues (hostsim.Limits). The device runs a
// grid's blocks on far fewer host threads than the profile's SMs hold
// (its launch attributes stay small: fakeAttrs), but residency is counted
// with the profile's numbers. Register use of host-compiled kernels is
// unknown: each function counts DefaultRegisters per thread unless a test
// set its figure (SetFuncRegisters, funcattr.go).

// limits are the numbers of p the hazard model enforces.
func limits(p cuda.DeviceProfile) hostsim.Limits {
	return hostsim.Limits{SMs: p.SMs, ResidentGrids: p.MaxResidentGrids, BlocksPerSM: p.MaxBlocksPerSM,
		ThreadsPerSM: p.MaxThreadsPerSM, SharedMemPerSM: p.SharedMemPerSM,
		SharedMemReservedPerBlock: p.SharedMemReservedPerBlock, RegistersPerSM: p.RegistersPerSM,
		HardwareQueues: p.HardwareQueues}
}

// SetProfile makes p the device's hardware (before its first stream):
// cuda.HostDevice's, called by the backend for cuda.WithDeviceProfile.
func (f *Device) SetProfile(p cuda.DeviceProfile) {
	f.mu.Lock()
	f.profile = p
	if p.SharedMemPerBlockOptin > 0 {
		f.attrs[cuda.AttrMaxSharedMemoryPerBlockOptin] = p.SharedMemPerBlockOptin
	} else {
		delete(f.attrs, cuda.AttrMaxSharedMemoryPerBlockOptin)
	}
	f.mu.Unlock()
	f.hz.SetLimits(limits(p))
}

// Profile is the device's hardware (cuda.HostDevice's).
func (f *Device) Profile() cuda.DeviceProfile {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.profile
}
