package devcore

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// hostMem is the part of a device the arena calls: pinned memory as Go
// byte slices, mapped at their host addresses; the rest of DeviceAPI is
// left nil (a call panics).
type hostMem struct {
	driverapi.DeviceAPI
	live map[unsafe.Pointer][]byte
}

func newHostMem() *hostMem { return &hostMem{live: map[unsafe.Pointer][]byte{}} }

func (h *hostMem) MemHostAlloc(bytes uint64, flags uint32) (unsafe.Pointer, error) {
	if flags != hostAllocFlags {
		return nil, fmt.Errorf("flags %#x, want portable|devicemap", flags)
	}
	b := make([]byte, bytes)
	h.live[unsafe.Pointer(&b[0])] = b
	return unsafe.Pointer(&b[0]), nil
}

func (h *hostMem) MemHostGetDevicePointer(p unsafe.Pointer, _ uint32) (driverapi.DevicePtr, error) {
	if _, ok := h.live[p]; !ok {
		return 0, errors.New("not pinned")
	}
	return driverapi.DevicePtr(uintptr(p)) + 1<<40, nil
}

func (h *hostMem) MemFreeHost(p unsafe.Pointer) error {
	if _, ok := h.live[p]; !ok {
		return errors.New("not pinned")
	}
	delete(h.live, p)
	return nil
}

// Leaks names the pinned allocations not freed.
func (h *hostMem) Leaks() string {
	if len(h.live) == 0 {
		return ""
	}
	return fmt.Sprintf("%d pinned allocations leaked", len(h.live))
}

// TestArenaAllocFree: blocks are aligned, disjoint, mapped at the chunk's
// device address; freed neighbours coalesce so the whole chunk is one
// block again; foreign and double frees are errors.
func TestArenaAllocFree(t *testing.T) {
	fd := newHostMem()
	a := NewArena()
	if err := a.Add(fd, 4096); err != nil {
		t.Fatal(err)
	}
	c := a.chunks[0]
	var ps []unsafe.Pointer
	for _, n := range []uintptr{1, 300, 1000, 256} {
		p, dp, ok := a.Alloc(n)
		if !ok {
			t.Fatalf("alloc %d failed", n)
		}
		off := uintptr(p) - uintptr(c.host)
		if off%ArenaAlign != 0 || dp != c.dev+driverapi.DevicePtr(off) {
			t.Fatalf("block at offset %d, device %#x (chunk %#x)", off, dp, c.dev)
		}
		ps = append(ps, p)
	}
	if _, used := a.Reserved(); used != 256+512+1024+256 {
		t.Fatalf("used %d", used)
	}
	if _, _, ok := a.Alloc(4096); ok {
		t.Fatal("a block larger than the room left")
	}
	for _, i := range []int{1, 3, 0, 2} { // frees out of order
		if err := a.Free(ps[i]); err != nil {
			t.Fatal(err)
		}
	}
	if len(c.free) != 1 || c.free[0] != (arenaSpan{0, 4096}) {
		t.Fatalf("free spans after freeing everything: %v", c.free)
	}
	if err := a.Free(ps[0]); err == nil {
		t.Fatal("double free accepted")
	}
	if p, _, ok := a.Alloc(4096); !ok || p != c.host {
		t.Fatal("the whole chunk is not one block again")
	}
	for _, err := range a.Release(fd) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if l := fd.Leaks(); l != "" {
		t.Fatal(l)
	}
}
