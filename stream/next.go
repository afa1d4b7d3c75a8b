package stream

// Next emits an element that the caller writes in place: it returns where
// the element lies — with one edge to one downstream instance and no event
// time on this output, in the pending packet's array itself — holding T's
// zero value, for the caller to fill (*p = v, or field by field) before it
// next calls the emitter (Emit, EmitAll, Next, Watermark) or returns. It is
// Emit(*p) without the copy of the element into the packet: the cheaper way
// for a stage that builds many outputs one at a time, such as a parser.
//
// The element is emitted, filled or not: what the caller has written when
// it next calls the emitter or returns is what goes downstream (with
// several targets or event time, it is then copied in as Emit would). The
// pointer is not valid after that.
func (e *Emitter[T]) Next() *T {
	// The common case: the element before was written in the packet too,
	// and there is room for this one. (With its fallback call it is over
	// the compiler's inlining budget; a profile-guided build inlines it.)
	// (While a slot is open in the packet nothing else touches the
	// emitter, and next caps the packet's items at the batch size.)
	// The slot holds T's zero value already: the pool's arrays are zero
	// beyond their length (bufPool.put).
	if t := e.one; e.open == openPacket && len(t.items) < cap(t.items) {
		n := len(t.items)
		t.items = t.items[:n+1]
		e.outN++
		return &t.items[n]
	}
	return e.next()
}

// next is Next's general case.
func (e *Emitter[T]) next() *T {
	switch e.open {
	case openNone:
	case openPacket: // commit's, without the call
		e.open = openNone
		if t := e.one; len(t.items) >= e.batch {
			e.full(t)
		}
	default:
		e.commit()
	}
	var zero T
	if t := e.one; t != nil && e.timeOf == nil && e.err == nil {
		if e.wmPend {
			e.placeWM()
		}
		if t.pend.buf == nil {
			t.pend.buf = t.pool.get()
			t.items = *t.pend.buf
		}
		n := len(t.items)
		if n < cap(t.items) {
			t.items = t.items[:n+1] // zero already (bufPool.put)
		} else {
			t.items = append(t.items, zero)
		}
		if c := cap(t.items); c > e.batch {
			t.items = t.items[: n+1 : max(e.batch, n+1)]
		}
		e.outN++
		e.open = openPacket
		return &t.items[n]
	}
	e.scratch = zero
	e.open = openScratch
	return &e.scratch
}

// open says where the element Next handed out lies, until commit.
type open uint8

const (
	openNone    open = iota
	openPacket       // in the pending packet of the only target
	openScratch      // in Emitter.scratch: to be emitted
)

// commit ends the element Next handed out: a full packet is sent, an
// element written aside is emitted.
func (e *Emitter[T]) commit() {
	switch e.open {
	case openPacket:
		e.open = openNone
		if t := e.one; len(t.items) >= e.batch {
			e.full(t)
		}
	case openScratch:
		e.open = openNone
		v := e.scratch
		var zero T
		e.scratch = zero
		e.Emit(v)
	}
}
