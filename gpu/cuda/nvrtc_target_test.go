package cuda

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// nvrtc13Archs is what NVRTC 13.0's nvrtcGetSupportedArchs answers (no
// Volta or older).
var nvrtc13Archs = []int{75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121}

// TestChooseNVRTCArch pins the target choice: the device's own version
// when NVRTC knows it (an H100 gets compute_90 from NVRTC 12 and 13), the
// highest known below it otherwise, never below NVRTC's lowest (NVRTC 13
// refuses compute_70, so an unknown device gets compute_75 and a V100 is
// a typed error), with the release-notes table where the library cannot
// list its architectures.
func TestChooseNVRTCArch(t *testing.T) {
	cc := func(ma, mi int) ComputeCapability { return ComputeCapability{Major: ma, Minor: mi} }
	for _, c := range []struct {
		name         string
		cc           ComputeCapability
		major, minor int
		supported    []int
		want         string
	}{
		{"H100, NVRTC 13 list", cc(9, 0), 13, 0, nvrtc13Archs, "compute_90"},
		{"H100, NVRTC 13 list unsorted", cc(9, 0), 13, 0, []int{121, 75, 90, 100, 80}, "compute_90"},
		{"H100, NVRTC 13 table", cc(9, 0), 13, 0, nil, "compute_90"},
		{"H100, NVRTC 12.2 table", cc(9, 0), 12, 2, nil, "compute_90"},
		{"H100, NVRTC 11.8 table", cc(9, 0), 11, 8, nil, "compute_90"},
		{"H100, NVRTC 11.4 table", cc(9, 0), 11, 4, nil, "compute_86"},
		{"H100, NVRTC 11.0 table", cc(9, 0), 11, 0, nil, "compute_80"},
		{"L4 (8.9), NVRTC 11.8 list without 89", cc(8, 9), 11, 8, []int{35, 37, 50, 70, 75, 80, 86, 87, 90}, "compute_87"},
		{"B200 (10.0), NVRTC 12.4 table", cc(10, 0), 12, 4, nil, "compute_90"},
		{"B200 (10.0), NVRTC 13 list", cc(10, 0), 13, 0, nvrtc13Archs, "compute_100"},
		{"future 13.0 device, NVRTC 13 list", cc(13, 0), 13, 0, nvrtc13Archs, "compute_121"},
		{"A100, NVRTC 11.2 list", cc(8, 0), 11, 2, []int{35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86}, "compute_80"},
		{"V100, NVRTC 12 table", cc(7, 0), 12, 0, nil, "compute_70"},
		{"unknown device, NVRTC 11.8", cc(0, 0), 11, 8, nil, DefaultArch},
		{"unknown device, NVRTC 12 list", cc(0, 0), 12, 4, []int{50, 52, 70, 75, 80, 90}, DefaultArch},
		{"unknown device, NVRTC 13 list", cc(0, 0), 13, 0, nvrtc13Archs, "compute_75"},
		{"unknown device, NVRTC 14 table", cc(0, 0), 14, 0, nil, "compute_75"},
		{"H100, NVRTC 14 table (no upper bound known)", cc(9, 0), 14, 0, nil, "compute_90"},
	} {
		got, err := ChooseNVRTCArch(c.cc, c.major, c.minor, c.supported)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}

	// Below NVRTC's lowest: a typed error naming both versions.
	for _, c := range []struct {
		cc           ComputeCapability
		major, minor int
		supported    []int
	}{
		{cc(7, 0), 13, 0, nvrtc13Archs},
		{cc(7, 0), 13, 0, nil},
		{cc(3, 7), 12, 0, nil},
	} {
		got, err := ChooseNVRTCArch(c.cc, c.major, c.minor, c.supported)
		var de *gpu.DeviceError
		if got != "" || !errors.Is(err, ErrNVRTCArch) || !errors.As(err, &de) || de.Kind != gpu.DeviceUnavailable ||
			!strings.Contains(err.Error(), "sm_") {
			t.Errorf("sm_%d%d with NVRTC %d.%d: %q, %v; want ErrNVRTCArch", c.cc.Major, c.cc.Minor, c.major, c.minor, got, err)
		}
	}
	// The input list is not reordered.
	in := []int{121, 75, 90}
	if _, err := ChooseNVRTCArch(cc(9, 0), 13, 0, in); err != nil || !slices.Equal(in, []int{121, 75, 90}) {
		t.Fatalf("input changed: %v, %v", in, err)
	}
}

// TestNVRTCDefaultTarget checks the loaded NVRTC reports its architectures
// (11.2 and later) and that a source without Arch is compiled for the
// default target this NVRTC accepts.
func TestNVRTCDefaultTarget(t *testing.T) {
	nv, err := LoadNVRTC()
	if err != nil {
		t.Skipf("no NVRTC: %v", err)
	}
	major, minor := nv.Version()
	archs := nv.SupportedArchs()
	if (major > 11 || (major == 11 && minor >= 2)) && len(archs) == 0 {
		t.Fatalf("NVRTC %d.%d lists no architectures", major, minor)
	}
	want, err := ChooseNVRTCArch(ComputeCapability{}, major, minor, archs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := nv.Compile(context.Background(), Source{Code: "extern \"C\" __global__ void k() {}"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(c.Options, "--gpu-architecture="+want) {
		t.Fatalf("options %q, want the target %s", c.Options, want)
	}
	t.Logf("NVRTC %d.%d (%s): architectures %v, default target %s", major, minor, nv.Path(), archs, want)
}

// TestChooseNVRTCTarget pins the image choice of ring programs: a CUBIN
// for the device's exact architecture when NVRTC gives CUBINs and knows
// that version, PTX for ChooseNVRTCArch's virtual architecture otherwise
// (no nvrtcGetCUBIN, a device NVRTC does not know, an unknown device).
func TestChooseNVRTCTarget(t *testing.T) {
	cc := func(ma, mi int) ComputeCapability { return ComputeCapability{Major: ma, Minor: mi} }
	cubin := func(arch string) NVRTCTarget { return NVRTCTarget{Arch: arch, Image: ImageCUBIN} }
	ptx := func(arch string) NVRTCTarget { return NVRTCTarget{Arch: arch, Image: ImagePTX} }
	nvrtc118Archs := []int{35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90}
	for _, c := range []struct {
		name         string
		cc           ComputeCapability
		major, minor int
		supported    []int
		hasCUBIN     bool
		want         NVRTCTarget
	}{
		{"H100/H200, NVRTC 13", cc(9, 0), 13, 0, nvrtc13Archs, true, cubin("sm_90")},
		{"H100, NVRTC 11.8", cc(9, 0), 11, 8, nvrtc118Archs, true, cubin("sm_90")},
		{"A100, NVRTC 11.8", cc(8, 0), 11, 8, nvrtc118Archs, true, cubin("sm_80")},
		{"L4 (8.9), NVRTC 11.8", cc(8, 9), 11, 8, nvrtc118Archs, true, cubin("sm_89")},
		{"A100, NVRTC 11.1 table (no arch list)", cc(8, 0), 11, 1, nil, true, cubin("sm_80")},
		{"H100, NVRTC without nvrtcGetCUBIN", cc(9, 0), 11, 0, nil, false, ptx("compute_80")},
		{"A100, NVRTC 11.0 without nvrtcGetCUBIN", cc(8, 0), 11, 0, nil, false, ptx("compute_80")},
		{"H100, NVRTC 11.8 list without 90", cc(9, 0), 11, 8, []int{70, 75, 80, 86}, true, ptx("compute_86")},
		{"L4 (8.9), list without 89", cc(8, 9), 11, 8, []int{35, 37, 50, 70, 75, 80, 86, 87, 90}, true, ptx("compute_87")},
		{"B200 (10.0), NVRTC 12.4 table", cc(10, 0), 12, 4, nil, true, ptx("compute_90")},
		{"future 13.0 device, NVRTC 13", cc(13, 0), 13, 0, nvrtc13Archs, true, ptx("compute_121")},
		{"unknown device (simulated), NVRTC 11.8", cc(0, 0), 11, 8, nvrtc118Archs, true, ptx(DefaultArch)},
		{"unknown device, NVRTC 13", cc(0, 0), 13, 0, nvrtc13Archs, true, ptx("compute_75")},
	} {
		got, err := ChooseNVRTCTarget(c.cc, c.major, c.minor, c.supported, c.hasCUBIN)
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	// Below NVRTC's lowest version: ChooseNVRTCArch's error, CUBIN or not.
	for _, has := range []bool{true, false} {
		got, err := ChooseNVRTCTarget(cc(7, 0), 13, 0, nvrtc13Archs, has)
		if got != (NVRTCTarget{}) || !errors.Is(err, ErrNVRTCArch) {
			t.Errorf("V100 with NVRTC 13 (cubin %v): %+v, %v; want ErrNVRTCArch", has, got, err)
		}
	}
}

// TestCheckNVRTCDriver pins the version rule: an NVRTC no newer than the
// driver loads either image, a newer one's PTX never loads, a newer minor
// release's CUBIN loads (minor version compatibility), a newer major
// release's does not; an unknown driver version is not checked.
func TestCheckNVRTCDriver(t *testing.T) {
	for _, c := range []struct {
		major, minor, driver int
		image                string
		ok                   bool
	}{
		{12, 4, 12040, ImagePTX, true},   // same version
		{12, 4, 12040, ImageCUBIN, true}, // same version
		{12, 2, 12080, ImagePTX, true},   // older NVRTC
		{11, 8, 13000, ImagePTX, true},   // older major
		{11, 8, 13000, ImageCUBIN, true}, // older major
		{12, 9, 12040, ImagePTX, false},  // newer minor: UNSUPPORTED_PTX_VERSION
		{12, 9, 12040, ImageCUBIN, true}, // newer minor, CUBIN: minor version compatibility
		{13, 0, 12090, ImagePTX, false},  // newer major
		{13, 0, 12090, ImageCUBIN, false},
		{12, 10, 12090, ImagePTX, false}, // two-digit minor: 12.10 > 12.9
		{12, 8, 12100, ImagePTX, true},   // 12.8 < 12.10
		{11, 8, 0, ImagePTX, true},       // unknown driver (the simulated device)
		{13, 0, -1, ImageCUBIN, true},
	} {
		err := CheckNVRTCDriver(c.major, c.minor, c.driver, c.image)
		if c.ok {
			if err != nil {
				t.Errorf("NVRTC %d.%d, driver %d, %s: %v; want nil", c.major, c.minor, c.driver, c.image, err)
			}
			continue
		}
		var de *gpu.DeviceError
		if !errors.Is(err, ErrNVRTCNewerThanDriver) || !errors.As(err, &de) || de.Kind != gpu.DeviceUnavailable ||
			!errors.Is(err, gpu.ErrDeviceNotAvailable) {
			t.Errorf("NVRTC %d.%d, driver %d, %s: %v; want a DeviceUnavailable error wrapping ErrNVRTCNewerThanDriver",
				c.major, c.minor, c.driver, c.image, err)
			continue
		}
		want := []string{fmt.Sprintf("NVRTC %d.%d", c.major, c.minor), fmt.Sprintf("CUDA %d.%d", c.driver/1000, c.driver%1000/10), NVRTCLibraryEnv}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not name %q", err, w)
			}
		}
	}
}

// TestNVRTCCompilesCUBIN compiles a kernel for sm_80 and sm_90 with the
// installed NVRTC: each compilation has a CUBIN, an ELF image of CUDA
// machine code (EM_CUDA) naming the entry, which the driver loads without
// a JIT, and a compilation for a virtual architecture has none.
func TestNVRTCCompilesCUBIN(t *testing.T) {
	nv := needNVRTC(t)
	if !nv.HasCUBIN() {
		major, minor := nv.Version()
		if major > 11 || major == 11 && minor >= 1 {
			t.Fatalf("NVRTC %d.%d (%s) has no nvrtcGetCUBIN", major, minor, nv.Path())
		}
		t.Skipf("NVRTC %d.%d predates nvrtcGetCUBIN", major, minor)
	}
	for _, sm := range []int{80, 90} {
		target, err := nv.TargetFor(ComputeCapability{Major: sm / 10, Minor: sm % 10})
		if err != nil {
			t.Skipf("NVRTC cannot target sm_%d: %v", sm, err)
		}
		if want := (NVRTCTarget{Arch: fmt.Sprintf("sm_%d", sm), Image: ImageCUBIN}); target != want {
			t.Fatalf("target for sm_%d: %+v, want %+v", sm, target, want)
		}
		c, err := nv.Compile(context.Background(), Source{Name: "square.cu", Code: squareSource, Arch: target.Arch, Options: RingProgramOptions})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(c.CUBIN, []byte("\x7fELF")) {
			t.Fatalf("sm_%d: CUBIN of %d bytes does not start with the ELF magic: %q", sm, len(c.CUBIN), c.CUBIN[:min(16, len(c.CUBIN))])
		}
		if m := binary.LittleEndian.Uint16(c.CUBIN[0x12:]); m != 190 {
			t.Fatalf("sm_%d: ELF machine %d, want 190 (EM_CUDA)", sm, m)
		}
		if !bytes.Contains(c.CUBIN, []byte("rc_test_square\x00")) {
			t.Errorf("sm_%d: the CUBIN does not name the entry rc_test_square", sm)
		}
		t.Logf("sm_%d: CUBIN %d bytes, PTX %d bytes", sm, len(c.CUBIN), len(c.PTX))
	}
	c, err := nv.Compile(context.Background(), Source{Name: "square.cu", Code: squareSource, Arch: "compute_80"})
	if err != nil {
		t.Fatal(err)
	}
	if c.CUBIN != nil || !bytes.Contains(c.PTX, []byte(".target sm_80")) {
		t.Fatalf("compute_80: CUBIN %d bytes, PTX %.200q", len(c.CUBIN), c.PTX)
	}
}
