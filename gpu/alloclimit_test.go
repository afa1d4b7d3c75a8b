package gpu

import (
	"errors"
	"math"
	"testing"
)

// isOutOfMemory reports whether err is the typed error of a request above
// the allocation limit.
func isOutOfMemory(err error) bool {
	var me *MemoryError
	return errors.As(err, &me) && errors.Is(err, ErrOutOfMemory) && errors.Is(err, ErrMemory) && !errors.Is(err, ErrShape)
}

// TestHugeShapeIsOutOfMemory allocates 2^40 elements: a typed error under
// the default limit (half of physical memory), where it used to be a fatal
// out-of-memory of the whole process.
func TestHugeShapeIsOutOfMemory(t *testing.T) {
	if DefaultMaxAllocation() >= 1<<42 {
		t.Skipf("this machine may allocate %d bytes", DefaultMaxAllocation())
	}
	huge := Shape{1 << 40}
	if _, err := Zeros(F32, huge); !isOutOfMemory(err) {
		t.Fatalf("Zeros(2^40): %v, want a *MemoryError wrapping ErrOutOfMemory", err)
	}
	if _, err := FromBytes(U8, huge, nil); !isOutOfMemory(err) {
		t.Fatalf("FromBytes(2^40): %v, want ErrOutOfMemory", err)
	}
	p := NewPool()
	if _, err := p.Get(F64, huge); !isOutOfMemory(err) {
		t.Fatalf("Pool.Get(2^40): %v, want ErrOutOfMemory", err)
	}
	if _, err := p.GetZeroed(U8, Shape{1 << 20, 1 << 20}); !isOutOfMemory(err) {
		t.Fatalf("Pool.GetZeroed(2^40): %v, want ErrOutOfMemory", err)
	}
	if s := p.Stats(); s.Misses != 0 || s.Hits != 0 {
		t.Fatalf("refused Gets counted: %+v", s)
	}
}

// TestByteSizeOverflowIsShapeError: element counts that fit in an int but
// whose byte size does not are shape errors, not allocation attempts.
func TestByteSizeOverflowIsShapeError(t *testing.T) {
	for _, s := range []Shape{{math.MaxInt / 2}, {1 << 31, 1 << 31}, {1 << 61}} {
		if _, err := Zeros(F64, s); !errors.Is(err, ErrShape) {
			t.Errorf("Zeros(F64, %v): %v, want ErrShape", s, err)
		}
		if _, err := FromBytes(F32, s, nil); !errors.Is(err, ErrShape) {
			t.Errorf("FromBytes(F32, %v): %v, want ErrShape", s, err)
		}
		if _, err := NewPool().Get(F64, s); !errors.Is(err, ErrShape) {
			t.Errorf("Pool.Get(F64, %v): %v, want ErrShape", s, err)
		}
	}
}

// TestSetMaxAllocation lowers the process-wide limit (not in parallel with
// other tests) and checks Zeros, FromBytes, NewBuffer and default pools
// follow it, and that a pool with its own limit does not.
func TestSetMaxAllocation(t *testing.T) {
	prev := SetMaxAllocation(4096)
	t.Cleanup(func() { SetMaxAllocation(prev) })
	if got := MaxAllocation(); got != 4096 {
		t.Fatalf("MaxAllocation = %d", got)
	}
	if _, err := Zeros(U8, Shape{4096}); err != nil {
		t.Fatalf("Zeros at the limit: %v", err)
	}
	if _, err := Zeros(U8, Shape{4097}); !isOutOfMemory(err) {
		t.Fatalf("Zeros above the limit: %v", err)
	}
	if _, err := FromBytes(F32, Shape{1025}, make([]byte, 4100)); !isOutOfMemory(err) {
		t.Fatalf("FromBytes above the limit: %v", err)
	}
	if _, err := NewBuffer(make([]float64, 513)); !isOutOfMemory(err) {
		t.Fatalf("NewBuffer above the limit: %v", err)
	}
	if _, err := NewPool().Get(U8, Shape{4097}); !isOutOfMemory(err) {
		t.Fatalf("default pool above the limit: %v", err)
	}
	own := NewPool(WithMaxAllocation(1 << 20))
	b, err := own.Get(U8, Shape{8192})
	if err != nil {
		t.Fatalf("pool with its own limit: %v", err)
	}
	b.Free()
	if _, err := own.Get(U8, Shape{1<<20 + 1}); !isOutOfMemory(err) {
		t.Fatalf("pool above its own limit: %v", err)
	}
	if SetMaxAllocation(0) != 4096 || MaxAllocation() != DefaultMaxAllocation() {
		t.Fatalf("SetMaxAllocation(0) does not restore the default")
	}
}

func TestDefaultMaxAllocation(t *testing.T) {
	d := DefaultMaxAllocation()
	if total := memTotal(); total > 0 && d != total/2 {
		t.Fatalf("default %d, want half of %d", d, total)
	} else if total == 0 && d != FallbackMaxAllocation {
		t.Fatalf("default %d, want the fallback", d)
	}
}
