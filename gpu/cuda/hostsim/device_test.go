//go:build linux && cgo

package hostsim

import (
	"errors"
	"math"
	"testing"
	"unsafe"
)

// TestDeviceLaunchByName runs rc_scale_f32 through Launch with packed
// parameter slots, and checks the address and launch checks.
func TestDeviceLaunchByName(t *testing.T) {
	d := NewDevice(1 << 16)
	const n = 300
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	a, err := d.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CopyIn(a, unsafe.Pointer(&in[0]), 4*n); err != nil {
		t.Fatal(err)
	}
	args := []uint64{a, out, uint64(math.Float32bits(-2)), n}
	if err := d.Launch("rc_scale_f32", [3]uint32{2, 1, 1}, [3]uint32{64, 1, 1}, args); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	if err := d.CopyOut(unsafe.Pointer(&got[0]), out, 4*n); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != -2*float32(i) {
			t.Fatalf("[%d] = %v", i, v)
		}
	}
	if d.Launches("rc_scale_f32") != 1 {
		t.Fatal("launch not counted")
	}
	if p, ok := d.KernelParams("rc_matmul_f64"); !ok || p != 6 {
		t.Fatalf("KernelParams(rc_matmul_f64) = %d, %v", p, ok)
	}
	for _, c := range []struct {
		name  string
		grid  [3]uint32
		block [3]uint32
		args  []uint64
		want  error
	}{
		{"nope", [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, args, ErrUnknownKernel},
		{"rc_scale_f32", [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, args[:3], ErrBadLaunch},
		{"rc_scale_f32", [3]uint32{0, 1, 1}, [3]uint32{1, 1, 1}, args, ErrBadLaunch},
		{"rc_scale_f32", [3]uint32{1, 1, 1}, [3]uint32{1025, 1, 1}, args, ErrBadLaunch},
	} {
		if err := d.Launch(c.name, c.grid, c.block, c.args); !errors.Is(err, c.want) {
			t.Errorf("Launch(%s, %v, %v, %d args) = %v, want %v", c.name, c.grid, c.block, len(c.args), err, c.want)
		}
	}
	if err := d.CopyIn(a+4, unsafe.Pointer(&in[0]), 4*n); !errors.Is(err, ErrBadAddress) {
		t.Errorf("copy past the allocation = %v", err)
	}
	if _, err := d.Alloc(1 << 16); !errors.Is(err, ErrDeviceOutOfMemory) {
		t.Errorf("alloc beyond the limit = %v", err)
	}
	for _, p := range []uint64{a, out} {
		if err := d.Free(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Free(a); !errors.Is(err, ErrBadAddress) {
		t.Errorf("double free = %v", err)
	}
	if n, b := d.Used(); n != 0 || b != 0 {
		t.Errorf("used after freeing: %d, %d", n, b)
	}
	h, err := d.HostAlloc(128)
	if err != nil {
		t.Fatal(err)
	}
	if dp, err := d.DevicePointer(h); err != nil || dp != uint64(uintptr(h)) {
		t.Errorf("DevicePointer = %#x, %v", dp, err)
	}
	if err := d.HostFree(h); err != nil || d.HostAllocs() != 0 {
		t.Fatal(err)
	}
}
