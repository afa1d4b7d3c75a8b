package actors

// OnDeviceCapacity says what a device ring kernel does when its device has
// no room for it: its program's mailbox table is full, or the programs
// have used up the device's resident grids (gpu.ErrDeviceCapacity). On a
// GPU such a kernel would otherwise wait forever; here it never waits.
type OnDeviceCapacity uint8

const (
	// CapacityFallback runs the kernel's Go fallback: Placement() is
	// PlacementCPU and the runtime logs the limit that was reached. The
	// default.
	CapacityFallback OnDeviceCapacity = iota
	// CapacityError makes Launch return the *gpu.DeviceError (matching
	// gpu.ErrDeviceCapacity and gpu.ErrDevice) at once; nothing is
	// launched. A restart that finds no room still falls back.
	CapacityError
)

// WithOnDeviceCapacity chooses what a device ring kernel
// (NewDeviceRingKernel, NewDeviceKernel) does when the device has no room
// for it (default CapacityFallback). Other kernels ignore it.
func WithOnDeviceCapacity(o OnDeviceCapacity) KernelOption {
	return func(ko *kernelOptions) { ko.onCapacity = o }
}
