package ring

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

func TestNewRingCapacity(t *testing.T) {
	for _, c := range []int{-4, 0, 1, 3, 6, 100, MaxRingCapacity * 2} {
		_, err := NewRing[int](c)
		var ce *CapacityError
		if !errors.As(err, &ce) || ce.Capacity != c {
			t.Errorf("NewRing(%d) error = %v, want *CapacityError", c, err)
		}
	}
	for _, c := range []int{2, 4, 1024} {
		r, err := NewRing[int](c)
		if err != nil || r.Cap() != c {
			t.Errorf("NewRing(%d) = %v, %v", c, r, err)
		}
	}
}

func TestRingFullEmptyWrap(t *testing.T) {
	r, _ := NewRing[int](4)
	if _, ok := r.TryPop(); ok {
		t.Fatal("pop from empty ring succeeded")
	}
	next := 0
	want := 0
	for round := 0; round < 10; round++ { // indices wrap the slots many times
		for r.TryPush(next) {
			next++
		}
		if r.Len() != 4 || r.Free() != 0 {
			t.Fatalf("full ring: len %d free %d", r.Len(), r.Free())
		}
		if r.Pushed() != uint64(next) { // a failed push counts for nothing
			t.Fatalf("Pushed = %d after %d pushes", r.Pushed(), next)
		}
		for i := 0; i < 3; i++ {
			v, ok := r.TryPop()
			if !ok || v != want {
				t.Fatalf("pop = %d,%v want %d", v, ok, want)
			}
			want++
		}
	}
	for {
		v, ok := r.TryPop()
		if !ok {
			break
		}
		if v != want {
			t.Fatalf("pop = %d want %d", v, want)
		}
		want++
	}
	if want != next || !r.Empty() {
		t.Fatalf("drained %d of %d", want, next)
	}
}

func TestRingClearsSlots(t *testing.T) {
	r, _ := NewRing[*int](2)
	x := 1
	r.TryPush(&x)
	r.TryPop()
	for _, s := range r.slots {
		if s != nil {
			t.Fatal("popped slot still references its value")
		}
	}
}

// TestRingHammer runs one producer and one consumer flat out, each pausing at
// random, and checks that every value arrives exactly once and in order.
func TestRingHammer(t *testing.T) {
	const n = 200_000
	for _, capacity := range []int{2, 8, 1024} {
		r, _ := NewRing[uint64](capacity)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(1, uint64(capacity)))
			for i := uint64(1); i <= n; {
				if r.TryPush(i) {
					i++
				} else {
					runtime.Gosched()
				}
				if rng.IntN(64) == 0 {
					pause(rng.IntN(200))
				}
			}
		}()
		var got, bad uint64
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(2, uint64(capacity)))
			for got < n {
				v, ok := r.TryPop()
				if !ok {
					runtime.Gosched()
					continue
				}
				got++
				if v != got && bad == 0 {
					bad = v
				}
				if rng.IntN(64) == 0 {
					pause(rng.IntN(200))
				}
			}
		}()
		wg.Wait()
		if bad != 0 {
			t.Fatalf("capacity %d: value %d arrived at position %d", capacity, bad, got)
		}
		if !r.Empty() {
			t.Fatalf("capacity %d: ring not empty after %d pops", capacity, got)
		}
	}
}

// pause burns a little time without sleeping.
func pause(n int) {
	for i := 0; i < n; i++ {
		if i%16 == 0 {
			runtime.Gosched()
		}
	}
}

func BenchmarkRingPushPop(b *testing.B) {
	r, _ := NewRing[[4]uint64](1024)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		r.TryPush([4]uint64{uint64(i)})
		r.TryPop()
	}
}

func BenchmarkRingSPSC(b *testing.B) {
	r, _ := NewRing[uint64](1024)
	b.ReportAllocs()
	done := make(chan struct{})
	go func() {
		for n := 0; n < b.N; {
			if _, ok := r.TryPop(); ok {
				n++
			} else {
				runtime.Gosched()
			}
		}
		close(done)
	}()
	for i := 0; i < b.N; {
		if r.TryPush(uint64(i)) {
			i++
		} else {
			runtime.Gosched()
		}
	}
	<-done
}

// A batch is read in place and released with one store: the producer sees
// the slots free only after Release, the consumer sees them in order, and
// released slots are cleared.
func TestRingBatch(t *testing.T) {
	r, err := NewRing[*int](8)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]int, 8)
	for i := range vals {
		vals[i] = i
		if !r.TryPush(&vals[i]) {
			t.Fatalf("push %d", i)
		}
	}
	if n := r.Pending(); n != 8 {
		t.Fatalf("Pending = %d, want 8", n)
	}
	for i := range 5 {
		if got := *r.Peek(i); *got != i {
			t.Fatalf("Peek(%d) = %d", i, *got)
		}
	}
	if r.TryPush(&vals[0]) {
		t.Fatal("push into a full ring before Release")
	}
	r.Release(5)
	if n := r.Pending(); n != 3 {
		t.Fatalf("Pending after Release(5) = %d, want 3", n)
	}
	for i := range 5 {
		if r.slots[i] != nil {
			t.Fatalf("slot %d not cleared", i)
		}
	}
	for i := range 5 {
		if !r.TryPush(&vals[i]) {
			t.Fatalf("push %d after Release", i)
		}
	}
	want := []int{5, 6, 7, 0, 1, 2, 3, 4}
	if n := r.Pending(); n != len(want) {
		t.Fatalf("Pending = %d", n)
	}
	for i, w := range want {
		if got := *r.Peek(i); *got != w {
			t.Fatalf("Peek(%d) = %d, want %d", i, *got, w)
		}
	}
	r.Release(0) // no-op
	r.Release(len(want))
	if !r.Empty() || r.Pending() != 0 {
		t.Fatal("ring not empty after releasing everything")
	}
}
