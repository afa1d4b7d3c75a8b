package cuda

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// TestMaxResidentGrids: the resident-grid limit of the CUDA programming
// guide's table, by compute capability (it is no device attribute).
func TestMaxResidentGrids(t *testing.T) {
	for cc, want := range map[ComputeCapability]int{
		{9, 0}: 128, {8, 9}: 128, {8, 7}: 128, {8, 6}: 128, {8, 0}: 128, {7, 5}: 128, {7, 0}: 128, {10, 0}: 128, {12, 0}: 128,
		{7, 2}: 16, {6, 2}: 16, {5, 3}: 16,
		{6, 0}: 128, {6, 1}: 32, {5, 2}: 32, {5, 0}: 32, {3, 5}: 32,
	} {
		if got := MaxResidentGrids(cc); got != want {
			t.Errorf("MaxResidentGrids(%v) = %d, want %d", cc, got, want)
		}
	}
}

// TestHardwareQueues: CUDA_DEVICE_MAX_CONNECTIONS as the driver reads it:
// 8 when unset or not a number, else clamped to 1..32.
func TestHardwareQueues(t *testing.T) {
	for env, want := range map[string]int{"": 8, "8": 8, "1": 1, "32": 32, "33": 32, "1000": 32, "0": 1, "-4": 1,
		" 16 ": 16, "four": 8, "4.5": 8, "99999999999999999999": 32, "-99999999999999999999": 1, "20000000000000000000A": 8} {
		if got := HardwareQueues(env); got != want {
			t.Errorf("HardwareQueues(%q) = %d, want %d", env, got, want)
		}
	}
}

// TestH100Profile: the simulated device's default hardware.
func TestH100Profile(t *testing.T) {
	p := H100Profile()
	if p.SMs != 132 || p.MaxResidentGrids != 128 || p.MaxBlocksPerSM != 32 || p.MaxThreadsPerSM != 2048 ||
		p.SharedMemPerSM != 228<<10 || p.RegistersPerSM != 65536 || p.HardwareQueues != 8 ||
		p.ComputeCapability != (ComputeCapability{9, 0}) || p.MaxResidentGrids != MaxResidentGrids(p.ComputeCapability) {
		t.Fatalf("H100Profile = %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []DeviceProfile{{SMs: -1}, {HardwareQueues: 33}, {SharedMemPerSM: -5}, {SharedMemPerBlockOptin: -1}} {
		if err := bad.Validate(); !errors.Is(err, gpu.ErrArgument) {
			t.Errorf("Validate(%+v) = %v", bad, err)
		}
	}
}

// TestReadProfile: a real device's profile — SM figures from attributes,
// resident grids from the compute capability, queues from the variable;
// an attribute an older driver lacks stays 0, a missing SM count or
// compute capability is an error.
func TestReadProfile(t *testing.T) {
	h100 := map[DeviceAttribute]int{
		AttrComputeCapabilityMajor: 9, AttrComputeCapabilityMinor: 0, AttrMultiprocessorCount: 114,
		AttrMaxThreadsPerMultiprocessor: 2048, AttrMaxBlocksPerMultiprocessor: 32,
		AttrMaxSharedMemoryPerMultiprocessor: 233472, AttrReservedSharedMemoryPerBlock: 1024,
		AttrMaxRegistersPerMultiprocessor: 65536, AttrMaxSharedMemoryPerBlockOptin: 232448,
	}
	get := func(attrs map[DeviceAttribute]int) func(DeviceAttribute) (int, error) {
		return func(a DeviceAttribute) (int, error) {
			v, ok := attrs[a]
			if !ok {
				return 0, fmt.Errorf("attribute %d: CUDA_ERROR_INVALID_VALUE", a)
			}
			return v, nil
		}
	}
	p, err := readProfile(get(h100), "NVIDIA H100 PCIe", "")
	want := DeviceProfile{Name: "NVIDIA H100 PCIe", ComputeCapability: ComputeCapability{9, 0}, SMs: 114, MaxResidentGrids: 128,
		MaxBlocksPerSM: 32, MaxThreadsPerSM: 2048, SharedMemPerSM: 233472, SharedMemReservedPerBlock: 1024,
		SharedMemPerBlockOptin: 232448, RegistersPerSM: 65536, HardwareQueues: 8}
	if err != nil || p != want {
		t.Fatalf("readProfile = %+v, %v; want %+v", p, err, want)
	}
	xavier := map[DeviceAttribute]int{AttrComputeCapabilityMajor: 7, AttrComputeCapabilityMinor: 2, AttrMultiprocessorCount: 8,
		AttrMaxThreadsPerMultiprocessor: 2048}
	p, err = readProfile(get(xavier), "Xavier", "32")
	if err != nil || p.MaxResidentGrids != 16 || p.HardwareQueues != 32 || p.MaxBlocksPerSM != 0 || p.SMs != 8 {
		t.Fatalf("readProfile without newer attributes = %+v, %v", p, err)
	}
	delete(xavier, AttrMultiprocessorCount)
	if _, err := readProfile(get(xavier), "broken", ""); err == nil {
		t.Fatal("readProfile without an SM count succeeded")
	}
}
