package cuda

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ringactor/ringactor/gpu"
)

// The NVRTC target: the virtual architecture (compute_XY) a source is
// compiled for. PTX JIT-compiles forward, so the best target is the
// device's own SM version when NVRTC knows it, else the highest one below
// it that NVRTC knows — never one NVRTC no longer accepts: NVRTC 13 refuses
// compute_70 (its lowest is compute_75), and an H100 (9.0) gets compute_90.

// ErrNVRTCArch is the cause of the *gpu.DeviceError (gpu.DeviceUnavailable)
// that says the loaded NVRTC cannot compile for the device: its compute
// capability is below the lowest architecture NVRTC supports.
var ErrNVRTCArch = errors.New("cuda: NVRTC cannot target this device")

// nvrtcArchRange returns the lowest and highest SM versions (e.g. 50 and
// 90) that NVRTC major.minor compiles for, from the CUDA release notes;
// the fallback when the library has no nvrtcGetSupportedArchs (before
// 11.2). hi is 0 when unknown (a release newer than this table): no upper
// bound is applied then.
func nvrtcArchRange(major, minor int) (lo, hi int) {
	switch {
	case major <= 10:
		return 30, 75
	case major == 11 && minor == 0:
		return 35, 80
	case major == 11 && minor <= 4:
		return 35, 86
	case major == 11 && minor <= 7:
		return 35, 87
	case major == 11:
		return 35, 90
	case major == 12 && minor <= 7:
		return 50, 90
	case major == 12 && minor == 8:
		return 50, 120
	case major == 12:
		return 50, 121
	case major == 13:
		return 75, 121
	default:
		return 75, 0
	}
}

// ChooseNVRTCArch returns the virtual architecture ("compute_90") to
// compile device code for on a device of compute capability cc with NVRTC
// nvrtcMajor.nvrtcMinor, whose nvrtcGetSupportedArchs gave supported (SM
// versions such as 75, 80, 90; empty when the library has no such entry,
// and then the version's range from the release notes is used).
//
// The choice is the highest supported version not above the device's own
// (9.0 → compute_90; 8.9 with an NVRTC that lacks 89 → compute_87 or
// lower). An unknown capability (0.0: the simulated device, or no device)
// gets [DefaultArch] (compute_70), raised to the lowest supported version.
// A device below the lowest supported version (a 7.0 GPU with NVRTC 13) is
// a *gpu.DeviceError of kind gpu.DeviceUnavailable wrapping
// [ErrNVRTCArch]. It is a pure function.
func ChooseNVRTCArch(cc ComputeCapability, nvrtcMajor, nvrtcMinor int, supported []int) (string, error) {
	archs := slices.Clone(supported)
	slices.Sort(archs)
	lo, hi := nvrtcArchRange(nvrtcMajor, nvrtcMinor)
	if len(archs) > 0 {
		lo, hi = archs[0], archs[len(archs)-1]
	}
	sm := cc.Major*10 + cc.Minor
	if sm <= 0 {
		return fmt.Sprintf("compute_%d", max(70, lo)), nil
	}
	if sm < lo {
		return "", &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: BackendName,
			Reason: fmt.Sprintf("NVRTC %d.%d compiles for compute_%d and later, the device is sm_%d", nvrtcMajor, nvrtcMinor, lo, sm),
			Err:    ErrNVRTCArch}
	}
	if len(archs) == 0 {
		if hi > 0 && sm > hi {
			sm = hi
		}
		return fmt.Sprintf("compute_%d", sm), nil
	}
	best := lo
	for _, a := range archs {
		if a <= sm {
			best = a
		}
	}
	return fmt.Sprintf("compute_%d", best), nil
}

// SupportedArchs returns the SM versions the loaded NVRTC compiles for
// (nvrtcGetSupportedArchs, ascending, e.g. 75 … 120), or nil when the
// library predates that entry point (before CUDA 11.2).
func (n *NVRTC) SupportedArchs() []int { return slices.Clone(n.archs) }

// ArchFor returns the target this NVRTC compiles for on a device of
// capability cc; see [ChooseNVRTCArch].
func (n *NVRTC) ArchFor(cc ComputeCapability) (string, error) {
	return ChooseNVRTCArch(cc, n.major, n.minor, n.archs)
}

// defaultArch is the target of a source that names none: compute_70, or
// the lowest this NVRTC supports when that is higher (NVRTC 13:
// compute_75).
func (n *NVRTC) defaultArch() string {
	a, _ := ChooseNVRTCArch(ComputeCapability{}, n.major, n.minor, n.archs)
	return a
}

// NVRTCArch returns the NVRTC target for this backend's device (device 0's
// compute capability from the driver; the simulated device has none and
// gets the default target) and NVRTC's version. Errors: no NVRTC (the
// *gpu.DeviceError of [LoadNVRTC]), or a device NVRTC cannot target
// ([ErrNVRTCArch]).
func (b *Backend) NVRTCArch() (string, error) {
	nv, err := LoadNVRTC()
	if err != nil {
		return "", err
	}
	return nv.ArchFor(b.computeCapability())
}

// computeCapability is device 0's compute capability as probed (0.0 when
// unknown, e.g. on the simulated device).
func (b *Backend) computeCapability() ComputeCapability {
	if r := b.probe(); len(r.Devices) > 0 {
		return r.Devices[0].ComputeCapability
	}
	return ComputeCapability{}
}
