package driverapi

import "unsafe"

// MemPool is a CUmemoryPool handle: the pool the stream-ordered allocator
// (cuMemAllocFromPoolAsync, cuMemFreeAsync) takes device memory from.
type MemPool struct{ p unsafe.Pointer }

// IsNil reports whether p is the null pool.
func (p MemPool) IsNil() bool { return p.p == nil }
