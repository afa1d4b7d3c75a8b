package stream

import "testing"

// TestPoolPutClears checks the invariant Emitter.Next relies on: an array
// comes back from the pool holding zero values up to its capacity, so the
// elements it carried — and what they referred to — are gone.
func TestPoolPutClears(t *testing.T) {
	p := &bufPool[*int]{size: 8}
	s := p.get()
	for i := range 5 {
		v := i
		*s = append(*s, &v)
	}
	p.put(s)
	if len(*s) != 0 {
		t.Fatalf("put left %d elements in the slice", len(*s))
	}
	for i, v := range (*s)[:cap(*s)] {
		if v != nil {
			t.Fatalf("element %d of a recycled array still refers to %d", i, *v)
		}
	}
}
