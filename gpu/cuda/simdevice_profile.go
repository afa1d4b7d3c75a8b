//go:build linux && cgo

package cuda

import "github.com/ringactor/ringactor/gpu/cuda/hostsim"

// The simulated device's hardware: a DeviceProfile (H100Profile unless
// WithDeviceProfile chose another) that its hazard model enforces —
// resident grids, resident blocks, threads, shared memory and registers
// per SM, and hardware work queues (hostsim.Limits). The device runs a
// grid's blocks on far fewer host threads than the profile's SMs hold
// (its launch attributes stay small: fakeAttrs), but residency is counted
// with the profile's numbers. Register use of host-compiled kernels is
// unknown, so registers are not counted.

var _ profiled = (*fakeDevice)(nil)

// limits are the numbers of p the hazard model enforces.
func (p DeviceProfile) limits() hostsim.Limits {
	return hostsim.Limits{SMs: p.SMs, ResidentGrids: p.MaxResidentGrids, BlocksPerSM: p.MaxBlocksPerSM,
		ThreadsPerSM: p.MaxThreadsPerSM, SharedMemPerSM: p.SharedMemPerSM,
		SharedMemReservedPerBlock: p.SharedMemReservedPerBlock, RegistersPerSM: p.RegistersPerSM,
		HardwareQueues: p.HardwareQueues}
}

// setProfile makes p the device's hardware (before its first stream).
func (f *fakeDevice) setProfile(p DeviceProfile) {
	f.mu.Lock()
	f.profile = p
	f.mu.Unlock()
	f.hz.SetLimits(p.limits())
}

// deviceProfile implements profiled.
func (f *fakeDevice) deviceProfile() DeviceProfile {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.profile
}
