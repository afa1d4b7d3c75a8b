//go:build linux && cgo

package hostsim

import (
	"errors"
	"testing"
	"unsafe"
)

// smemWord is rc_smem_word of kernels/oneshot.cu.
func smemWord(b, i uint32) uint32 { return ((i + 1) * 2654435761) ^ (b*0x9E3779B9 + 0x7F4A7C15) }

// smemSum is what block b of rc_smem_probe writes over words words.
func smemSum(b, words uint32) uint32 {
	var s uint32
	for i := range words {
		s += smemWord(b, i)
	}
	return s
}

// TestSmemProbe runs rc_smem_probe on the host with ~100 KiB of dynamic
// shared memory a block: each block's sum is that of every word it
// stored, so each word its threads wrote was read back by another thread
// from the launch's own buffer. Too little memory for the block writes 0;
// a block that is no power of two is refused.
func TestSmemProbe(t *testing.T) {
	const words = 100 << 10 / 4
	out := make([]uint32, 3)
	if err := SmemProbe(out, 256, words); err != nil {
		t.Fatal(err)
	}
	for b, got := range out {
		if want := smemSum(uint32(b), words); got != want || got == 0 {
			t.Fatalf("block %d: %#x, want %#x", b, got, want)
		}
	}
	if out[0] == out[1] {
		t.Fatal("blocks 0 and 1 summed the same words")
	}
	if err := SmemProbe(out, 64, 63); err != nil || out[0] != 0 || out[2] != 0 {
		t.Fatalf("fewer words than threads: %v, %v", err, out)
	}
	if err := SmemProbe(out, 96, words); !errors.Is(err, errLaunch) {
		t.Fatalf("a block of 96 threads: %v", err)
	}
	if err := SmemProbe(nil, 64, words); !errors.Is(err, errLaunch) {
		t.Fatalf("no blocks: %v", err)
	}
}

// TestLaunchSmemByName runs rc_smem_probe through the simulated device's
// table launch (what cuLaunchKernel of the simulated device calls) with
// its dynamic shared memory.
func TestLaunchSmemByName(t *testing.T) {
	d := NewDevice(1 << 16)
	const blocks, words = 2, 64 << 10 / 4
	out, err := d.Alloc(4 * blocks)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Free(out) }()
	if n, ok := d.KernelParams("rc_smem_probe"); !ok || n != 2 {
		t.Fatalf("KernelParams(rc_smem_probe) = %d, %v", n, ok)
	}
	if err := d.LaunchSmem("rc_smem_probe", [3]uint32{blocks, 1, 1}, [3]uint32{128, 1, 1}, 4*words, []uint64{out, words}); err != nil {
		t.Fatal(err)
	}
	got := make([]uint32, blocks)
	if err := d.CopyOut(unsafe.Pointer(&got[0]), out, 4*blocks); err != nil {
		t.Fatal(err)
	}
	for b, v := range got {
		if want := smemSum(uint32(b), words); v != want {
			t.Fatalf("block %d: %#x, want %#x", b, v, want)
		}
	}
}
