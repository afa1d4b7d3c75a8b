package gpu

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"testing"
	"unsafe"
)

// fakeAlloc is a device allocator backed by byte slices. It counts
// allocations, frees and copies, and can run out of memory.
type fakeAlloc struct {
	name     string
	capacity int // bytes; 0 is unlimited

	mu                  sync.Mutex
	allocs, frees, live int
	copiesIn, copiesOut int
	failCopy            error
}

func newFakeAlloc(name string) *fakeAlloc { return &fakeAlloc{name: name} }

func (a *fakeAlloc) Name() string { return a.name }

func (a *fakeAlloc) Alloc(ctx context.Context, n int) (DeviceMemory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.capacity > 0 && a.live+n > a.capacity {
		return nil, &DeviceError{Kind: DeviceOutOfMemory, Backend: a.name, Reason: fmt.Sprintf("%d bytes", n)}
	}
	a.allocs++
	a.live += n
	return &fakeMem{a: a, data: make([]byte, n)}, nil
}

// counts returns allocs, frees, copiesIn, copiesOut.
func (a *fakeAlloc) counts() [4]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return [4]int{a.allocs, a.frees, a.copiesIn, a.copiesOut}
}

type fakeMem struct {
	a     *fakeAlloc
	data  []byte
	freed bool // guarded by a.mu
}

func (m *fakeMem) Size() int { return len(m.data) }

func (m *fakeMem) CopyFromHost(_ context.Context, src []byte) error {
	m.a.mu.Lock()
	defer m.a.mu.Unlock()
	switch {
	case m.a.failCopy != nil:
		return m.a.failCopy
	case m.freed:
		return errors.New("fake: copy to freed memory")
	case len(src) > len(m.data):
		return errors.New("fake: copy larger than allocation")
	}
	copy(m.data, src)
	m.a.copiesIn++
	return nil
}

func (m *fakeMem) CopyToHost(_ context.Context, dst []byte) error {
	m.a.mu.Lock()
	defer m.a.mu.Unlock()
	switch {
	case m.a.failCopy != nil:
		return m.a.failCopy
	case m.freed:
		return errors.New("fake: copy from freed memory")
	case len(dst) > len(m.data):
		return errors.New("fake: copy larger than allocation")
	}
	copy(dst, m.data)
	m.a.copiesOut++
	return nil
}

func (m *fakeMem) Free() error {
	m.a.mu.Lock()
	defer m.a.mu.Unlock()
	if m.freed {
		return errors.New("fake: double free")
	}
	m.freed = true
	m.a.frees++
	m.a.live -= len(m.data)
	return nil
}

// device returns the fake memory behind b, as a kernel would see it.
func device(t *testing.T, b *UnifiedBuffer) *fakeMem {
	t.Helper()
	m, ok := b.Device().(*fakeMem)
	if !ok {
		t.Fatalf("device memory is %T", b.Device())
	}
	return m
}

// leBytes encodes vals little-endian.
func leBytes[T Number](t *testing.T, vals []T) []byte {
	t.Helper()
	raw, err := binary.Append(nil, binary.LittleEndian, vals)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func roundTrip[T Number](t *testing.T, vals []T) {
	t.Helper()
	dt := DTypeOf[T]()
	raw := leBytes(t, vals)
	b, err := FromBytes(dt, Shape{len(vals)}, raw)
	if err != nil {
		t.Fatal(err)
	}
	if b.DType() != dt || b.Len() != len(vals) || b.ByteSize() != len(raw) || !b.Shape().Equal(Shape{len(vals)}) {
		t.Fatalf("%v: dtype %v len %d bytes %d shape %v", dt, b.DType(), b.Len(), b.ByteSize(), b.Shape())
	}
	raw[0] ^= 0xff // FromBytes copied
	raw[0] ^= 0xff
	got, err := HostSlice[T](b)
	if err != nil || !slices.Equal(got, vals) {
		t.Fatalf("%v: HostSlice = %v, %v; want %v", dt, got, err, vals)
	}
	out, err := b.Bytes(context.Background())
	if err != nil || !bytes.Equal(out, raw) {
		t.Fatalf("%v: Bytes = %x, %v; want %x", dt, out, err, raw)
	}
	cp, err := ToSlice[T](context.Background(), b)
	if err != nil || !slices.Equal(cp, vals) {
		t.Fatalf("%v: ToSlice = %v, %v", dt, cp, err)
	}
	if &cp[0] == &got[0] {
		t.Fatalf("%v: ToSlice did not copy", dt)
	}
	hb, err := b.HostBytes()
	if err != nil || !bytes.Equal(hb, raw) || cap(hb) != len(raw) || unsafe.SliceData(hb) != (*byte)(unsafe.Pointer(&got[0])) {
		t.Fatalf("%v: HostBytes = %x (cap %d), %v", dt, hb, cap(hb), err)
	}
}

func TestFromBytesRoundTrip(t *testing.T) {
	roundTrip(t, []float32{1.5, -2, float32(math.Inf(1)), math.SmallestNonzeroFloat32, 3e38})
	roundTrip(t, []float64{math.Pi, -0.25, math.MaxFloat64, math.Inf(-1)})
	roundTrip(t, []int32{math.MinInt32, -1, 0, 1, math.MaxInt32})
	roundTrip(t, []int64{math.MinInt64, -1, 0, 1 << 40, math.MaxInt64})
	roundTrip(t, []uint32{0, 1, 0xdeadbeef, math.MaxUint32})
	roundTrip(t, []uint8{0, 1, 0x7f, 0x80, 0xff})
	// Little-endian, byte for byte.
	b, err := FromBytes(U32, Shape{1}, []byte{0x01, 0x02, 0x03, 0x04})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := HostSlice[uint32](b); v[0] != 0x04030201 {
		t.Errorf("read %#x", v[0])
	}
}

func TestConstructorErrors(t *testing.T) {
	isShape := func(err error) bool { var se *ShapeError; return errors.As(err, &se) && errors.Is(err, ErrShape) }
	isMem := func(err error) bool { var me *MemoryError; return errors.As(err, &me) && errors.Is(err, ErrMemory) }
	isDType := func(err error) bool { return isMem(err) && errors.Is(err, ErrDType) }
	isOOM := func(err error) bool { return isMem(err) && errors.Is(err, ErrOutOfMemory) }
	cases := []struct {
		name string
		err  func() error
		kind func(error) bool
	}{
		{"NewBuffer empty", func() error { _, err := NewBuffer([]float32{}); return err }, isShape},
		{"NewBuffer nil", func() error { _, err := NewBuffer[int32](nil, 1); return err }, isShape},
		{"NewBuffer mismatch", func() error { _, err := NewBuffer([]float32{1, 2, 3}, 2, 2); return err }, isShape},
		{"NewBuffer zero dim", func() error { _, err := NewBuffer([]float32{1}, 1, 0); return err }, isShape},
		{"NewBuffer negative dim", func() error { _, err := NewBuffer([]float32{1}, -1, -1); return err }, isShape},
		{"NewBuffer overflow", func() error { _, err := NewBuffer([]uint8{1}, math.MaxInt, 3); return err }, isShape},
		{"FromBytes invalid dtype", func() error { _, err := FromBytes(DTypeInvalid, Shape{1}, []byte{0}); return err }, isDType},
		{"FromBytes unknown dtype", func() error { _, err := FromBytes(DType(99), Shape{1}, []byte{0}); return err }, isDType},
		{"FromBytes short", func() error { _, err := FromBytes(F32, Shape{2}, make([]byte, 7)); return err }, isMem},
		{"FromBytes long", func() error { _, err := FromBytes(F32, Shape{2}, make([]byte, 9)); return err }, isMem},
		{"FromBytes empty shape", func() error { _, err := FromBytes(U8, Shape{}, nil); return err }, isShape},
		{"FromBytes zero dim", func() error { _, err := FromBytes(U8, Shape{0}, nil); return err }, isShape},
		{"Zeros invalid dtype", func() error { _, err := Zeros(DTypeInvalid, Shape{4}); return err }, isDType},
		{"Zeros negative dim", func() error { _, err := Zeros(F64, Shape{3, -4}); return err }, isShape},
		{"Zeros element overflow", func() error { _, err := Zeros(F64, Shape{1 << 40, 1 << 40}); return err }, isShape},
		{"Zeros byte overflow", func() error { _, err := Zeros(F64, Shape{math.MaxInt / 4}); return err }, isShape},
		{"Zeros beyond the address space", func() error { _, err := Zeros(U8, Shape{math.MaxInt / 2}); return err }, isOOM},
		{"Zeros nil shape", func() error { _, err := Zeros(F64, nil); return err }, isShape},
	}
	for _, c := range cases {
		err := c.err()
		if err == nil || !c.kind(err) {
			t.Errorf("%s: %v (%T)", c.name, err, err)
		}
		if errors.Is(err, ErrFreed) {
			t.Errorf("%s: ErrFreed", c.name)
		}
	}
}

func TestNewBufferWrapsWithoutCopy(t *testing.T) {
	data := []float64{1, 2, 3, 4, 5, 6}
	b, err := NewBuffer(data, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if b.DType() != F64 || !b.Shape().Equal(Shape{2, 3}) || b.Len() != 6 || b.ByteSize() != 48 {
		t.Fatalf("dtype %v shape %v len %d bytes %d", b.DType(), b.Shape(), b.Len(), b.ByteSize())
	}
	v, err := HostSlice[float64](b)
	if err != nil {
		t.Fatal(err)
	}
	if &v[0] != &data[0] || len(v) != 6 {
		t.Fatal("HostSlice is not the caller's slice")
	}
	data[5] = 42
	v[0] = -1
	if v[5] != 42 || data[0] != -1 {
		t.Error("writes are not shared")
	}
	// Default shape; a sub-slice wraps only its own elements.
	b2, err := NewBuffer(data[2:4])
	if err != nil || !b2.Shape().Equal(Shape{2}) || b2.ByteSize() != 16 {
		t.Fatalf("%v %v", b2, err)
	}
	hb, _ := b2.HostBytes()
	if cap(hb) != 16 || unsafe.SliceData(hb) != (*byte)(unsafe.Pointer(&data[2])) {
		t.Error("HostBytes does not alias data[2:4]")
	}
	// A named element type shares its dtype with the predeclared one.
	temps := []celsius{20, 21}
	b3, err := NewBuffer(temps)
	if err != nil || b3.DType() != F32 {
		t.Fatal(b3, err)
	}
	if f, err := HostSlice[float32](b3); err != nil || f[1] != 21 {
		t.Error(f, err)
	}
	// A buffer of more than inlineDims dimensions.
	b4, err := NewBuffer(make([]uint8, 64), 2, 2, 2, 2, 2, 2)
	if err != nil || !b4.Shape().Equal(Shape{2, 2, 2, 2, 2, 2}) {
		t.Fatal(b4.Shape(), err)
	}
}

func TestZeros(t *testing.T) {
	for _, dt := range DTypes() {
		b, err := Zeros(dt, Shape{3, 5})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := b.HostBytes()
		if err != nil || len(raw) != 15*dt.Size() || !bytes.Equal(raw, make([]byte, len(raw))) {
			t.Errorf("%v: %x %v", dt, raw, err)
		}
		if uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%8 != 0 {
			t.Errorf("%v: host memory not 8-byte aligned", dt)
		}
		if !b.HostDirty() || b.DeviceDirty() || b.Device() != nil {
			t.Errorf("%v: new buffer flags", dt)
		}
	}
}

func TestHostSliceWrongDType(t *testing.T) {
	b, err := Zeros(S32, Shape{4})
	if err != nil {
		t.Fatal(err)
	}
	_, err = HostSlice[float32](b)
	var me *MemoryError
	if !errors.As(err, &me) || me.Reason != "buffer is s32, not f32" || errors.Is(err, ErrFreed) {
		t.Errorf("HostSlice[float32] of s32: %v", err)
	}
	if _, err := ToSlice[uint32](context.Background(), b); !errors.Is(err, ErrMemory) {
		t.Errorf("ToSlice[uint32] of s32: %v", err)
	}
	if _, err := HostSlice[count32](b); err != nil {
		t.Errorf("named int32 view: %v", err)
	}
}

func TestReshape(t *testing.T) {
	b, err := Zeros(F32, Shape{2, 6})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Reshape(3, 4); err != nil || !b.Shape().Equal(Shape{3, 4}) {
		t.Fatal(b.Shape(), err)
	}
	s := b.Shape()
	s[0] = 99 // Shape returns a copy
	if b.Shape()[0] != 3 {
		t.Error("Shape aliases the buffer")
	}
	if err := b.Reshape(1, 2, 1, 3, 1, 2); err != nil || !b.Shape().Equal(Shape{1, 2, 1, 3, 1, 2}) {
		t.Fatal(b.Shape(), err)
	}
	for _, bad := range [][]int{{5}, {}, {12, 0}, {-12}, {math.MaxInt, 2}} {
		if err := b.Reshape(bad...); !errors.Is(err, ErrShape) {
			t.Errorf("Reshape(%v): %v", bad, err)
		}
	}
	if !b.Shape().Equal(Shape{1, 2, 1, 3, 1, 2}) || b.Len() != 12 {
		t.Error("failed Reshape changed the shape")
	}
}

func TestLazySync(t *testing.T) {
	ctx := context.Background()
	a := newFakeAlloc("fake:0")
	data := []float32{1, 2, 3, 4}
	b, err := NewBuffer(data)
	if err != nil {
		t.Fatal(err)
	}
	// Host-only work copies nothing; marking the device dirty without a
	// device is a no-op.
	b.MarkDeviceDirty()
	if err := b.EnsureOnHost(ctx); err != nil || b.DeviceDirty() || !b.HostDirty() {
		t.Fatal(err, b.DeviceDirty(), b.HostDirty())
	}
	// First EnsureOnDevice: allocate and copy.
	mem, err := b.EnsureOnDevice(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.counts(); got != [4]int{1, 0, 1, 0} {
		t.Fatalf("after first EnsureOnDevice: allocs, frees, in, out = %v", got)
	}
	if mem.Size() != 16 || mem != b.Device() || b.HostDirty() || b.DeviceDirty() {
		t.Fatal("device state")
	}
	if m := device(t, b); !bytes.Equal(m.data, leBytes(t, data)) {
		t.Fatalf("device holds %x", m.data)
	}
	// Not dirty: no copy, either way.
	if _, err := b.EnsureOnDevice(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureOnHost(ctx); err != nil {
		t.Fatal(err)
	}
	if got := a.counts(); got != [4]int{1, 0, 1, 0} {
		t.Fatalf("clean buffer copied: %v", got)
	}
	// Host written: one copy in.
	data[0] = 10
	b.MarkHostDirty()
	if !b.HostDirty() {
		t.Fatal("MarkHostDirty")
	}
	if _, err := b.EnsureOnDevice(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := b.EnsureOnDevice(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := a.counts(); got != [4]int{1, 0, 2, 0} {
		t.Fatalf("after MarkHostDirty: %v", got)
	}
	// A "kernel" writes device memory: one copy out.
	m := device(t, b)
	copy(m.data, leBytes(t, []float32{5, 6, 7, 8}))
	b.MarkDeviceDirty()
	if b.HostDirty() || !b.DeviceDirty() {
		t.Fatal("MarkDeviceDirty flags")
	}
	if _, err := b.EnsureOnDevice(ctx, a); err != nil { // device is current: no copy in
		t.Fatal(err)
	}
	got, err := ToSlice[float32](ctx, b)
	if err != nil || !slices.Equal(got, []float32{5, 6, 7, 8}) || !slices.Equal(data, got) {
		t.Fatalf("ToSlice = %v, %v; data %v", got, err, data)
	}
	if _, err := b.Bytes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureOnHost(ctx); err != nil {
		t.Fatal(err)
	}
	if got := a.counts(); got != [4]int{1, 0, 2, 1} {
		t.Fatalf("after MarkDeviceDirty: %v", got)
	}
	if b.DeviceDirty() || b.HostDirty() {
		t.Fatal("flags after EnsureOnHost")
	}
	// The last mark wins.
	b.MarkDeviceDirty()
	b.MarkHostDirty()
	if err := b.EnsureOnHost(ctx); err != nil {
		t.Fatal(err)
	}
	if got := a.counts(); got[3] != 1 {
		t.Fatalf("MarkHostDirty after MarkDeviceDirty still copied out: %v", got)
	}
	// Another allocator is refused.
	_, err = b.EnsureOnDevice(ctx, newFakeAlloc("fake:1"))
	var me *MemoryError
	if !errors.As(err, &me) || me.Reason != "buffer is on fake:0, not fake:1" {
		t.Fatalf("other allocator: %v", err)
	}
	if _, err := b.EnsureOnDevice(ctx, nil); !errors.Is(err, ErrMemory) {
		t.Fatalf("nil allocator: %v", err)
	}
	// Free frees the device memory once.
	var c io.Closer = b
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	if got := a.counts(); got[0] != 1 || got[1] != 1 || a.live != 0 {
		t.Fatalf("after Free: %v live %d", got, a.live)
	}
	if !b.Freed() || b.Device() != nil || b.HostDirty() || b.DeviceDirty() {
		t.Fatal("freed buffer state")
	}
}

func TestDeviceErrors(t *testing.T) {
	ctx := context.Background()
	a := newFakeAlloc("fake:0")
	a.capacity = 8
	b, err := Zeros(F64, Shape{2}) // 16 bytes: does not fit
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.EnsureOnDevice(ctx, a)
	var de *DeviceError
	if !errors.Is(err, ErrOutOfMemory) || !errors.As(err, &de) || de.Kind != DeviceOutOfMemory {
		t.Fatalf("out of memory: %v", err)
	}
	if b.Device() != nil || !b.HostDirty() {
		t.Fatal("failed allocation changed the buffer")
	}
	// A cancelled context allocates nothing.
	a.capacity = 0
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.EnsureOnDevice(cctx, a); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if got := a.counts(); got[0] != 0 {
		t.Fatalf("cancelled EnsureOnDevice allocated: %v", got)
	}
	// A failed copy keeps the dirty flag; the next call retries it.
	a.failCopy = errors.New("fake: bus error")
	if _, err := b.EnsureOnDevice(ctx, a); err != a.failCopy {
		t.Fatalf("copy error: %v", err)
	}
	if b.Device() == nil || !b.HostDirty() {
		t.Fatal("flags after failed copy")
	}
	a.failCopy = nil
	if _, err := b.EnsureOnDevice(ctx, a); err != nil || b.HostDirty() {
		t.Fatal(err)
	}
	b.MarkDeviceDirty()
	a.failCopy = errors.New("fake: bus error")
	if err := b.EnsureOnHost(ctx); err != a.failCopy || !b.DeviceDirty() {
		t.Fatalf("copy-back error: %v", err)
	}
	if _, err := ToSlice[float64](ctx, b); err != a.failCopy {
		t.Fatalf("ToSlice: %v", err)
	}
	if _, err := b.Bytes(ctx); err != a.failCopy {
		t.Fatalf("Bytes: %v", err)
	}
	a.failCopy = nil
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	// An allocator that hands out too little is refused, and its memory freed.
	short := &shortAlloc{fakeAlloc: newFakeAlloc("short")}
	b2, _ := Zeros(U8, Shape{100})
	if _, err := b2.EnsureOnDevice(ctx, short); !errors.Is(err, ErrMemory) {
		t.Fatalf("short allocation: %v", err)
	}
	if got := short.counts(); got[0] != 1 || got[1] != 1 {
		t.Fatalf("short allocation not freed: %v", got)
	}
}

// shortAlloc allocates one byte less than asked.
type shortAlloc struct{ *fakeAlloc }

func (a *shortAlloc) Alloc(ctx context.Context, n int) (DeviceMemory, error) {
	return a.fakeAlloc.Alloc(ctx, n-1)
}

func TestFreedBuffer(t *testing.T) {
	ctx := context.Background()
	a := newFakeAlloc("fake:0")
	b, err := NewBuffer([]int64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.EnsureOnDevice(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	errs := map[string]error{}
	_, errs["HostSlice"] = HostSlice[int64](b)
	_, errs["ToSlice"] = ToSlice[int64](ctx, b)
	_, errs["Bytes"] = b.Bytes(ctx)
	_, errs["HostBytes"] = b.HostBytes()
	_, errs["EnsureOnDevice"] = b.EnsureOnDevice(ctx, a)
	errs["EnsureOnHost"] = b.EnsureOnHost(ctx)
	errs["Reshape"] = b.Reshape(3)
	for op, err := range errs {
		var me *MemoryError
		if !errors.Is(err, ErrFreed) || !errors.Is(err, ErrMemory) || !errors.As(err, &me) || me.Op != op || me.Reason != "freed buffer" {
			t.Errorf("%s on a freed buffer: %v", op, err)
		}
	}
	b.MarkHostDirty()
	b.MarkDeviceDirty()
	if b.HostDirty() || b.DeviceDirty() || b.Device() != nil || !b.Freed() {
		t.Error("freed buffer state")
	}
	// Metadata still describes what the buffer was.
	if b.DType() != S64 || b.Len() != 3 || !b.Shape().Equal(Shape{3}) {
		t.Error("metadata of a freed buffer")
	}
	if got := a.counts(); got[0] != 1 || got[1] != 1 {
		t.Errorf("device allocs/frees %v", got)
	}
}

func TestConcurrentFreeOnce(t *testing.T) {
	ctx := context.Background()
	a := newFakeAlloc("fake:0")
	for range 100 {
		b, _ := Zeros(F32, Shape{8})
		if _, err := b.EnsureOnDevice(ctx, a); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if err := b.Free(); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	if got := a.counts(); got[0] != 100 || got[1] != 100 {
		t.Errorf("allocs/frees %v", got)
	}
}

// nonComparableAlloc cannot be compared with ==: buffers tell it apart by
// name, pools do not keep its memory.
type nonComparableAlloc struct {
	*fakeAlloc
	tags []string
}

func TestNonComparableAllocator(t *testing.T) {
	ctx := context.Background()
	a := nonComparableAlloc{fakeAlloc: newFakeAlloc("nc:0")}
	b, _ := Zeros(U8, Shape{10})
	if _, err := b.EnsureOnDevice(ctx, a); err != nil {
		t.Fatal(err)
	}
	same := nonComparableAlloc{fakeAlloc: a.fakeAlloc, tags: []string{"x"}}
	if _, err := b.EnsureOnDevice(ctx, same); err != nil {
		t.Fatal(err)
	}
	other := nonComparableAlloc{fakeAlloc: newFakeAlloc("nc:1")}
	if _, err := b.EnsureOnDevice(ctx, other); !errors.Is(err, ErrMemory) {
		t.Fatal(err)
	}
	if _, err := b.EnsureOnDevice(ctx, a.fakeAlloc); !errors.Is(err, ErrMemory) {
		t.Fatal("an allocator of another type passed")
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	if got := a.counts(); got[0] != 1 || got[1] != 1 {
		t.Errorf("allocs/frees %v", got)
	}
}

func BenchmarkEnsureOnDeviceClean(b *testing.B) {
	ctx := context.Background()
	a := newFakeAlloc("fake:0")
	buf, _ := Zeros(F32, Shape{1024})
	if _, err := buf.EnsureOnDevice(ctx, a); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buf.EnsureOnDevice(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFreeWhileAcquired: a Free during a use only marks the buffer; its
// memory stays valid until the last Release, which returns the storage to
// the pool exactly once, and an Acquire after Free fails with ErrFreed.
func TestFreeWhileAcquired(t *testing.T) {
	p := NewPool()
	b, err := p.Get(F32, Shape{64})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Acquire(); err != nil {
		t.Fatal(err)
	}
	if err := b.Acquire(); err != nil {
		t.Fatal(err)
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	if !b.Freed() {
		t.Fatal("Freed() is false after Free")
	}
	if err := b.Acquire(); !errors.Is(err, ErrFreed) || !errors.Is(err, ErrMemory) {
		t.Fatalf("Acquire after Free: %v, want ErrFreed", err)
	}
	if s, err := HostSlice[float32](b); err != nil || len(s) != 64 {
		t.Fatalf("memory of a freed buffer in use: %v", err)
	}
	if err := b.Release(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Puts != 0 {
		t.Fatalf("storage returned while in use: %+v", s)
	}
	if err := b.Release(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Puts != 1 {
		t.Fatalf("storage returned %d times, want once", s.Puts)
	}
	if _, err := HostSlice[float32](b); !errors.Is(err, ErrFreed) {
		t.Fatalf("HostSlice after the last Release: %v, want ErrFreed", err)
	}
	if err := b.Free(); err != nil || p.Stats().Puts != 1 {
		t.Fatalf("second Free: %v, puts %d", err, p.Stats().Puts)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Release without Acquire does not panic")
		}
	}()
	_ = b.Release()
}

// TestConcurrentAcquireFree races Acquire/Release pairs against one Free:
// the storage goes back exactly once, and never while a use is held.
func TestConcurrentAcquireFree(t *testing.T) {
	for range 100 {
		p := NewPool()
		b, err := p.Get(U8, Shape{256})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for b.Acquire() == nil {
					if _, err := b.HostBytes(); err != nil {
						t.Errorf("memory gone during a use: %v", err)
					}
					_ = b.Release()
				}
			}()
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = b.Free() }()
		wg.Wait()
		if s := p.Stats(); s.Puts != 1 {
			t.Fatalf("storage returned %d times, want once", s.Puts)
		}
	}
}
