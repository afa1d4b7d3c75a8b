package gpu

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"
)

func TestClassOf(t *testing.T) {
	cases := []struct{ bytes, class, size int }{
		{1, 0, 256}, {256, 0, 256}, {257, 1, 512}, {512, 1, 512}, {513, 2, 1024},
		{1 << 20, 12, 1 << 20}, {1<<20 + 1, 13, 2 << 20},
	}
	for _, c := range cases {
		got, ok := classOf(c.bytes)
		if !ok || got != c.class || classBytes(got) != c.size {
			t.Errorf("classOf(%d) = %d (%d bytes), %v", c.bytes, got, classBytes(got), ok)
		}
	}
	if c, ok := classOf(classBytes(numClasses - 1)); !ok || c != numClasses-1 {
		t.Errorf("largest class: %d %v", c, ok)
	}
	if _, ok := classOf(classBytes(numClasses-1) + 1); ok {
		t.Error("beyond the largest class")
	}
}

// hostPtr is the address of b's host memory.
func hostPtr(t testing.TB, b *UnifiedBuffer) *byte {
	t.Helper()
	hb, err := b.HostBytes()
	if err != nil {
		t.Fatal(err)
	}
	return unsafe.SliceData(hb)
}

func TestPoolHitsAndMisses(t *testing.T) {
	p := NewPool()
	b1, err := p.Get(F32, Shape{8, 8}) // 256 B
	if err != nil {
		t.Fatal(err)
	}
	if b1.DType() != F32 || !b1.Shape().Equal(Shape{8, 8}) || b1.ByteSize() != 256 || !b1.HostDirty() {
		t.Fatal("buffer metadata")
	}
	ptr := hostPtr(t, b1)
	if uintptr(unsafe.Pointer(ptr))%8 != 0 {
		t.Error("pooled host memory not 8-byte aligned")
	}
	if err := b1.Free(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Misses != 1 || s.Hits != 0 || s.Puts != 1 || s.HeldBytes != 256 {
		t.Fatalf("after one Get/Free: %+v", s)
	}
	// Same class, other dtype and shape: the storage is reused.
	b2, err := p.Get(U8, Shape{200})
	if err != nil {
		t.Fatal(err)
	}
	if hostPtr(t, b2) != ptr || b2 == b1 || b2.ByteSize() != 200 {
		t.Fatal("storage not reused, or header reused")
	}
	if s := p.Stats(); s.Hits != 1 || s.Misses != 1 || s.HeldBytes != 0 {
		t.Fatalf("after hit: %+v", s)
	}
	// The stale header stays freed, and freeing it again returns nothing.
	if _, err := b1.HostBytes(); !errors.Is(err, ErrFreed) {
		t.Fatalf("stale header: %v", err)
	}
	if err := b1.Free(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Puts != 1 || s.HeldBytes != 0 {
		t.Fatalf("double Free returned storage: %+v", s)
	}
	// Another class misses.
	b3, err := p.Get(F64, Shape{33}) // 264 B → 512 B class
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Misses != 2 {
		t.Fatalf("other class: %+v", s)
	}
	ptr3 := hostPtr(t, b3)
	if err := b3.Free(); err != nil {
		t.Fatal(err)
	}
	if b4, _ := p.Get(S32, Shape{128}); hostPtr(t, b4) != ptr3 || p.Stats().Hits != 2 {
		t.Fatalf("512 B class not reused: %+v", p.Stats())
	}
}

func TestPoolGetZeroed(t *testing.T) {
	p := NewPool()
	b, _ := p.Get(U32, Shape{64})
	v, _ := HostSlice[uint32](b)
	for i := range v {
		v[i] = 0xffffffff
	}
	b.Free()
	b, err := p.GetZeroed(U32, Shape{64})
	if err != nil || p.Stats().Hits != 1 {
		t.Fatal(err, p.Stats())
	}
	v, _ = HostSlice[uint32](b)
	for i, x := range v {
		if x != 0 {
			t.Fatalf("element %d = %#x", i, x)
		}
	}
	if _, err := p.GetZeroed(DTypeInvalid, Shape{1}); !errors.Is(err, ErrDType) {
		t.Error(err)
	}
}

func TestPoolErrors(t *testing.T) {
	p := NewPool()
	if _, err := p.Get(DTypeInvalid, Shape{4}); !errors.Is(err, ErrDType) || !errors.Is(err, ErrMemory) {
		t.Errorf("invalid dtype: %v", err)
	}
	for _, s := range []Shape{nil, {}, {0}, {4, -1}, {1 << 40, 1 << 40}} {
		if _, err := p.Get(F32, s); !errors.Is(err, ErrShape) {
			t.Errorf("shape %v: %v", s, err)
		}
	}
	if _, err := p.Get(U8, Shape{classBytes(numClasses-1) + 1}); !errors.Is(err, ErrMemory) {
		t.Errorf("too large: %v", err)
	}
	if s := p.Stats(); s.Misses != 0 || s.Hits != 0 {
		t.Errorf("failed Gets counted: %+v", s)
	}
}

func TestPoolMaxBytes(t *testing.T) {
	p := NewPool(WithMaxBytes(1024))
	var bufs []*UnifiedBuffer
	for range 5 {
		b, err := p.Get(F32, Shape{64}) // 256 B
		if err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
	}
	big, _ := p.Get(U8, Shape{2048}) // larger than the whole pool
	for _, b := range append(bufs, big) {
		b.Free()
	}
	if s := p.Stats(); s.Puts != 4 || s.Drops != 2 || s.HeldBytes != 1024 || s.Misses != 6 {
		t.Fatalf("%+v", s)
	}
	if err := p.Trim(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.HeldBytes != 0 {
		t.Fatalf("after Trim: %+v", s)
	}
	b, _ := p.Get(F32, Shape{64})
	if s := p.Stats(); s.Misses != 7 || s.Hits != 0 {
		t.Fatalf("Get after Trim: %+v", s)
	}
	b.Free()

	none := NewPool(WithMaxBytes(0))
	b, _ = none.Get(U8, Shape{1})
	b.Free()
	if s := none.Stats(); s.Puts != 0 || s.Drops != 1 || s.HeldBytes != 0 {
		t.Fatalf("WithMaxBytes(0): %+v", s)
	}
	if NewPool(WithMaxBytes(-5)).maxBytes != 0 || NewPool().maxBytes != DefaultPoolMaxBytes {
		t.Fatal("option values")
	}
}

func TestPoolSteadyState(t *testing.T) {
	p := NewPool()
	shape := Shape{32, 32}
	cycle := func() {
		b, err := p.Get(F32, shape)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Free(); err != nil {
			t.Fatal(err)
		}
	}
	cycle() // warm-up
	before := p.Stats()
	for range 1000 {
		cycle()
	}
	after := p.Stats()
	if after.Misses != before.Misses || after.Hits-before.Hits != 1000 || after.Drops != 0 {
		t.Fatalf("steady state: before %+v after %+v", before, after)
	}
	if allocs := testing.AllocsPerRun(1000, cycle); allocs != 1 {
		t.Fatalf("Get+Free allocates %v times, want 1 (the header)", allocs)
	}
}

func TestPoolDeviceReuse(t *testing.T) {
	ctx := context.Background()
	p := NewPool()
	a := newFakeAlloc("fake:0")
	b, _ := p.Get(F32, Shape{100}) // 400 B → 512 B class
	mem, err := b.EnsureOnDevice(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if mem.Size() != 512 {
		t.Fatalf("device allocation of %d bytes, want the class size", mem.Size())
	}
	b.Free()
	if got := a.counts(); got != [4]int{1, 0, 1, 0} {
		t.Fatalf("after Free: %v", got)
	}
	if s := p.Stats(); s.DeviceMisses != 1 || s.DevicePuts != 1 || s.DeviceHeldBytes != 512 {
		t.Fatalf("%+v", s)
	}
	// Same class, same allocator: the device memory is reused, and the new
	// (host-dirty) contents are copied to it.
	b2, _ := p.Get(S32, Shape{128})
	mem2, err := b2.EnsureOnDevice(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if mem2 != mem {
		t.Fatal("device memory not reused")
	}
	if got := a.counts(); got != [4]int{1, 0, 2, 0} {
		t.Fatalf("after reuse: %v", got)
	}
	if s := p.Stats(); s.DeviceHits != 1 || s.DeviceHeldBytes != 0 {
		t.Fatalf("%+v", s)
	}
	// Another allocator, or another class, misses.
	other := newFakeAlloc("fake:1")
	b3, _ := p.Get(F32, Shape{100})
	if _, err := b3.EnsureOnDevice(ctx, other); err != nil {
		t.Fatal(err)
	}
	b4, _ := p.Get(F32, Shape{1000})
	if _, err := b4.EnsureOnDevice(ctx, a); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.DeviceMisses != 3 || s.DeviceHits != 1 {
		t.Fatalf("%+v", s)
	}
	for _, b := range []*UnifiedBuffer{b2, b3, b4} {
		if err := b.Free(); err != nil {
			t.Fatal(err)
		}
	}
	if s := p.Stats(); s.DeviceHeldBytes != 512+512+4096 {
		t.Fatalf("%+v", s)
	}
	// Trim frees all of it, once.
	if err := p.Trim(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.DeviceHeldBytes != 0 {
		t.Fatalf("%+v", s)
	}
	for _, al := range []*fakeAlloc{a, other} {
		if got := al.counts(); got[0] != got[1] || al.live != 0 {
			t.Fatalf("%s: allocs/frees %v live %d", al.name, got, al.live)
		}
	}
	if err := p.Trim(); err != nil {
		t.Fatal(err)
	}
}

func TestPoolMaxDeviceBytes(t *testing.T) {
	ctx := context.Background()
	p := NewPool(WithMaxDeviceBytes(256))
	a := newFakeAlloc("fake:0")
	b1, _ := p.Get(U8, Shape{10})
	b2, _ := p.Get(U8, Shape{10})
	for _, b := range []*UnifiedBuffer{b1, b2} {
		if _, err := b.EnsureOnDevice(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	b1.Free()
	b2.Free()
	if s := p.Stats(); s.DevicePuts != 1 || s.DeviceDrops != 1 || s.DeviceHeldBytes != 256 {
		t.Fatalf("%+v", s)
	}
	if got := a.counts(); got[1] != 1 {
		t.Fatalf("dropped device memory not freed: %v", got)
	}
	if NewPool(WithMaxDeviceBytes(-1)).maxDeviceBytes != 0 {
		t.Fatal("negative option")
	}
}

func TestPoolDeviceOutOfMemoryReleasesHeld(t *testing.T) {
	ctx := context.Background()
	p := NewPool()
	a := newFakeAlloc("fake:0")
	a.capacity = 1024
	var small []*UnifiedBuffer
	for range 2 {
		b, _ := p.Get(U8, Shape{256})
		if _, err := b.EnsureOnDevice(ctx, a); err != nil {
			t.Fatal(err)
		}
		small = append(small, b)
	}
	for _, b := range small {
		b.Free() // held by the pool: 512 of the device's 1024 bytes
	}
	big, _ := p.Get(U8, Shape{1024})
	if _, err := big.EnsureOnDevice(ctx, a); err != nil {
		t.Fatalf("the pool did not release its held memory: %v", err)
	}
	if s := p.Stats(); s.DeviceHeldBytes != 0 {
		t.Fatalf("%+v", s)
	}
	if got := a.counts(); got[0] != 3 || got[1] != 2 {
		t.Fatalf("allocs/frees %v", got)
	}
	// Out of memory with nothing to release is the allocator's error.
	b, _ := p.Get(U8, Shape{1})
	if _, err := b.EnsureOnDevice(ctx, a); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("%v", err)
	}
	b.Free()
	big.Free()
}

func TestPoolNonComparableAllocator(t *testing.T) {
	ctx := context.Background()
	p := NewPool()
	a := nonComparableAlloc{fakeAlloc: newFakeAlloc("nc:0")}
	for range 2 {
		b, _ := p.Get(F32, Shape{4})
		if _, err := b.EnsureOnDevice(ctx, a); err != nil {
			t.Fatal(err)
		}
		if err := b.Free(); err != nil {
			t.Fatal(err)
		}
	}
	if s := p.Stats(); s.DeviceHits != 0 || s.DevicePuts != 0 || s.DeviceHeldBytes != 0 {
		t.Fatalf("%+v", s)
	}
	if got := a.counts(); got[0] != 2 || got[1] != 2 {
		t.Fatalf("allocs/frees %v", got)
	}
}

func TestPoolConcurrent(t *testing.T) {
	ctx := context.Background()
	p := NewPool(WithMaxBytes(64 << 10))
	a := newFakeAlloc("fake:0")
	const workers, iters = 8, 300
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range iters {
				n := 1 + r.IntN(2000)
				b, err := p.Get(U32, Shape{n})
				if err != nil {
					t.Error(err)
					return
				}
				v, _ := HostSlice[uint32](b)
				tag := uint32(w<<24 | i)
				for j := range v {
					v[j] = tag
				}
				if i%3 == 0 {
					b.MarkHostDirty()
					if _, err := b.EnsureOnDevice(ctx, a); err != nil {
						t.Error(err)
						return
					}
				}
				for j := range v {
					if v[j] != tag {
						t.Errorf("worker %d: element %d is %#x, want %#x: storage shared", w, j, v[j], tag)
						return
					}
				}
				// Half the buffers are freed twice, concurrently.
				if i%2 == 0 {
					var inner sync.WaitGroup
					inner.Go(func() { b.Free() })
					b.Free()
					inner.Wait()
				} else {
					b.Free()
				}
			}
		})
	}
	wg.Wait()
	s := p.Stats()
	if s.Hits+s.Misses != workers*iters || s.Puts+s.Drops != workers*iters {
		t.Fatalf("every Get must be returned exactly once: %+v", s)
	}
	if s.HeldBytes < 0 || s.HeldBytes > 64<<10 {
		t.Fatalf("held %d", s.HeldBytes)
	}
	if err := p.Trim(); err != nil {
		t.Fatal(err)
	}
	if got := a.counts(); got[0] != got[1] {
		t.Fatalf("device allocs/frees %v", got)
	}
}

func BenchmarkPoolGetFree(b *testing.B) {
	p := NewPool()
	shape := Shape{256, 256}
	b.ReportAllocs()
	for b.Loop() {
		buf, err := p.Get(F32, shape)
		if err != nil {
			b.Fatal(err)
		}
		buf.Free()
	}
}

func BenchmarkPoolGetFreeParallel(b *testing.B) {
	p := NewPool()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		shape := Shape{1024}
		for pb.Next() {
			buf, err := p.Get(F32, shape)
			if err != nil {
				b.Fatal(err)
			}
			buf.Free()
		}
	})
}

func BenchmarkPoolGetFreeDevice(b *testing.B) {
	ctx := context.Background()
	p := NewPool()
	a := newFakeAlloc("fake:0")
	shape := Shape{1024}
	b.ReportAllocs()
	for b.Loop() {
		buf, err := p.Get(F32, shape)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := buf.EnsureOnDevice(ctx, a); err != nil {
			b.Fatal(err)
		}
		buf.Free()
	}
}

// BenchmarkZerosUnpooled is the baseline the pool is measured against.
func BenchmarkZerosUnpooled(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		buf, err := Zeros(F32, Shape{256, 256})
		if err != nil {
			b.Fatal(err)
		}
		buf.Free()
	}
}

// TestPoolGetBatch: GetBatch hands out buffers like as many Gets (hits
// from the free list first, then misses; each buffer freed on its own
// returns its storage once, and its handle stays freed), with one
// allocation for the headers whatever the count; a bad request hands out
// nothing.
func TestPoolGetBatch(t *testing.T) {
	p := NewPool()
	warm := make([]*UnifiedBuffer, 3)
	for i := range warm {
		b, err := p.Get(F32, Shape{4})
		if err != nil {
			t.Fatal(err)
		}
		warm[i] = b
	}
	for _, b := range warm {
		if err := b.Free(); err != nil {
			t.Fatal(err)
		}
	}
	outs := make([]*UnifiedBuffer, 5)
	if err := p.GetBatch(F32, Shape{2, 2}, outs); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Hits != 3 || s.Misses != 5 || s.HeldBytes != 0 {
		t.Fatalf("stats %+v, want 3 hits (the free list) and 5 misses (3 Gets, 2 of the batch)", s)
	}
	seen := map[*UnifiedBuffer]bool{}
	for i, b := range outs {
		if b == nil || seen[b] || b.DType() != F32 || !b.Shape().Equal(Shape{2, 2}) || b.Len() != 4 || !b.HostDirty() {
			t.Fatalf("buffer %d: %+v", i, b)
		}
		seen[b] = true
		s, err := HostSlice[float32](b)
		if err != nil {
			t.Fatal(err)
		}
		s[0] = float32(i)
	}
	for i, b := range outs { // distinct storage: no write seen by another
		if s, _ := HostSlice[float32](b); s[0] != float32(i) {
			t.Fatalf("buffer %d shares storage: %v", i, s[0])
		}
	}
	for _, b := range outs {
		if err := b.Free(); err != nil {
			t.Fatal(err)
		}
		if err := b.Free(); err != nil { // idempotent
			t.Fatal(err)
		}
	}
	if s := p.Stats(); s.Puts != 8 || s.HeldBytes != 5*256 {
		t.Fatalf("stats %+v after freeing all, want 8 puts", s)
	}
	if _, err := HostSlice[float32](outs[0]); !errors.Is(err, ErrFreed) {
		t.Fatalf("a freed batch handle reads: %v", err)
	}
	shape := Shape{4}
	if got := testing.AllocsPerRun(50, func() {
		if err := p.GetBatch(F32, shape, outs); err != nil {
			t.Fatal(err)
		}
		for _, b := range outs {
			_ = b.Free()
		}
	}); got != 1 {
		t.Errorf("%v allocations per GetBatch of %d from a warm pool, want 1 (the headers)", got, len(outs))
	}
	bad := []*UnifiedBuffer{outs[0], outs[1]}
	if err := p.GetBatch(F32, Shape{0}, bad); !errors.Is(err, ErrShape) {
		t.Fatalf("GetBatch of a bad shape = %v", err)
	}
	held := p.Stats().HeldBytes
	small := NewPool(WithMaxAllocation(128))
	if err := small.GetBatch(F32, Shape{1024}, bad); !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("GetBatch above the limit = %v", err)
	}
	if p.Stats().HeldBytes != held {
		t.Fatal("a failed GetBatch took storage")
	}
	if err := p.GetBatch(F32, Shape{4}, nil); err != nil {
		t.Fatalf("empty GetBatch: %v", err)
	}
}
