package cuda

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// The NVRTC target: the virtual architecture (compute_XY) a source is
// compiled for. PTX JIT-compiles forward, so the best target is the
// device's own SM version when NVRTC knows it, else the highest one below
// it that NVRTC knows — never one NVRTC no longer accepts: NVRTC 13 refuses
// compute_70 (its lowest is compute_75), and an H100 (9.0) gets compute_90.
//
// Ring programs go further ([ChooseNVRTCTarget]): when NVRTC knows the
// device's own version and gives CUBINs, they are compiled for the real
// architecture (sm_90), and the driver loads the machine code without the
// PTX JIT — the load in a device epoch then takes milliseconds, not the
// hundreds a JIT takes with every ring parked.

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

// Image kinds of a compiled module (driverapi's).
const (
	// ImageCUBIN is machine code for one real architecture (sm_90), an ELF
	// image the driver loads without a JIT.
	ImageCUBIN = driverapi.ImageCUBIN
	// ImagePTX is PTX for a virtual architecture (compute_90), which the
	// driver JIT-compiles for the device as it loads it.
	ImagePTX = driverapi.ImagePTX
)

// NVRTCTarget is what NVRTC compiles a ring program into for one device:
// Arch, the --gpu-architecture ("sm_90" or "compute_90"), and Image,
// [ImageCUBIN] or [ImagePTX].
type NVRTCTarget = driverapi.NVRTCTarget

// ChooseNVRTCTarget returns what to compile a ring program into on a
// device of compute capability cc with NVRTC nvrtcMajor.nvrtcMinor, whose
// supported SM versions are supported (as for [ChooseNVRTCArch]) and which
// gives CUBINs when cubin is true (nvrtcGetCUBIN, CUDA 11.1+).
//
// A CUBIN for the device's exact architecture (9.0 → sm_90) when NVRTC
// gives CUBINs and supports that version; else PTX for [ChooseNVRTCArch]'s
// virtual architecture: NVRTC without nvrtcGetCUBIN, a device newer than
// NVRTC knows (its highest version below, JIT-compiled forward), or an
// unknown capability (0.0, the simulated device: the default target). A
// device below NVRTC's lowest version is ChooseNVRTCArch's error. It is a
// pure function.
func ChooseNVRTCTarget(cc ComputeCapability, nvrtcMajor, nvrtcMinor int, supported []int, cubin bool) (NVRTCTarget, error) {
	arch, err := ChooseNVRTCArch(cc, nvrtcMajor, nvrtcMinor, supported)
	if err != nil {
		return NVRTCTarget{}, err
	}
	if sm := cc.Major*10 + cc.Minor; cubin && sm > 0 && arch == fmt.Sprintf("compute_%d", sm) {
		return NVRTCTarget{Arch: fmt.Sprintf("sm_%d", sm), Image: ImageCUBIN}, nil
	}
	return NVRTCTarget{Arch: arch, Image: ImagePTX}, nil
}

// ErrNVRTCNewerThanDriver is the cause of the *gpu.DeviceError
// (gpu.DeviceUnavailable) that says the driver cannot load what the
// loaded NVRTC compiles: NVRTC's CUDA version is newer than the driver's
// ([CheckNVRTCDriver]). Loading a ring program reports it before any
// device epoch, instead of a module load failing inside one.
var ErrNVRTCNewerThanDriver = errors.New("cuda: NVRTC is newer than the driver")

// CheckNVRTCDriver says whether a driver supporting CUDA driverVersion
// (cuDriverGetVersion: 1000*major + 10*minor) loads an image of kind
// image ([ImageCUBIN] or [ImagePTX]) compiled by NVRTC
// nvrtcMajor.nvrtcMinor. An NVRTC no newer than the driver is fine, and so
// is an unknown driver version (0: the simulated device). PTX of a newer
// NVRTC is refused (the driver fails it with
// CUDA_ERROR_UNSUPPORTED_PTX_VERSION); so is a CUBIN of a newer major
// release. A CUBIN of the driver's major release but a newer minor one is
// accepted: CUDA's minor version compatibility loads it (a program using a
// feature of the newer release may still fail to load). A refusal is a
// *gpu.DeviceError of kind gpu.DeviceUnavailable wrapping
// [ErrNVRTCNewerThanDriver]. It is a pure function.
func CheckNVRTCDriver(nvrtcMajor, nvrtcMinor, driverVersion int, image string) error {
	if driverVersion <= 0 {
		return nil
	}
	dMajor, dMinor := driverVersion/1000, driverVersion%1000/10
	if nvrtcMajor < dMajor || nvrtcMajor == dMajor && nvrtcMinor <= dMinor {
		return nil
	}
	if image == ImageCUBIN && nvrtcMajor == dMajor {
		return nil
	}
	what := "its PTX (the driver's JIT refuses a newer PTX version)"
	if image == ImageCUBIN {
		what = "its CUBINs (machine code of a newer major release)"
	}
	return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: BackendName,
		Reason: fmt.Sprintf("NVRTC %d.%d is newer than the driver (CUDA %d.%d), which cannot load %s: "+
			"install a driver for CUDA %d.%d or later, or point %s at an NVRTC of CUDA %d.%d or earlier",
			nvrtcMajor, nvrtcMinor, dMajor, dMinor, what, nvrtcMajor, nvrtcMinor, NVRTCLibraryEnv, dMajor, dMinor),
		Err: ErrNVRTCNewerThanDriver}
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

// TargetFor returns what this NVRTC compiles a ring program into on a
// device of capability cc; see [ChooseNVRTCTarget].
func (n *NVRTC) TargetFor(cc ComputeCapability) (NVRTCTarget, error) {
	return ChooseNVRTCTarget(cc, n.major, n.minor, n.archs, n.cubin)
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

// RingProgramTarget returns what ring programs are compiled into for this
// backend's device ([NVRTC.TargetFor] of device 0's compute capability: a
// CUBIN for sm_90 on an H100 with a current NVRTC; PTX on the simulated
// device, which has no capability), checked against the driver's version
// ([CheckNVRTCDriver]). Errors: no NVRTC ([LoadNVRTC]'s
// *gpu.DeviceError), a device NVRTC cannot target ([ErrNVRTCArch]), an
// NVRTC whose image the driver cannot load ([ErrNVRTCNewerThanDriver]; the
// target is returned with it).
func (b *Backend) RingProgramTarget() (NVRTCTarget, error) {
	nv, err := LoadNVRTC()
	if err != nil {
		return NVRTCTarget{}, err
	}
	t, err := nv.TargetFor(b.computeCapability())
	if err != nil {
		return NVRTCTarget{}, err
	}
	return t, CheckNVRTCDriver(nv.major, nv.minor, b.probe().DriverVersion, t.Image)
}

// computeCapability is device 0's compute capability as probed (0.0 when
// unknown, e.g. on the simulated device).
func (b *Backend) computeCapability() ComputeCapability {
	if r := b.probe(); len(r.Devices) > 0 {
		return r.Devices[0].ComputeCapability
	}
	return ComputeCapability{}
}
