package cuda

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// DeviceProfile is what a device holds at once: the limits that decide how
// many persistent kernels (which never return and so occupy hardware until
// they exit) and one-shot kernels can run side by side. A launch past them
// does not fail on a GPU: it waits, behind kernels that may never end.
//
// On a real device ([NewBackend]) the SM figures come from the device's
// attributes, MaxResidentGrids from [MaxResidentGrids] (it is no
// attribute) and HardwareQueues from CUDA_DEVICE_MAX_CONNECTIONS
// ([HardwareQueues]). The simulated device (simdevice.NewBackend, a
// [HostDevice]) takes it from [WithDeviceProfile], [H100Profile] by
// default, and enforces it
// (see hostsim.Limits): a launch that cannot become resident beside
// persistent kernels, or a command that waits for one on a hardware queue
// other streams share, is a hazard. A zero figure is unknown (not
// enforced by the simulated device).
type DeviceProfile struct {
	Name                      string            // e.g. "NVIDIA H100 80GB HBM3"
	ComputeCapability         ComputeCapability // 9.0 on an H100
	SMs                       int               // multiprocessors: 132 on an H100 SXM, 114 on a PCIe card
	MaxResidentGrids          int               // grids resident on the device at once: 128 from CC 7.5
	MaxBlocksPerSM            int               // resident blocks per SM: 32 on an H100
	MaxThreadsPerSM           int               // resident threads per SM: 2,048 on an H100
	SharedMemPerSM            int               // bytes of shared memory per SM: 228 KiB on an H100
	SharedMemReservedPerBlock int               // bytes the driver reserves per resident block: 1 KiB from CC 8.0
	SharedMemPerBlockOptin    int               // the most shared memory a block may use once its function opts in: 227 KiB on an H100
	RegistersPerSM            int               // 32-bit registers per SM: 64 K
	HardwareQueues            int               // hardware work queues streams share: CUDA_DEVICE_MAX_CONNECTIONS, 8 by default
}

// H100Profile is an H100 SXM5: 132 SMs, 128 resident grids, per SM 32
// blocks, 2,048 threads, 228 KiB of shared memory (1 KiB of it reserved
// per block; a block may use up to 227 KiB once its function opts in) and
// 64 K registers, and 8 hardware work queues (the default of
// CUDA_DEVICE_MAX_CONNECTIONS). It is the simulated device's default
// profile.
func H100Profile() DeviceProfile {
	return DeviceProfile{Name: "NVIDIA H100 SXM5 (profile)", ComputeCapability: ComputeCapability{Major: 9},
		SMs: 132, MaxResidentGrids: 128, MaxBlocksPerSM: 32, MaxThreadsPerSM: 2048, SharedMemPerSM: 228 << 10,
		SharedMemReservedPerBlock: 1 << 10, SharedMemPerBlockOptin: 227 << 10, RegistersPerSM: 64 << 10,
		HardwareQueues: DefaultHardwareQueues}
}

// H200Profile is an H200 SXM (141 GB HBM3e): 132 SMs of compute
// capability 9.0 with an H100's per-SM limits (32 blocks, 2,048 threads,
// 228 KiB of shared memory with 1 KiB reserved per block, 64 K registers),
// 128 resident grids and 8 hardware work queues.
func H200Profile() DeviceProfile {
	p := H100Profile()
	p.Name = "NVIDIA H200 (profile)"
	return p
}

// Validate reports a profile no device has: a negative figure, or
// HardwareQueues above MaxHardwareQueues. The error wraps gpu.ErrArgument.
func (p DeviceProfile) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"SMs", p.SMs}, {"MaxResidentGrids", p.MaxResidentGrids}, {"MaxBlocksPerSM", p.MaxBlocksPerSM},
		{"MaxThreadsPerSM", p.MaxThreadsPerSM}, {"SharedMemPerSM", p.SharedMemPerSM},
		{"SharedMemReservedPerBlock", p.SharedMemReservedPerBlock}, {"SharedMemPerBlockOptin", p.SharedMemPerBlockOptin},
		{"RegistersPerSM", p.RegistersPerSM},
		{"HardwareQueues", p.HardwareQueues}} {
		if f.v < 0 {
			return fmt.Errorf("cuda: device profile %q: %s is %d: %w", p.Name, f.name, f.v, gpu.ErrArgument)
		}
	}
	if p.HardwareQueues > MaxHardwareQueues {
		return fmt.Errorf("cuda: device profile %q: %d hardware queues, at most %d: %w", p.Name, p.HardwareQueues,
			MaxHardwareQueues, gpu.ErrArgument)
	}
	return nil
}

// MaxResidentGrids is the "maximum number of resident grids per device"
// of the CUDA programming guide's table of technical specifications per
// compute capability (it is no device attribute): 128 for 6.0, 7.0 and
// from 7.5 on (an H100 is 9.0), 16 for the Tegra parts 5.3, 6.2 and 7.2,
// 32 for the rest (5.0, 5.2, 6.1 and older).
func MaxResidentGrids(cc ComputeCapability) int {
	switch {
	case cc.Major > 7 || (cc.Major == 7 && cc.Minor >= 5):
		return 128
	case cc == ComputeCapability{Major: 7, Minor: 2} || cc == ComputeCapability{Major: 6, Minor: 2} ||
		cc == ComputeCapability{Major: 5, Minor: 3}:
		return 16
	case cc == ComputeCapability{Major: 7, Minor: 0} || cc == ComputeCapability{Major: 6, Minor: 0}:
		return 128
	}
	return 32
}

// MaxConnectionsEnv names the environment variable that sets how many
// hardware work queues the CUDA driver multiplexes streams onto.
const MaxConnectionsEnv = "CUDA_DEVICE_MAX_CONNECTIONS"

// DefaultHardwareQueues and MaxHardwareQueues are the default and the
// largest value of CUDA_DEVICE_MAX_CONNECTIONS.
const (
	DefaultHardwareQueues = 8
	MaxHardwareQueues     = 32
)

// HardwareQueues returns the hardware work queues a CUDA_DEVICE_MAX_CONNECTIONS
// value gives: DefaultHardwareQueues when it is empty or not a number,
// else the number clamped to 1..MaxHardwareQueues (however many digits it
// has).
func HardwareQueues(env string) int {
	s := strings.TrimSpace(env)
	n, err := strconv.Atoi(s)
	// Out of range, n is the int nearest the number; but Atoi stops at the
	// overflow, before it has seen that the rest (after s[0], a sign or a
	// digit) is digits.
	if err != nil && (!errors.Is(err, strconv.ErrRange) || strings.TrimLeft(s[1:], "0123456789") != "") {
		return DefaultHardwareQueues
	}
	return min(max(n, 1), MaxHardwareQueues)
}

// Attributes of the profile beyond those the launch shapes use.
const (
	AttrMaxSharedMemoryPerMultiprocessor = driverapi.AttrMaxSharedMemoryPerMultiprocessor
	AttrMaxRegistersPerMultiprocessor    = driverapi.AttrMaxRegistersPerMultiprocessor
	AttrMaxBlocksPerMultiprocessor       = driverapi.AttrMaxBlocksPerMultiprocessor
	AttrReservedSharedMemoryPerBlock     = driverapi.AttrReservedSharedMemoryPerBlock
)

// readProfile reads a real device's profile: the SM figures through get
// (cuDeviceGetAttribute), the resident grids from the compute capability,
// the queues from the value of CUDA_DEVICE_MAX_CONNECTIONS. An attribute
// the driver does not know stays 0 (unknown); only the SM count and the
// compute capability are required.
func readProfile(get func(DeviceAttribute) (int, error), name, maxConnections string) (DeviceProfile, error) {
	p := DeviceProfile{Name: name, HardwareQueues: HardwareQueues(maxConnections)}
	for _, q := range []struct {
		attr     DeviceAttribute
		dst      *int
		required bool
	}{
		{AttrComputeCapabilityMajor, &p.ComputeCapability.Major, true},
		{AttrComputeCapabilityMinor, &p.ComputeCapability.Minor, true},
		{AttrMultiprocessorCount, &p.SMs, true},
		{AttrMaxThreadsPerMultiprocessor, &p.MaxThreadsPerSM, false},
		{AttrMaxBlocksPerMultiprocessor, &p.MaxBlocksPerSM, false},
		{AttrMaxSharedMemoryPerMultiprocessor, &p.SharedMemPerSM, false},
		{AttrReservedSharedMemoryPerBlock, &p.SharedMemReservedPerBlock, false},
		{AttrMaxSharedMemoryPerBlockOptin, &p.SharedMemPerBlockOptin, false},
		{AttrMaxRegistersPerMultiprocessor, &p.RegistersPerSM, false},
	} {
		v, err := get(q.attr)
		if err != nil {
			if q.required {
				return p, fmt.Errorf("cuda: reading the device profile: %w", err)
			}
			continue
		}
		*q.dst = v
	}
	p.MaxResidentGrids = MaxResidentGrids(p.ComputeCapability)
	return p, p.Validate()
}

// WithDeviceProfile sets the device profile. On the simulated device
// (simdevice.NewBackend) it is the device's hardware, enforced by its
// hazard model (default [H100Profile]). On a real device it replaces the
// profile read from the device in what [Backend.Profile] reports, for a
// runtime that plans for a smaller device; the hardware keeps its own
// limits. A profile that does not Validate makes the device fail to open
// with that error.
func WithDeviceProfile(p DeviceProfile) BackendOption {
	return func(b *Backend) { b.profile = &p }
}

// Profile returns the device's profile (opening the device on first use),
// or why there is no device.
func (b *Backend) Profile() (DeviceProfile, error) {
	d, err := b.device()
	if err != nil {
		return DeviceProfile{}, err
	}
	return d.profile, nil
}

// openProfile is the profile of an opening device: the WithDeviceProfile
// one, a simulated device's own, or the one read from the device.
func (b *Backend) openProfile(api DeviceAPI, dev Device) (DeviceProfile, error) {
	if b.profile != nil {
		return *b.profile, b.profile.Validate()
	}
	if s, ok := api.(HostDevice); ok {
		return s.Profile(), nil
	}
	name := ""
	if r := b.probe(); len(r.Devices) > 0 {
		name = r.Devices[0].Name
	}
	return readProfile(func(a DeviceAttribute) (int, error) { return api.DeviceGetAttribute(a, dev) }, name,
		os.Getenv(MaxConnectionsEnv))
}
