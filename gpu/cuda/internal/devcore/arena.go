package devcore

import (
	"errors"
	"fmt"
	"sort"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// The pinned arena: every byte of page-locked host memory the backend uses
// (ring control blocks and slabs, copy staging) comes from a few large
// cuMemHostAlloc(PORTABLE|DEVICEMAP) chunks, reserved when the device
// opens, before any ring kernel runs. cuMemHostAlloc is a launch barrier
// and cuMemFreeHost synchronises the device: beside a persistent kernel
// the first holds back every later launch and the second waits forever.
// Sub-allocating from chunks reserved up front makes neither call on the
// paths that run beside live rings; growing the arena (a new chunk) is the
// rare exception and runs in a device epoch (Device.Epoch), and the chunks are
// freed only when the device closes, after its rings have stopped.

// ArenaAlign is the alignment of the arena's blocks (DMA-friendly, a
// multiple of cache lines).
const ArenaAlign = 256

// Flags of cuMemHostAlloc the arena's chunks are allocated with
// (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP).
const hostAllocFlags = 0x01 | 0x02

// arenaChunk is one cuMemHostAlloc allocation and its free spans.
type arenaChunk struct {
	host unsafe.Pointer
	dev  driverapi.DevicePtr
	size uintptr
	free []arenaSpan // sorted by offset, coalesced
}

type arenaSpan struct{ off, size uintptr }

// Arena sub-allocates pinned, mapped host memory. It is confined to the
// device's thread (used inside Do only).
type Arena struct {
	chunks []*arenaChunk
	live   map[unsafe.Pointer]arenaLive
	// Grows counts the chunks added after the first (the owner counts
	// them: a growth is a device epoch).
	Grows int
}

type arenaLive struct {
	chunk *arenaChunk
	off   uintptr
	size  uintptr
}

// NewArena returns an empty arena: Add reserves its first chunk.
func NewArena() *Arena { return &Arena{live: map[unsafe.Pointer]arenaLive{}} }

// ArenaRound rounds n up to ArenaAlign.
func ArenaRound(n uintptr) uintptr { return (n + ArenaAlign - 1) &^ (ArenaAlign - 1) }

// Add reserves a chunk of at least bytes (a launch barrier: call it
// before any ring runs or inside a device epoch).
func (a *Arena) Add(api driverapi.DeviceAPI, bytes uintptr) error {
	bytes = ArenaRound(bytes)
	p, err := api.MemHostAlloc(uint64(bytes), hostAllocFlags)
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

// Alloc returns n bytes (rounded up to ArenaAlign) of the arena and their
// device address, or ok false when no chunk has room. The memory is not
// zeroed.
func (a *Arena) Alloc(n uintptr) (host unsafe.Pointer, dev driverapi.DevicePtr, ok bool) {
	n = ArenaRound(max(n, 1))
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
			return p, c.dev + driverapi.DevicePtr(s.off), true
		}
	}
	return nil, 0, false
}

// Free returns a block from Alloc; freeing anything else is an error.
func (a *Arena) Free(p unsafe.Pointer) error {
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

// Reserved returns the bytes of all chunks and of the live blocks.
func (a *Arena) Reserved() (total, used uintptr) {
	for _, c := range a.chunks {
		total += c.size
	}
	for _, l := range a.live {
		used += l.size
	}
	return total, used
}

// Release frees every chunk (synchronising: only when no ring runs).
func (a *Arena) Release(api driverapi.DeviceAPI) []error {
	var errs []error
	for _, c := range a.chunks {
		errs = append(errs, api.MemFreeHost(c.host))
	}
	a.chunks = nil
	clear(a.live)
	return errs
}
