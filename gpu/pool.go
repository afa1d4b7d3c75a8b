package gpu

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// cacheLine is the padding unit of the pool's hot fields.
const cacheLine = 64

// Pool size classes: powers of two of bytes, from 1<<minClassShift up to
// 1<<(bits.UintSize-2).
const (
	minClassShift = 8 // 256 B
	numClasses    = bits.UintSize - 2 - minClassShift + 1
)

// DefaultPoolMaxBytes is how many bytes of host storage, and separately of
// device memory, a Pool keeps at most unless told otherwise: 1 GiB.
const DefaultPoolMaxBytes int64 = 1 << 30

// classOf returns the size class of a buffer of nbytes bytes (nbytes > 0).
func classOf(nbytes int) (int, bool) {
	if nbytes <= 1<<minClassShift {
		return 0, true
	}
	c := bits.Len(uint(nbytes-1)) - minClassShift
	return c, c < numClasses
}

// classBytes is the size in bytes of the storage of class c.
func classBytes(c int) int { return 1 << (c + minClassShift) }

// freeList is the stack of free host storage of one size class, on its own
// cache lines so that classes do not contend. Its counters are guarded by
// mu, which Get and Free take anyway.
type freeList struct {
	mu                        sync.Mutex
	free                      []*hostStorage
	hits, misses, puts, drops uint64
	_                         [(cacheLine - (unsafe.Sizeof(sync.Mutex{})+unsafe.Sizeof([]*hostStorage(nil))+4*8)%cacheLine) % cacheLine]byte
}

// deviceLists are the free device allocations of one allocator, by class.
type deviceLists [numClasses][]DeviceMemory

// Pool recycles the storage of buffers: host memory, and device memory per
// allocator, in power-of-two size classes of at least 256 bytes. Get hands
// out a buffer whose storage comes from the free list of its class (a hit)
// or from a new allocation (a miss); Free on that buffer puts the storage
// back, unless the pool already holds its maximum (WithMaxBytes,
// WithMaxDeviceBytes), in which case the storage is dropped (host) or
// freed (device). Free lists are mutex-protected stacks, so a steady
// workload reaches a steady state with no misses and no garbage but the
// buffer headers.
//
// Every Get returns a new *UnifiedBuffer header; only storage is recycled.
// A stale reference to a freed buffer therefore stays freed and can never
// reach the storage of the buffer that reuses it.
//
// A Pool is safe for concurrent use. Create one with NewPool; do not copy
// it.
type Pool struct {
	maxAlloc       int64 // limit on one allocation; 0: MaxAllocation()
	maxBytes       int64
	maxDeviceBytes int64
	held           atomic.Int64 // bytes of host storage on the free lists
	classes        [numClasses]freeList

	devMu     sync.Mutex // guards everything below
	dev       map[Allocator]*deviceLists
	devHeld   int64
	devHits   uint64
	devMisses uint64
	devPuts   uint64
	devDrops  uint64
}

// PoolOption configures a Pool.
type PoolOption func(*Pool)

// WithMaxBytes sets how many bytes of free host storage the pool keeps at
// most (DefaultPoolMaxBytes by default); storage freed beyond that is
// dropped for the garbage collector. 0 keeps nothing.
func WithMaxBytes(n int64) PoolOption {
	return func(p *Pool) { p.maxBytes = max(n, 0) }
}

// WithMaxDeviceBytes sets how many bytes of free device memory the pool
// keeps at most, all allocators together (DefaultPoolMaxBytes by default);
// device memory freed beyond that is freed. 0 keeps nothing.
func WithMaxDeviceBytes(n int64) PoolOption {
	return func(p *Pool) { p.maxDeviceBytes = max(n, 0) }
}

// WithMaxAllocation sets the limit, in bytes, on the host storage of one
// buffer the pool allocates; a Get above it fails with a *MemoryError
// wrapping ErrOutOfMemory. Storage comes in power-of-two size classes, so
// the limit applies to the request rounded up to its class. n <= 0 (the
// default) uses the process-wide limit, MaxAllocation, at each Get.
func WithMaxAllocation(n int64) PoolOption {
	return func(p *Pool) { p.maxAlloc = max(n, 0) }
}

// maxAllocation is the pool's limit on one allocation.
func (p *Pool) maxAllocation() int64 {
	if p.maxAlloc > 0 {
		return p.maxAlloc
	}
	return MaxAllocation()
}

// NewPool returns an empty pool.
func NewPool(opts ...PoolOption) *Pool {
	p := &Pool{maxBytes: DefaultPoolMaxBytes, maxDeviceBytes: DefaultPoolMaxBytes}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Get returns a buffer of dt and shape whose host storage comes from the
// pool. Its contents are undefined (whatever the storage last held): use
// GetZeroed, or write every element, before reading it. Like any new
// buffer it is host-dirty. Errors are as for Zeros, with the pool's limit
// (WithMaxAllocation) applied to the size class; a buffer too large for
// the largest class is a *MemoryError.
func (p *Pool) Get(dt DType, shape Shape) (*UnifiedBuffer, error) {
	const op = "Pool.Get"
	n, nbytes, err := layout(op, dt, shape)
	if err != nil {
		return nil, err
	}
	c, ok := classOf(nbytes)
	if !ok {
		return nil, &MemoryError{Op: op, Reason: fmt.Sprintf("%d bytes is too large to pool", nbytes), Err: ErrOutOfMemory}
	}
	if err := checkAllocation(op, classBytes(c), p.maxAllocation()); err != nil {
		return nil, err
	}
	fl := &p.classes[c]
	var st *hostStorage
	fl.mu.Lock()
	if k := len(fl.free); k > 0 {
		st = fl.free[k-1]
		fl.free[k-1] = nil
		fl.free = fl.free[:k-1]
		fl.hits++
	} else {
		fl.misses++
	}
	fl.mu.Unlock()
	if st != nil {
		p.held.Add(-int64(classBytes(c)))
	} else {
		if st, err = allocHost(op, classBytes(c)); err != nil {
			return nil, err
		}
		st.class = c
	}
	b := &UnifiedBuffer{dtype: dt, n: n, hostDirty: true, storage: st, pool: p, class: c}
	b.host = st.bytes(nbytes)
	b.setShape(shape)
	return b, nil
}

// GetBatch fills outs with len(outs) buffers of dt and shape, each as Get
// returns one, for a caller that needs many alike (compute's ExecuteBatch):
// one layout and limit check, one lock of the size class's free list, and
// one allocation for all the headers, whatever len(outs). Each buffer is
// freed on its own as usual; headers are not recycled, so a stale handle
// stays freed. On error, outs is cleared and the pool keeps everything it
// handed out (nothing leaks).
func (p *Pool) GetBatch(dt DType, shape Shape, outs []*UnifiedBuffer) error {
	const op = "Pool.GetBatch"
	if len(outs) == 0 {
		return nil
	}
	n, nbytes, err := layout(op, dt, shape)
	if err != nil {
		return err
	}
	c, ok := classOf(nbytes)
	if !ok {
		return &MemoryError{Op: op, Reason: fmt.Sprintf("%d bytes is too large to pool", nbytes), Err: ErrOutOfMemory}
	}
	if err := checkAllocation(op, classBytes(c), p.maxAllocation()); err != nil {
		return err
	}
	hdrs := make([]UnifiedBuffer, len(outs))
	fl := &p.classes[c]
	fl.mu.Lock()
	k := min(len(fl.free), len(hdrs))
	for i := range k {
		j := len(fl.free) - 1 - i
		hdrs[i].storage = fl.free[j]
		fl.free[j] = nil
	}
	fl.free = fl.free[:len(fl.free)-k]
	fl.hits += uint64(k)
	fl.misses += uint64(len(hdrs) - k)
	fl.mu.Unlock()
	if k > 0 {
		p.held.Add(-int64(k * classBytes(c)))
	}
	for i := k; i < len(hdrs); i++ {
		st, err := allocHost(op, classBytes(c))
		if err != nil {
			for j := range hdrs[:i] {
				p.putHost(hdrs[j].storage)
			}
			clear(outs)
			return err
		}
		st.class = c
		hdrs[i].storage = st
	}
	for i := range hdrs {
		b := &hdrs[i]
		b.dtype, b.n, b.hostDirty, b.pool, b.class = dt, n, true, p, c
		b.host = b.storage.bytes(nbytes)
		b.setShape(shape)
		outs[i] = b
	}
	return nil
}

// GetZeroed is Get with every element set to zero.
func (p *Pool) GetZeroed(dt DType, shape Shape) (*UnifiedBuffer, error) {
	b, err := p.Get(dt, shape)
	if err != nil {
		return nil, err
	}
	clear(b.host)
	return b, nil
}

// putHost returns storage to its free list, or drops it when the pool
// holds its maximum.
func (p *Pool) putHost(st *hostStorage) {
	size := int64(classBytes(st.class))
	fl := &p.classes[st.class]
	if p.held.Add(size) > p.maxBytes {
		p.held.Add(-size)
		fl.mu.Lock()
		fl.drops++
		fl.mu.Unlock()
		return
	}
	fl.mu.Lock()
	fl.free = append(fl.free, st)
	fl.puts++
	fl.mu.Unlock()
}

// getDevice returns device memory of class c from a: a free allocation of
// the pool (a hit) or a new one (a miss). When a reports that it is out of
// memory, the pool frees what it holds of a and tries once more.
func (p *Pool) getDevice(ctx context.Context, a Allocator, c int) (DeviceMemory, error) {
	size := classBytes(c)
	p.devMu.Lock()
	if comparableAllocator(a) {
		if l := p.dev[a]; l != nil {
			if k := len(l[c]); k > 0 {
				mem := l[c][k-1]
				l[c][k-1] = nil
				l[c] = l[c][:k-1]
				p.devHeld -= int64(size)
				p.devHits++
				p.devMu.Unlock()
				return mem, nil
			}
		}
	}
	p.devMisses++
	p.devMu.Unlock()
	mem, err := a.Alloc(ctx, size)
	if err != nil && errors.Is(err, ErrOutOfMemory) {
		if released, ferr := p.releaseDevice(a); released > 0 {
			if mem, err = a.Alloc(ctx, size); err != nil {
				err = errors.Join(err, ferr)
			}
		}
	}
	return mem, err
}

// putDevice keeps mem, device memory of class c from a, for a later
// getDevice, or frees it when the pool holds its maximum or cannot tell a
// apart from other allocators.
func (p *Pool) putDevice(a Allocator, c int, mem DeviceMemory) error {
	size := int64(classBytes(c))
	if !comparableAllocator(a) || mem.Size() < int(size) {
		return mem.Free()
	}
	p.devMu.Lock()
	if p.devHeld+size > p.maxDeviceBytes {
		p.devDrops++
		p.devMu.Unlock()
		return mem.Free()
	}
	if p.dev == nil {
		p.dev = make(map[Allocator]*deviceLists)
	}
	l := p.dev[a]
	if l == nil {
		l = new(deviceLists)
		p.dev[a] = l
	}
	l[c] = append(l[c], mem)
	p.devHeld += size
	p.devPuts++
	p.devMu.Unlock()
	return nil
}

// releaseDevice frees every device allocation the pool holds of a and
// returns how many it freed.
func (p *Pool) releaseDevice(a Allocator) (int, error) {
	if !comparableAllocator(a) {
		return 0, nil
	}
	p.devMu.Lock()
	l := p.dev[a]
	delete(p.dev, a)
	var mems []DeviceMemory
	if l != nil {
		for c := range l {
			mems = append(mems, l[c]...)
			p.devHeld -= int64(len(l[c]) * classBytes(c))
		}
	}
	p.devMu.Unlock()
	return len(mems), freeAll(mems)
}

// freeAll frees every allocation and joins their errors.
func freeAll(mems []DeviceMemory) error {
	var errs []error
	for _, m := range mems {
		if err := m.Free(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Trim releases everything the pool holds: host storage goes to the garbage
// collector and device memory is freed. Buffers in use are untouched and
// still return their storage when freed. It returns the errors of the
// device frees.
func (p *Pool) Trim() error {
	for c := range p.classes {
		fl := &p.classes[c]
		fl.mu.Lock()
		k := len(fl.free)
		clear(fl.free)
		fl.free = nil
		fl.mu.Unlock()
		p.held.Add(-int64(k * classBytes(c)))
	}
	p.devMu.Lock()
	var mems []DeviceMemory
	for _, l := range p.dev {
		for c := range l {
			mems = append(mems, l[c]...)
		}
	}
	p.dev = nil
	p.devHeld = 0
	p.devMu.Unlock()
	return freeAll(mems)
}

// PoolStats are a pool's counters since it was created.
type PoolStats struct {
	Hits      uint64 // Gets served from a free list
	Misses    uint64 // Gets that allocated host storage
	Puts      uint64 // host storage returned to a free list
	Drops     uint64 // host storage dropped because the pool was full
	HeldBytes int64  // bytes of host storage on the free lists now

	DeviceHits      uint64 // device allocations served from the pool
	DeviceMisses    uint64 // device allocations asked of an Allocator
	DevicePuts      uint64 // device allocations returned to the pool
	DeviceDrops     uint64 // device allocations freed because the pool was full
	DeviceHeldBytes int64  // bytes of device memory the pool holds now
}

// Stats returns the pool's counters. Each is exact; taken while other
// goroutines use the pool they are not one consistent snapshot.
func (p *Pool) Stats() PoolStats {
	var s PoolStats
	for c := range p.classes {
		fl := &p.classes[c]
		fl.mu.Lock()
		s.Hits += fl.hits
		s.Misses += fl.misses
		s.Puts += fl.puts
		s.Drops += fl.drops
		fl.mu.Unlock()
	}
	s.HeldBytes = p.held.Load()
	p.devMu.Lock()
	s.DeviceHits, s.DeviceMisses = p.devHits, p.devMisses
	s.DevicePuts, s.DeviceDrops = p.devPuts, p.devDrops
	s.DeviceHeldBytes = p.devHeld
	p.devMu.Unlock()
	return s
}
