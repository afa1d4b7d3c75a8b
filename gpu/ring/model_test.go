package ring

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

// The model of every ring is a plain slice queue of bounded length: a push
// succeeds exactly when the queue has room, a pop returns its head. Fuzz
// input bytes drive random operation sequences against both; any loss,
// duplicate or reordering shows as a mismatch.

// FuzzRingModel runs push, pop, batch push, batch pop and drain ("close":
// the consumer takes everything left, as a terminate with drain does)
// against Ring[int] and the model.
func FuzzRingModel(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 1, 1})
	f.Add([]byte{1, 2, 0x1e, 0x1e, 0x1f, 0, 3, 0x0b, 1})
	f.Add(bytes.Repeat([]byte{0x1e, 0x0f, 0, 1, 0x22}, 20))
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		capacity := 2 << (ops[0] % 5) // 2 … 32
		r, err := NewRing[int](capacity)
		if err != nil {
			t.Fatal(err)
		}
		var model []int
		next := 0
		push := func() {
			// Every other push claims its slot and writes it in place; a
			// claim left unpublished changes nothing.
			var ok bool
			if next%2 == 0 {
				ok = r.TryPush(next)
			} else if p := r.Claim(); p != nil {
				if q := r.Claim(); q != p {
					t.Fatalf("a second Claim before Publish: %p, want %p", q, p)
				}
				*p = next
				r.Publish()
				ok = true
			}
			if want := len(model) < capacity; ok != want {
				t.Fatalf("push %d with %d/%d queued: ok = %v", next, len(model), capacity, ok)
			}
			if ok {
				model = append(model, next)
				next++
			}
		}
		pop := func() {
			v, ok := r.TryPop()
			if want := len(model) > 0; ok != want {
				t.Fatalf("pop with %d queued: ok = %v", len(model), ok)
			}
			if ok {
				if v != model[0] {
					t.Fatalf("popped %d, want %d", v, model[0])
				}
				model = model[1:]
			}
		}
		for _, op := range ops[1:] {
			n := int(op>>2) % 8
			switch op & 3 {
			case 0:
				push()
			case 1:
				pop()
			case 2:
				for range n + 1 {
					push()
				}
			case 3:
				if n == 7 { // close: drain
					for len(model) > 0 {
						pop()
					}
					pop()
				} else {
					for range n + 1 {
						pop()
					}
				}
			}
			if r.Len() != len(model) || r.Free() != capacity-len(model) || r.Empty() != (len(model) == 0) {
				t.Fatalf("Len %d Free %d Empty %v, model holds %d of %d", r.Len(), r.Free(), r.Empty(), len(model), capacity)
			}
		}
		for len(model) > 0 {
			pop()
		}
		pop()
	})
}

// slotMem returns 8-byte aligned Go memory for a slot ring.
func slotMem(capacity, slotSize int) unsafe.Pointer {
	buf := make([]uint64, (SlotRingSize(capacity, slotSize)+7)/8)
	return unsafe.Pointer(&buf[0])
}

// payloadOf is the payload of message i: up to max bytes derived from i.
func payloadOf(i uint64, n int) []byte {
	p := make([]byte, n)
	for j := range p {
		p[j] = byte(i*31 + uint64(j))
	}
	return p
}

// FuzzSlotRingModel drives a slot ring in raw memory through its host-side
// producer and consumer (TryPushRaw, TryPop) against the model: headers
// and payloads come out as they went in, in order, once.
func FuzzSlotRingModel(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 1, 1})
	f.Add([]byte{2, 0x80, 0xfe, 0x02, 0x03, 0x41, 0xff})
	f.Add(bytes.Repeat([]byte{0x02, 0x7e, 0x00, 0x81, 0x23}, 20))
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		const slotSize = 64
		capacity := 2 << (ops[0] % 4) // 2 … 16
		r := NewSlotRing(slotMem(capacity, slotSize), capacity, slotSize)
		if r.Cap() != capacity || r.PayloadMax() != slotSize-32 {
			t.Fatalf("cap %d payload max %d", r.Cap(), r.PayloadMax())
		}
		type msg struct {
			h SlotHeader
			p []byte
		}
		var model []msg
		var next uint64
		push := func(n int) {
			m := msg{SlotHeader{TypeID: uint32(next % 9), Flags: uint32(next % 3), CorrelationID: next,
				Status: uint32(next % 4), TimestampNS: next * 1000}, payloadOf(next, n)}
			ok := r.TryPushRaw(m.h, m.p)
			if want := len(model) < capacity; ok != want {
				t.Fatalf("push %d with %d/%d queued: ok = %v", next, len(model), capacity, ok)
			}
			if ok {
				m.h.Length = uint32(n)
				model = append(model, m)
				next++
			}
		}
		pop := func() {
			h, p, ok := r.TryPop()
			if want := len(model) > 0; ok != want {
				t.Fatalf("pop with %d queued: ok = %v", len(model), ok)
			}
			if ok {
				if h != model[0].h || !bytes.Equal(p, model[0].p) {
					t.Fatalf("popped %+v %x, want %+v %x", h, p, model[0].h, model[0].p)
				}
				model = model[1:]
			}
		}
		for _, op := range ops[1:] {
			n := int(op>>2) % 33 // payload bytes, 0 … PayloadMax
			switch op & 3 {
			case 0:
				push(n)
			case 1:
				pop()
			case 2:
				for i := range n%8 + 1 {
					push((n + i) % 33)
				}
			case 3:
				for len(model) > 0 { // close: drain
					pop()
				}
				pop()
			}
			if r.Len() != len(model) {
				t.Fatalf("Len %d, model %d", r.Len(), len(model))
			}
		}
	})
}

// TestRingConcurrentModel: one producer and one consumer goroutine; the
// consumer must see 0 … n-1 in order (-race checks the publication).
func TestRingConcurrentModel(t *testing.T) {
	const n = 200_000
	r, _ := NewRing[*int](16)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			v := i
			if i%2 == 1 { // in place
				p := r.Claim()
				for ; p == nil; p = r.Claim() {
					runtime.Gosched()
				}
				*p = &v
				r.Publish()
				continue
			}
			for !r.TryPush(&v) {
				runtime.Gosched()
			}
		}
	})
	for want := 0; want < n; {
		v, ok := r.TryPop()
		if !ok {
			runtime.Gosched()
			continue
		}
		if *v != want {
			t.Fatalf("got %d, want %d", *v, want)
		}
		want++
	}
	wg.Wait()
	if _, ok := r.TryPop(); ok {
		t.Fatal("a duplicate after the last message")
	}
}

// TestSlotRingConcurrentModel is the same through a slot ring's raw memory.
func TestSlotRingConcurrentModel(t *testing.T) {
	const n = 50_000
	const capacity, slotSize = 8, 96
	r := NewSlotRing(slotMem(capacity, slotSize), capacity, slotSize)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range uint64(n) {
			for !r.TryPushRaw(SlotHeader{CorrelationID: i}, payloadOf(i, int(i%64))) {
				runtime.Gosched()
			}
		}
	})
	for want := uint64(0); want < n; {
		h, p, ok := r.TryPop()
		if !ok {
			runtime.Gosched()
			continue
		}
		if h.CorrelationID != want || !bytes.Equal(p, payloadOf(want, int(want%64))) {
			t.Fatalf("got %d (%d bytes), want %d", h.CorrelationID, len(p), want)
		}
		want++
	}
	wg.Wait()
	if r.Len() != 0 {
		t.Fatal("messages left")
	}
}

func TestSlotRingPayloadTooLargePanics(t *testing.T) {
	r := NewSlotRing(slotMem(2, 48), 2, 48)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	r.TryPushRaw(SlotHeader{}, make([]byte, 17))
}
