package gpu

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// FallbackMaxAllocation is the default allocation limit where the
// physical memory cannot be read (no /proc/meminfo): 4 GiB.
const FallbackMaxAllocation int64 = 4 << 30

// maxAllocation is the process-wide limit; 0 means the default.
var maxAllocation atomic.Int64

// DefaultMaxAllocation returns the default limit on one buffer's host
// allocation: half of the machine's physical memory (MemTotal of
// /proc/meminfo), or FallbackMaxAllocation where that cannot be read.
func DefaultMaxAllocation() int64 { return defaultMaxAllocation() }

var defaultMaxAllocation = sync.OnceValue(func() int64 {
	if total := memTotal(); total > 0 {
		return total / 2
	}
	return FallbackMaxAllocation
})

// memTotal returns the physical memory in bytes, or 0 if it is unknown.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil || kb <= 0 || kb > 1<<52 {
			return 0
		}
		return kb << 10
	}
	return 0
}

// SetMaxAllocation sets the process-wide limit, in bytes, on the host
// memory of one buffer allocated by Zeros, FromBytes or NewBuffer, and by
// pools created without WithMaxAllocation. A request above it fails with a
// *MemoryError wrapping ErrOutOfMemory instead of exhausting the machine.
// n <= 0 restores the default (DefaultMaxAllocation). It returns the
// previous limit and is safe for concurrent use.
func SetMaxAllocation(n int64) int64 {
	prev := MaxAllocation()
	maxAllocation.Store(max(n, 0))
	return prev
}

// MaxAllocation returns the process-wide limit set by SetMaxAllocation, or
// DefaultMaxAllocation if none is set.
func MaxAllocation() int64 {
	if n := maxAllocation.Load(); n > 0 {
		return n
	}
	return DefaultMaxAllocation()
}

// checkAllocation fails when nbytes exceeds limit.
func checkAllocation(op string, nbytes int, limit int64) error {
	if int64(nbytes) > limit {
		return &MemoryError{Op: op, Reason: fmt.Sprintf("%d bytes exceed the allocation limit of %d bytes", nbytes, limit), Err: ErrOutOfMemory}
	}
	return nil
}
