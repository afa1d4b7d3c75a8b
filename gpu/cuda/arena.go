package cuda

import (
	"errors"
	"fmt"
	"sort"
	"unsafe"
)

// The pinned arena: every byte of page-locked host memory the backend uses
// (ring control blocks and slabs, copy staging) comes from a few large
// cuMemHostAlloc(PORTABLE|DEVICEMAP) chunks, reserved when the device
// opens, before any ring kernel runs. cuMemHostAlloc is a launch barrier
// and cuMemFreeHost synchronises the device: beside a persistent kernel
// the first holds back every later launch and the second waits forever.
// Sub-allocating from chunks reserved up front makes neither call on the
// paths that run beside live rings; growing the arena (a new chunk) is the
// rare exception and runs in a device epoch (epoch.go), and the chunks are
// freed only when the device closes, after its rings have stopped.

// Arena sizes.
const (
	// DefaultArenaBytes is the pinned memory reserved when the device
	// opens: room for the staging of two full copy chunks, or for 64 rings
	// of 64 slots of 4 KiB.
	DefaultArenaBytes = 32 << 20
	arenaAlign        = 256 // block alignment (DMA-friendly, a multiple of cache lines)
)

// arenaChunk is one cuMemHostAlloc allocation and its free spans.
type arenaChunk struct {
	host unsafe.Pointer
	dev  DevicePtr
	size uintptr
	free []arenaSpan // sorted by offset, coalesced
}

type arenaSpan struct{ off, size uintptr }

// arena sub-allocates pinned, mapped host memory. It is confined to the
// device's thread (used inside Do only).
type arena struct {
	chunks []*arenaChunk
	live   map[unsafe.Pointer]arenaLive
	grows  int // chunks added after the first
}

type arenaLive struct {
	chunk *arenaChunk
	off   uintptr
	size  uintptr
}

func newArena() *arena { return &arena{live: map[unsafe.Pointer]arenaLive{}} }

func arenaRound(n uintptr) uintptr { return (n + arenaAlign - 1) &^ (arenaAlign - 1) }

// add reserves a chunk of at least bytes (a launch barrier: call it
// before any ring runs or inside a device epoch).
func (a *arena) add(api DeviceAPI, bytes uintptr) error {
	bytes = arenaRound(bytes)
	p, err := api.MemHostAlloc(uint64(bytes), MemHostAllocPortable|MemHostAllocDeviceMap)
	if err != nil {
		return err
	}
	dp, err := api.MemHostGetDevicePointer(p, 0)
	if err != nil {
		return errors.Join(err, api.MemFreeHost(p))
	}
	a.chunks = append(a.chunks, &arenaChunk{host: p, dev: dp, size: bytes, free: []arenaSpan{{0, bytes}}})
	return nil
}

// alloc returns n bytes (rounded up to arenaAlign) of the arena and their
// device address, or ok false when no chunk has room. The memory is not
// zeroed.
func (a *arena) alloc(n uintptr) (host unsafe.Pointer, dev DevicePtr, ok bool) {
	n = arenaRound(max(n, 1))
	for _, c := range a.chunks {
		for i, s := range c.free {
			if s.size < n {
				continue
			}
			if s.size == n {
				c.free = append(c.free[:i], c.free[i+1:]...)
			} else {
				c.free[i] = arenaSpan{s.off + n, s.size - n}
			}
			p := unsafe.Add(c.host, s.off)
			a.live[p] = arenaLive{chunk: c, off: s.off, size: n}
			return p, c.dev + DevicePtr(s.off), true
		}
	}
	return nil, 0, false
}

// free returns a block from alloc; freeing anything else is an error.
func (a *arena) free(p unsafe.Pointer) error {
	l, ok := a.live[p]
	if !ok {
		return fmt.Errorf("cuda: %p is not a live block of the pinned arena", p)
	}
	delete(a.live, p)
	c := l.chunk
	i := sort.Search(len(c.free), func(i int) bool { return c.free[i].off > l.off })
	c.free = append(c.free, arenaSpan{})
	copy(c.free[i+1:], c.free[i:])
	c.free[i] = arenaSpan{l.off, l.size}
	if i+1 < len(c.free) && c.free[i].off+c.free[i].size == c.free[i+1].off { // merge with the next
		c.free[i].size += c.free[i+1].size
		c.free = append(c.free[:i+1], c.free[i+2:]...)
	}
	if i > 0 && c.free[i-1].off+c.free[i-1].size == c.free[i].off { // merge with the previous
		c.free[i-1].size += c.free[i].size
		c.free = append(c.free[:i], c.free[i+1:]...)
	}
	return nil
}

// reserved returns the bytes of all chunks and of the live blocks.
func (a *arena) reserved() (total, used uintptr) {
	for _, c := range a.chunks {
		total += c.size
	}
	for _, l := range a.live {
		used += l.size
	}
	return total, used
}

// release frees every chunk (synchronising: only when no ring runs).
func (a *arena) release(api DeviceAPI) []error {
	var errs []error
	for _, c := range a.chunks {
		errs = append(errs, api.MemFreeHost(c.host))
	}
	a.chunks = nil
	clear(a.live)
	return errs
}
