package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
	"unsafe"
)

// Buffers reinterpret host memory as raw little-endian bytes (Bytes,
// FromBytes, device copies), which is only true on a little-endian host.
// Every supported target (amd64, arm64, …) is one; refuse to run elsewhere
// rather than silently corrupt data.
func init() {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		panic("gpu: UnifiedBuffer requires a little-endian host; this machine is big-endian")
	}
}

// ErrFreed is wrapped by the *MemoryError every method of a freed buffer
// returns: errors.Is(err, ErrFreed) and errors.Is(err, ErrMemory) both hold.
var ErrFreed = errors.New("gpu: buffer freed")

// inlineDims is how many dimensions a buffer stores inside its own header,
// so that a buffer of up to 4 dimensions costs one allocation.
const inlineDims = 4

// UnifiedBuffer is an array shared by the host and at most one device: host
// memory that is always present, and device memory (through an Allocator)
// once EnsureOnDevice has been called. Two dirty flags say which side holds
// the newest data; copies happen lazily, only when the other side asks for
// it and only when it is stale:
//
//   - a new buffer is host-dirty: its first EnsureOnDevice copies it over;
//   - whoever writes host memory calls MarkHostDirty, whoever writes device
//     memory (a kernel) calls MarkDeviceDirty; the last mark wins;
//   - EnsureOnDevice copies host → device when host-dirty, EnsureOnHost
//     copies device → host when device-dirty, and each clears its flag.
//
// The CPU backend runs kernels on the host memory itself (HostSlice), so a
// buffer that never meets a device is never copied.
//
// Host memory is 8-byte aligned (or, for NewBuffer, the caller's slice) and
// little-endian. Views returned by HostSlice and HostBytes alias it: they
// are valid until Free, after which pooled storage is recycled for other
// buffers — using a view after Free is a bug like any use-after-free.
//
// A buffer is not safe for concurrent mutation: one goroutine (a kernel, an
// actor) uses it at a time. Free is the exception in that freeing twice,
// even from two goroutines at once, releases the storage exactly once, and
// that Free may run while executions use the buffer: an execution takes a
// use with Acquire and gives it back with Release, and a Free during a use
// only marks the buffer freed; its memory is released when the last use
// ends (the semantics of CUDA's stream-ordered free). Once the memory is
// released every method that returns an error returns a *MemoryError
// wrapping ErrFreed; DType, Shape, Len and ByteSize keep describing what the
// buffer was.
type UnifiedBuffer struct {
	// state is freedBit once Free has been called, plus the number of
	// uses taken by Acquire and not yet released.
	state       atomic.Uint64
	dtype       DType
	hostDirty   bool // host memory is newer than device memory (or there is none)
	deviceDirty bool // device memory is newer than host memory
	n           int  // number of elements
	shape       Shape
	dims        [inlineDims]int // backing of shape when it has ≤ inlineDims dims

	// host is the byte view of the host memory, len == cap == ByteSize. Its
	// pointer references the typed allocation (the caller's []T for
	// NewBuffer, storage.words otherwise), which keeps it alive.
	host    []byte
	storage *hostStorage // pooled or owned storage; nil for NewBuffer
	pool    *Pool        // where storage and device memory go back to; nil if not pooled
	class   int          // pool size class of storage

	device DeviceMemory // nil until EnsureOnDevice
	alloc  Allocator    // the allocator of device
}

// hostStorage is one host allocation: the unit a Pool recycles.
type hostStorage struct {
	words []uint64 // the allocation; uint64 gives every dtype its alignment
	class int      // pool size class; meaningful only for pooled storage
}

// bytes returns the first n bytes of the storage as a []byte with cap n.
func (s *hostStorage) bytes(n int) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s.words))), n)
}

// allocHost allocates zeroed, 8-byte aligned storage of at least nbytes
// bytes (nbytes > 0). A request the runtime refuses outright is an error,
// not a panic.
func allocHost(op string, nbytes int) (st *hostStorage, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &MemoryError{Op: op, Reason: fmt.Sprintf("cannot allocate %d bytes of host memory: %v", nbytes, r)}
		}
	}()
	return &hostStorage{words: make([]uint64, (nbytes-1)/8+1)}, nil
}

// freedErr is the error of an operation on a freed buffer.
func freedErr(op string) error {
	return &MemoryError{Op: op, Reason: "freed buffer", Err: ErrFreed}
}

// layout validates a dtype and a shape and returns the number of elements
// and of bytes of a buffer of them. A byte size that overflows int is a
// *ShapeError.
func layout(op string, dt DType, s Shape) (n, nbytes int, err error) {
	if !dt.Valid() {
		return 0, 0, &MemoryError{Op: op, Reason: "dtype " + dt.String(), Err: ErrDType}
	}
	n, reason := s.checkLen()
	if reason != "" {
		return 0, 0, shapeErr(s, reason)
	}
	size := dt.Size()
	if n > math.MaxInt/size {
		return 0, 0, shapeErr(s, fmt.Sprintf("%d elements of %s overflow int bytes", n, dt))
	}
	return n, n * size, nil
}

// setShape stores a copy of s (already validated) in b, inside the header
// when it is short enough.
func (b *UnifiedBuffer) setShape(s Shape) {
	if len(s) <= inlineDims {
		b.shape = b.dims[:len(s):len(s)]
		copy(b.shape, s)
		return
	}
	b.shape = s.Clone()
}

// NewBuffer wraps data, without copying it, as the host memory of a new
// buffer of dtype DTypeOf[T] and the given shape ([len(data)] when none is
// given). The shape must be valid and hold exactly len(data) elements, and
// data must not be empty (*ShapeError otherwise). The buffer and the caller
// share data from now on: writes through either are seen by the other
// (call MarkHostDirty after writing data once the buffer is on a device).
// A buffer of more bytes than MaxAllocation is a *MemoryError wrapping
// ErrOutOfMemory, like for Zeros.
func NewBuffer[T Number](data []T, shape ...int) (*UnifiedBuffer, error) {
	s := Shape(shape)
	if len(s) == 0 {
		var one [1]int
		one[0] = len(data)
		s = one[:]
	}
	if len(data) == 0 {
		return nil, shapeErr(s, "no data")
	}
	n, reason := s.checkLen()
	if reason != "" {
		return nil, shapeErr(s, reason)
	}
	if n != len(data) {
		return nil, shapeErr(s, strconv.Itoa(n)+" elements, but data has "+strconv.Itoa(len(data)))
	}
	dt := DTypeOf[T]()
	if err := checkAllocation("NewBuffer", n*dt.Size(), MaxAllocation()); err != nil {
		return nil, err
	}
	b := &UnifiedBuffer{dtype: dt, n: n, hostDirty: true}
	b.host = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(data))), n*dt.Size())
	b.setShape(s)
	return b, nil
}

// FromBytes returns a new buffer holding a copy of raw, the little-endian
// bytes of shape.Len() elements of dt. An invalid dtype is a *MemoryError
// wrapping ErrDType, an invalid shape (also one whose byte size overflows
// int) a *ShapeError, a byte size above MaxAllocation (see
// SetMaxAllocation) a *MemoryError wrapping ErrOutOfMemory, and a len(raw)
// other than shape.Len()*dt.Size() a *MemoryError.
func FromBytes(dt DType, shape Shape, raw []byte) (*UnifiedBuffer, error) {
	const op = "FromBytes"
	n, nbytes, err := layout(op, dt, shape)
	if err != nil {
		return nil, err
	}
	if err := checkAllocation(op, nbytes, MaxAllocation()); err != nil {
		return nil, err
	}
	if len(raw) != nbytes {
		return nil, &MemoryError{Op: op, Reason: fmt.Sprintf("%d bytes for %d elements of %s, want %d", len(raw), n, dt, nbytes)}
	}
	b, err := newOwned(op, dt, shape, n, nbytes)
	if err != nil {
		return nil, err
	}
	copy(b.host, raw)
	return b, nil
}

// Zeros returns a new buffer of dt and shape whose elements are all zero.
// Errors are as for FromBytes.
func Zeros(dt DType, shape Shape) (*UnifiedBuffer, error) {
	const op = "Zeros"
	n, nbytes, err := layout(op, dt, shape)
	if err != nil {
		return nil, err
	}
	return newOwned(op, dt, shape, n, nbytes)
}

// newOwned returns a buffer with freshly allocated, zeroed, unpooled host
// memory.
func newOwned(op string, dt DType, shape Shape, n, nbytes int) (*UnifiedBuffer, error) {
	if err := checkAllocation(op, nbytes, MaxAllocation()); err != nil {
		return nil, err
	}
	st, err := allocHost(op, nbytes)
	if err != nil {
		return nil, err
	}
	b := &UnifiedBuffer{dtype: dt, n: n, hostDirty: true, storage: st}
	b.host = st.bytes(nbytes)
	b.setShape(shape)
	return b, nil
}

// DType is the element type.
func (b *UnifiedBuffer) DType() DType { return b.dtype }

// Shape returns a copy of the dimensions.
func (b *UnifiedBuffer) Shape() Shape { return b.shape.Clone() }

// ShapeRef returns the buffer's own shape without copying it, for hot paths
// that only read it; the caller must not modify it.
func (b *UnifiedBuffer) ShapeRef() Shape { return b.shape }

// Len is the number of elements.
func (b *UnifiedBuffer) Len() int { return b.n }

// ByteSize is the size of the data in bytes: Len() * DType().Size(). Device
// memory may be larger (see DeviceMemory).
func (b *UnifiedBuffer) ByteSize() int { return b.n * b.dtype.Size() }

// HostSlice returns the host memory of b as a []T, without copying and
// without synchronising: call EnsureOnHost first if a device may have
// written the buffer, and MarkHostDirty after writing through the slice if
// a device will read it. T must match the buffer's dtype (*MemoryError
// otherwise, e.g. "buffer is s32, not f32"); a freed buffer is a
// *MemoryError wrapping ErrFreed. The slice is valid until Free.
func HostSlice[T Number](b *UnifiedBuffer) ([]T, error) {
	const op = "HostSlice"
	if b.released() {
		return nil, freedErr(op)
	}
	if dt := DTypeOf[T](); dt != b.dtype {
		return nil, &MemoryError{Op: op, Reason: "buffer is " + b.dtype.String() + ", not " + dt.String()}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b.host))), b.n), nil
}

// ToSlice brings b's data to the host (EnsureOnHost) and returns a copy of
// it as a []T that the caller owns. Errors are as for HostSlice, plus the
// device's.
func ToSlice[T Number](ctx context.Context, b *UnifiedBuffer) ([]T, error) {
	if b.released() {
		return nil, freedErr("ToSlice")
	}
	if err := b.EnsureOnHost(ctx); err != nil {
		return nil, err
	}
	s, err := HostSlice[T](b)
	if err != nil {
		return nil, err
	}
	return slices.Clone(s), nil
}

// Bytes brings b's data to the host (EnsureOnHost) and returns a copy of it
// as little-endian bytes that the caller owns.
func (b *UnifiedBuffer) Bytes(ctx context.Context) ([]byte, error) {
	if b.released() {
		return nil, freedErr("Bytes")
	}
	if err := b.EnsureOnHost(ctx); err != nil {
		return nil, err
	}
	return slices.Clone(b.host), nil
}

// HostBytes returns the host memory as raw little-endian bytes (len and cap
// ByteSize), without copying and without synchronising; see HostSlice.
func (b *UnifiedBuffer) HostBytes() ([]byte, error) {
	if b.released() {
		return nil, freedErr("HostBytes")
	}
	return b.host, nil
}

// MarkHostDirty records that the host memory was written: device memory,
// if any, is stale and the next EnsureOnDevice copies host → device. It
// supersedes an earlier MarkDeviceDirty. No-op on a freed buffer.
func (b *UnifiedBuffer) MarkHostDirty() {
	if b.released() {
		return
	}
	b.hostDirty, b.deviceDirty = true, false
}

// MarkDeviceDirty records that the device memory was written (by a kernel):
// the host memory is stale and the next EnsureOnHost copies device → host.
// It supersedes an earlier MarkHostDirty. It is a no-op on a buffer without
// device memory (the host memory is then the only copy, hence current) and
// on a freed buffer.
func (b *UnifiedBuffer) MarkDeviceDirty() {
	if b.released() || b.device == nil {
		return
	}
	b.hostDirty, b.deviceDirty = false, true
}

// HostDirty reports whether the host memory holds data the device memory
// lacks (always true before the first EnsureOnDevice).
func (b *UnifiedBuffer) HostDirty() bool { return b.hostDirty && !b.released() }

// DeviceDirty reports whether the device memory holds data the host memory
// lacks.
func (b *UnifiedBuffer) DeviceDirty() bool { return b.deviceDirty && !b.released() }

// EnsureOnDevice makes b's data current in device memory of allocator a and
// returns that memory. The first call allocates it from a (from b's pool
// when b came from a Pool); later calls must pass the same allocator
// (*MemoryError otherwise). When the host is dirty — always so for a new
// buffer — it copies host → device and clears the flag; otherwise it copies
// nothing. Allocation and copy errors come back unchanged (a *DeviceError
// of kind DeviceOutOfMemory, say), and leave the flags as they were.
func (b *UnifiedBuffer) EnsureOnDevice(ctx context.Context, a Allocator) (DeviceMemory, error) {
	const op = "EnsureOnDevice"
	if b.released() {
		return nil, freedErr(op)
	}
	if a == nil {
		return nil, &MemoryError{Op: op, Reason: "nil allocator"}
	}
	if b.device == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mem, err := b.allocDevice(ctx, a)
		if err != nil {
			return nil, err
		}
		// New device memory holds nothing: the host is the only copy.
		b.device, b.alloc = mem, a
		b.hostDirty, b.deviceDirty = true, false
	} else if !sameAllocator(b.alloc, a) {
		return nil, &MemoryError{Op: op, Reason: "buffer is on " + b.alloc.Name() + ", not " + a.Name()}
	}
	if b.hostDirty {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := b.device.CopyFromHost(ctx, b.host); err != nil {
			return nil, err
		}
		b.hostDirty = false
	}
	return b.device, nil
}

// allocDevice allocates device memory for b from a, through b's pool when
// it has one, and checks that it is large enough.
func (b *UnifiedBuffer) allocDevice(ctx context.Context, a Allocator) (DeviceMemory, error) {
	var (
		mem DeviceMemory
		err error
	)
	if b.pool != nil {
		mem, err = b.pool.getDevice(ctx, a, b.class)
	} else {
		mem, err = a.Alloc(ctx, len(b.host))
	}
	if err != nil {
		return nil, err
	}
	if mem == nil || mem.Size() < len(b.host) {
		got := 0
		if mem != nil {
			got = mem.Size()
			_ = mem.Free()
		}
		return nil, &MemoryError{Op: "EnsureOnDevice", Reason: fmt.Sprintf("%s allocated %d bytes, need %d", a.Name(), got, len(b.host))}
	}
	return mem, nil
}

// EnsureOnHost makes b's data current in host memory: when the device is
// dirty it copies device → host and clears the flag; otherwise it copies
// nothing. A copy error comes back unchanged and leaves the flag set.
func (b *UnifiedBuffer) EnsureOnHost(ctx context.Context) error {
	if b.released() {
		return freedErr("EnsureOnHost")
	}
	if !b.deviceDirty || b.device == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.device.CopyToHost(ctx, b.host); err != nil {
		return err
	}
	b.deviceDirty = false
	return nil
}

// Device returns b's device memory, or nil if b has never been on a device
// or is freed.
func (b *UnifiedBuffer) Device() DeviceMemory {
	if b.released() {
		return nil
	}
	return b.device
}

// DeviceAllocator returns the allocator of b's device memory (the device
// it lives on), or nil if b has never been on a device or is freed. A
// buffer stays on that device: a backend of another device refuses it.
func (b *UnifiedBuffer) DeviceAllocator() Allocator {
	if b.released() || b.device == nil {
		return nil
	}
	return b.alloc
}

// Reshape changes the dimensions to shape, which must be valid and hold the
// same number of elements (*ShapeError otherwise). The data is untouched.
func (b *UnifiedBuffer) Reshape(shape ...int) error {
	if b.released() {
		return freedErr("Reshape")
	}
	s := Shape(shape)
	n, reason := s.checkLen()
	if reason != "" {
		return shapeErr(s, reason)
	}
	if n != b.n {
		return shapeErr(s, strconv.Itoa(n)+" elements, but buffer has "+strconv.Itoa(b.n))
	}
	b.setShape(s)
	return nil
}

// freedBit is the bit of UnifiedBuffer.state that says Free was called;
// the bits below it count the uses.
const freedBit = 1 << 63

// released reports whether b's memory is gone: Free was called and no use
// is left.
func (b *UnifiedBuffer) released() bool { return b.state.Load() == freedBit }

// Acquire takes a use of b for an execution that reads or writes it: until
// the matching Release, a Free only marks b freed and its memory stays
// valid. Acquire after Free fails with a *MemoryError wrapping ErrFreed.
// Safe for concurrent use; it does not allocate.
func (b *UnifiedBuffer) Acquire() error {
	for {
		s := b.state.Load()
		if s&freedBit != 0 {
			return freedErr("Acquire")
		}
		if b.state.CompareAndSwap(s, s+1) {
			return nil
		}
	}
}

// Release gives back a use taken by Acquire. The last Release of a buffer
// freed meanwhile releases its memory and returns what Free would have
// returned (the device's error). Releasing more than was acquired panics.
func (b *UnifiedBuffer) Release() error {
	s := b.state.Add(^uint64(0))
	if s&^freedBit == freedBit-1 { // the count wrapped below zero
		panic("gpu: UnifiedBuffer.Release without Acquire")
	}
	if s == freedBit {
		return b.releaseMemory()
	}
	return nil
}

// Free releases b: its device memory is freed (or returned to b's pool) and
// its host storage returned to its pool if it came from one. While
// executions hold uses of b (Acquire) this only marks b freed, and the last
// Release releases the memory. It is idempotent, also between goroutines:
// the storage is released once, and every call after the first returns
// nil. It returns the device's error when it releases the memory itself.
func (b *UnifiedBuffer) Free() error {
	for {
		s := b.state.Load()
		if s&freedBit != 0 {
			return nil
		}
		if b.state.CompareAndSwap(s, s|freedBit) {
			if s != 0 {
				return nil // the last Release releases the memory
			}
			return b.releaseMemory()
		}
	}
}

// releaseMemory gives b's memory back; called once, when b is freed and
// unused.
func (b *UnifiedBuffer) releaseMemory() error {
	var err error
	if b.device != nil {
		if b.pool != nil {
			err = b.pool.putDevice(b.alloc, b.class, b.device)
		} else {
			err = b.device.Free()
		}
	}
	if b.pool != nil && b.storage != nil {
		b.pool.putHost(b.storage)
	}
	b.host, b.storage, b.pool, b.device, b.alloc = nil, nil, nil, nil, nil
	b.hostDirty, b.deviceDirty = false, false
	return err
}

// Close is Free, so that a buffer is an io.Closer.
func (b *UnifiedBuffer) Close() error { return b.Free() }

// Freed reports whether Free has been called.
func (b *UnifiedBuffer) Freed() bool { return b.state.Load()&freedBit != 0 }
