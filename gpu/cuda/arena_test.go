//go:build linux && cgo

package cuda

import (
	"testing"
	"unsafe"
)

// TestArenaAllocFree: blocks are aligned, disjoint, mapped at the chunk's
// device address; freed neighbours coalesce so the whole chunk is one
// block again; foreign and double frees are errors.
func TestArenaAllocFree(t *testing.T) {
	fd := newFakeDevice(1 << 20)
	a := newArena()
	if err := a.add(fd, 4096); err != nil {
		t.Fatal(err)
	}
	c := a.chunks[0]
	var ps []unsafe.Pointer
	for _, n := range []uintptr{1, 300, 1000, 256} {
		p, dp, ok := a.alloc(n)
		if !ok {
			t.Fatalf("alloc %d failed", n)
		}
		off := uintptr(p) - uintptr(c.host)
		if off%arenaAlign != 0 || dp != c.dev+DevicePtr(off) {
			t.Fatalf("block at offset %d, device %#x (chunk %#x)", off, dp, c.dev)
		}
		ps = append(ps, p)
	}
	if _, used := a.reserved(); used != 256+512+1024+256 {
		t.Fatalf("used %d", used)
	}
	if _, _, ok := a.alloc(4096); ok {
		t.Fatal("a block larger than the room left")
	}
	for _, i := range []int{1, 3, 0, 2} { // frees out of order
		if err := a.free(ps[i]); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.free) != 1 || c.free[0] != (arenaSpan{0, 4096}) {
		t.Fatalf("free spans after freeing everything: %v", c.free)
	}
	if err := a.free(ps[0]); err == nil {
		t.Fatal("double free accepted")
	}
	if p, _, ok := a.alloc(4096); !ok || p != c.host {
		t.Fatal("the whole chunk is not one block again")
	}
	for _, err := range a.release(fd) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if l := fd.Leaks(); l != "" {
		t.Fatal(l)
	}
}
