package cuda

import (
	"context"
	"errors"
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
