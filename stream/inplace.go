package stream

import (
	"fmt"
	"math"
	"runtime/debug"
)

// MapInPlace declares a stateless stage that changes elements where they
// lie, a packet at a time: fn gets the elements of one input packet (a run
// of up to WithBatch of them, in order) and transforms them in place; they
// then go downstream, one output per input, in the same order, with the
// input's watermarks between the same elements (or, with EventTime on the
// stage, its own).
//
// It is Map without a function call and a copy per element: where the
// stage's output leads to one instance (one edge, to a stage of
// parallelism 1) the packet itself is passed on — its array travels on,
// nothing is copied. With several targets (Broadcast, KeyBy, fan-out) the
// elements are emitted one by one after fn, as Map would.
//
// fn's error, or its panic (ErrPanic), is the outcome of every element of
// the run it was given: none of them goes downstream, and each is counted
// failed. fn must not keep vs: its array belongs to the graph once fn
// returns.
func MapInPlace[T any](g *Graph, name string, fn func(vs []T) error, opts ...StageOption) *Stage[T, T] {
	var f func() Funcs[T, T]
	if fn != nil {
		f = func() Funcs[T, T] {
			var one [1]T
			return Funcs[T, T]{Element: func(_ *Context, v T, out *Emitter[T]) error {
				// An element on its own (a run of one): the packet path
				// handles the others.
				one[0] = v
				err := fn(one[:])
				if err == nil {
					out.Emit(one[0])
				}
				clear(one[:])
				return err
			}}
		}
	}
	s := NewStage(g, name, f, opts...)
	if fn != nil {
		s.inPlace = func(in *instance[T, T], p packet[T]) (bool, bool) { return in.packetInPlace(fn, p) }
	}
	return s
}

// packetInPlace handles packet p of a MapInPlace stage as a whole when its
// output can take the packet over (one target, nothing pending for it, p
// in a pooled array), and reports whether it did (handled), and whether
// p's array went on downstream (took); when it did not, nothing has
// happened and the packet goes element by element.
func (in *instance[In, Out]) packetInPlace(fn func([]In) error, p packet[In]) (handled, took bool) {
	e, ok := any(in.out).(*Emitter[In])
	if !ok {
		return false, false
	}
	t := e.one
	n := len(p.items)
	if t == nil || e.open != openNone || t.pend.buf != nil || p.buf == nil || n == 0 || n > e.batch || e.err != nil {
		return false, false
	}
	var pv any
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				pv = r
				err = fmt.Errorf("%w: %v\n%s", ErrPanic, r, debug.Stack())
			}
		}()
		return fn(p.items)
	}()
	if err != nil {
		// Every element of the run fails; the watermarks still advance.
		for _, m := range p.marks {
			in.senderWM(p.from, m.wm)
		}
		in.stats.failed.Add(uint64(n))
		in.report(n, pv, err)
		return true, false
	}
	// The output takes the array over: the elements are already in it, the
	// pending packet grows over them one watermark at a time.
	t.pend.buf = p.buf
	items := p.items
	t.items = items[:0]
	mi := 0
	if len(p.marks) == 0 && e.timeOf != nil {
		// The common case of event time assigned here (no watermark came
		// with the packet): one loop, the watermark kept in locals.
		e.eventTimes(t, items)
	} else {
		for i := range items {
			for mi < len(p.marks) && int(p.marks[mi].pos) <= i {
				in.senderWM(p.from, p.marks[mi].wm)
				mi++
			}
			if e.wmPend {
				t.items = items[:i]
				e.placeWM()
			}
			if e.timeOf != nil {
				ts := e.timeOf(items[i])
				if ts >= math.MinInt64+e.lateness && ts-e.lateness > e.wm {
					e.advance(ts - e.lateness)
				}
			}
		}
	}
	t.items = items
	e.outN += uint64(n)
	for ; mi < len(p.marks); mi++ {
		in.senderWM(p.from, p.marks[mi].wm)
	}
	done := uint64(n)
	if len(t.items) >= e.batch {
		e.full(t)
	}
	if err := e.take(); err != nil {
		// The send the last element completed failed: its outcome, as
		// Emit's would be.
		done--
		in.failed(nil, err)
	}
	in.stats.done.Add(done)
	return true, true
}

// eventTimes is, for the elements items that the pending packet of t (e's
// only target) has just taken over, what Emit does per element for event
// time: a watermark that advanced before an element is marked in front of
// it, the last one stays pending (wmPend) as after Emit. The watermark is
// kept in locals and marked in t's packet directly (placeWM's work for one
// target).
func (e *Emitter[T]) eventTimes(t *target[T], items []T) {
	timeOf, lateness, wm, pend := e.timeOf, e.lateness, e.wm, e.wmPend
	lo := math.MinInt64 + lateness
	marks := t.pend.marks
	var ts []int64
	if e.timesOf != nil {
		if cap(e.times) < len(items) {
			e.times = make([]int64, len(items))
		}
		ts = e.times[:len(items)]
		e.timesOf(items, ts)
	}
	for i := range items {
		if pend {
			pend = false
			pos := int32(i)
			if n := len(marks); n > 0 && marks[n-1].pos == pos {
				marks[n-1].wm = wm
			} else {
				marks = append(marks, mark{pos: pos, wm: wm})
			}
		}
		var at int64
		if ts != nil {
			at = ts[i]
		} else {
			at = timeOf(items[i])
		}
		if at >= lo && at-lateness > wm {
			wm, pend = at-lateness, true
		}
	}
	t.pend.marks = marks
	e.wm, e.wmPend = wm, pend
}
