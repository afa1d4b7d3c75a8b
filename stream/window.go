package stream

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"
)

// Span is a window's event-time interval, Start ≤ t < End. A window whose
// end does not fit in an int64 has End math.MaxInt64 and closes only when
// the stage drains.
type Span struct{ Start, End int64 }

// WindowSpec declares a keyed event-time window stage: tumbling windows of
// Size (Slide 0 or equal to Size) or sliding windows of Size every Slide.
// Each element is folded with Add into the window(s) of its key that hold
// its time; a window closes — Result is emitted — when the stage's
// watermark reaches its end. An element whose every window has closed is
// late: it goes to the side output, counted, instead.
type WindowSpec[T any, K comparable, A, R any] struct {
	Size, Slide int64
	// Time is an element's event time (the one its source declared).
	Time func(T) int64
	// Key is an element's key (nil: one key for every element).
	Key func(T) K
	// Add folds v into the window's accumulator (zero for a new window).
	Add func(acc *A, v T)
	// AddBatch, when set, folds a packet's elements in one call instead of
	// a call of Add per element, for tumbling windows: accs[i] is the
	// accumulator vs[i] goes to, nil for an element the stage put elsewhere
	// (skipped or late). It must fold each vs[i] with a non-nil accs[i] as
	// Add would, in order (an accumulator may appear many times). The stage
	// finds every element's window first and calls AddBatch once at the end
	// of each input packet, and before a watermark closes windows, so the
	// loop over the elements is the caller's own. Add is still required:
	// sliding windows use it (an element goes to several windows), and so
	// does an element handled on its own (after a failed send). A panic in
	// AddBatch is a failure of the stage (ErrPanic, reported like a panic
	// of Flush) or of the element being handled; its elements count as
	// handled.
	AddBatch func(accs []*A, vs []T)
	// Result turns a closed window into the stage's output. acc is the
	// window's own only during the call (the stage reuses it).
	Result func(key K, w Span, acc *A) R
	// Order orders the keys of windows that close together, which are
	// emitted by start, then key (nil: in no particular order of keys).
	Order func(a, b K) int
	// Skip, when set, sends the elements it is true for to the side output
	// (Late.Skipped) without windowing them, in order with the late ones.
	Skip func(T) bool
	// Slot, when set, is a hint: a small index of an element's key (an
	// interned id, 0 ≤ Slot < MaxWindowSlot), the same for every element
	// of a key. The stage then finds a key's windows by indexing rather
	// than hashing the key. Two keys may share a slot (it is checked
	// against the key), at the cost of the hashing.
	Slot func(T) int
	// Locate, when set, stands for Time, Key, Slot and Skip in one call
	// by reference — the cheaper way where elements are large or many:
	// an element's event time, key, slot (< 0: none) and whether to skip
	// it. Time, Key, Slot and Skip are then not called (Time may be nil).
	Locate func(v *T) (ts int64, key K, slot int, skip bool)
}

// MaxWindowSlot bounds WindowSpec.Slot: an element whose slot is out of
// range is windowed by its key alone.
const MaxWindowSlot = 1 << 16

// Late is an element of a window stage's side output: one that arrived
// after every window it belongs to had closed (or that Skip passed by).
type Late[T any] struct {
	Value     T
	Watermark int64 // the stage's watermark when it arrived
	Skipped   bool  // passed by WindowSpec.Skip, not late
}

// validate checks the spec.
func (s *WindowSpec[T, K, A, R]) validate() error {
	switch {
	case s.Size < 1:
		return fmt.Errorf("window size %d, want at least 1", s.Size)
	case s.Slide < 0 || s.Slide > s.Size:
		return fmt.Errorf("window slide %d, want 0 (tumbling) up to the size %d", s.Slide, s.Size)
	case (s.Time == nil && s.Locate == nil) || s.Add == nil || s.Result == nil:
		return fmt.Errorf("a window needs Time (or Locate), Add and Result")
	}
	return nil
}

// Window declares a window stage and its side output of late elements.
// Feed it through KeyBy(spec.Key) when it has several instances, so that
// each key's windows live in one instance.
func Window[T any, K comparable, A, R any](g *Graph, name string, spec WindowSpec[T, K, A, R], opts ...StageOption) (*Stage[T, R], *Side[Late[T]]) {
	var late *Side[Late[T]]
	newFuncs := func() Funcs[T, R] {
		w := &windower[T, K, A, R]{spec: spec, open: make(map[K]*keyWindows[K, A]), late: late}
		if w.spec.Slide == 0 {
			w.spec.Slide = w.spec.Size
		}
		w.tumbling = w.spec.Slide == w.spec.Size
		f := Funcs[T, R]{Element: w.element, Watermark: w.watermark, watermarkFrom: w.nextEnd, elementRef: w.elementRef, run: w.run}
		if w.tumbling && w.spec.AddBatch != nil {
			f.run, f.endItems = w.runBatch, w.endItems
		}
		return f
	}
	if err := spec.validate(); err != nil {
		g.mu.Lock()
		g.fail(fmt.Errorf("%w: window %q: %w", ErrInvalidGraph, name, err))
		g.mu.Unlock()
		newFuncs = nil
	}
	st := NewStage(g, name, newFuncs, opts...)
	late = NewSide[Late[T]](st)
	return st, late
}

// keyWindows are one key's open windows, in no particular order (a few:
// Size/Slide at most, more only while the watermark lags).
type keyWindows[K comparable, A any] struct {
	key  K
	slot int // its index in windower.slots, or -1
	wins []*window[K, A]
	cur  *window[K, A] // the open window the key's last element went to (tumbling windows only)
}

// find is the open window that starts at start, or nil.
func (kw *keyWindows[K, A]) find(start int64) *window[K, A] {
	for _, w := range kw.wins {
		if w.span.Start == start {
			return w
		}
	}
	return nil
}

// remove drops w from the open windows and reports whether none is left.
func (kw *keyWindows[K, A]) remove(w *window[K, A]) bool {
	for i, x := range kw.wins {
		if x == w {
			last := len(kw.wins) - 1
			kw.wins[i] = kw.wins[last]
			kw.wins[last] = nil
			kw.wins = kw.wins[:last]
			break
		}
	}
	if kw.cur == w {
		kw.cur = nil
	}
	return len(kw.wins) == 0
}

// slotCur is the current window (keyWindows.cur) of the key in a slot
// (WindowSpec.Slot), flat: the check of an element against its key's
// current window reads one entry rather than the key's windows and then
// the window. An entry without a window (or with one whose end does not
// fit) has end math.MinInt64 and matches no element.
type slotCur[K comparable, A any] struct {
	key        K
	start, end int64
	acc        *A
}

// noCur is an entry of windower.curs without a window.
const noCur = math.MinInt64

type window[K comparable, A any] struct {
	key    K
	span   Span // End is math.MaxInt64 when the true end does not fit
	beyond bool // the true end does not fit in an int64
	acc    A
}

// windower is one window stage instance's state.
type windower[T any, K comparable, A, R any] struct {
	spec  WindowSpec[T, K, A, R]
	open  map[K]*keyWindows[K, A] // by key: one map lookup per element
	slots []*keyWindows[K, A]     // by WindowSpec.Slot, when set
	curs  []slotCur[K, A]         // their current windows, by slot (as long as slots)
	ends  winHeap[K, A]
	late  *Side[Late[T]]
	fired []*window[K, A]
	// closed windows and key entries, for reuse: as many as were ever
	// open at once at most
	freeWins []*window[K, A]
	freeKeys []*keyWindows[K, A]
	// tumbling: each time lies in one window, so an element that falls in
	// its key's current window goes there at once
	tumbling bool
	// runBatch's waiting elements (WindowSpec.AddBatch): pend[:npend], a
	// part of the packet being handled, and their accumulators (nil: none)
	pend  []T
	npend int
	accs  []*A
}

// nextEnd is the watermark at which the next window closes: below it the
// stage's Watermark function has nothing to do.
func (w *windower[T, K, A, R]) nextEnd() int64 {
	if len(w.ends) == 0 {
		return math.MaxInt64
	}
	return w.ends[0].span.End
}

// element folds v into its open windows, or sends it to the side output.
func (w *windower[T, K, A, R]) element(c *Context, v T, _ *Emitter[R]) error {
	return w.elementRef(c, &v)
}

// elementRef is element by reference, as the stage's loop calls it.
func (w *windower[T, K, A, R]) elementRef(c *Context, vp *T) error {
	w.flushAdds() // the elements before it first (AddBatch)
	ts, key, slot, skip := w.locate(vp)
	if skip {
		w.late.Emit(c, Late[T]{Value: *vp, Watermark: c.wm, Skipped: true})
		return nil
	}
	return w.fold(c, vp, ts, key, slot, nil)
}

// run is elementRef over a run of elements (Funcs.run): one call for the
// run, with what elementRef does per element that does not change within
// it hoisted out of the loop; the quiet watermarks between the elements
// are taken in the loop (runMarks), and it stops in front of one that is
// not (a window closes there). It stops after an element whose error is
// not nil or whose side output's send failed, and returns its index.
//
// The quiet marks wait in ms until an element leaves the fast path (see
// runMarks); wm, the watermark as the instance has it, may lag behind
// them meanwhile, which the fast path's check does not see: a quiet
// watermark is below the end of every open window.
func (w *windower[T, K, A, R]) run(c *Context, vs []T, ms *runMarks, at *int) (int, error) {
	defer ms.settle()
	lateErr := w.lateErr(c)
	wm := c.wm
	tumbling := w.tumbling
	add := w.spec.Add
	mark, from := ms.at(), w.nextEnd()
	for j := range vs {
		if j >= mark {
			if !ms.below(j, from) {
				return j, nil
			}
			mark = ms.at()
		}
		*at = j
		vp := &vs[j]
		ts, key, slot, skip := w.locate(vp)
		if skip {
			ms.settle()
			wm = c.wm
			w.late.Emit(c, Late[T]{Value: *vp, Watermark: wm, Skipped: true})
			if *lateErr != nil {
				return j, nil
			}
			continue
		}
		if tumbling {
			// As in fold: the key's current window, found by its slot.
			if uint(slot) < uint(len(w.curs)) {
				if e := &w.curs[slot]; e.key == key && ts >= e.start && ts < e.end && e.end > wm {
					add(e.acc, *vp)
					continue
				}
			}
		}
		ms.settle()
		if err := w.fold(c, vp, ts, key, slot, nil); err != nil || *lateErr != nil {
			return j, err
		}
		wm, from = c.wm, w.nextEnd()
	}
	return len(vs), nil
}

// runBatch is run for tumbling windows with WindowSpec.AddBatch: it finds
// each element's window (making the new ones) as run does and records its
// accumulator instead of calling Add. The elements wait, in the packet
// that holds them, until the end of the packet (Funcs.endItems), a window
// closes (watermark), or an element is handled on its own (elementRef):
// then one AddBatch call folds all of them (flushAdds). The runs of a
// packet are contiguous unless an element between them was handled apart,
// so most packets take one call however many watermarks lie between their
// elements. No window closes while elements wait, so every recorded
// accumulator is still its window's when they are folded, and each one
// gets its elements in order.
func (w *windower[T, K, A, R]) runBatch(c *Context, vs []T, ms *runMarks, at *int) (int, error) {
	if len(vs) == 0 {
		return 0, nil
	}
	n := w.npend
	if n > 0 && (n >= cap(w.pend) || &w.pend[:n+1][n] != &vs[0]) {
		*at = 0
		w.flushAdds() // not contiguous: an element between was handled apart
		n = 0
	}
	if n == 0 {
		w.pend = vs
	}
	need := n + len(vs)
	if cap(w.accs) < need {
		a := make([]*A, need, max(need, 2*cap(w.accs)))
		copy(a, w.accs[:n])
		w.accs = a
	}
	accs := w.accs[:need]
	defer ms.settle()
	lateErr := w.lateErr(c)
	wm := c.wm
	curs := w.curs
	mark, from := ms.at(), w.nextEnd()
	for j := range vs {
		if j >= mark {
			// The quiet marks in front of j (as in run): no window closes,
			// the elements before j go on waiting; a mark that closes one
			// ends the run.
			if !ms.below(j, from) {
				w.npend = n + j
				return j, nil
			}
			mark = ms.at()
		}
		*at = j
		w.npend = n + j // the elements before j wait (a panic below leaves them so)
		vp := &vs[j]
		ts, key, slot, skip := w.locate(vp)
		accs[n+j] = nil
		if skip {
			ms.settle()
			wm = c.wm
			w.late.Emit(c, Late[T]{Value: *vp, Watermark: wm, Skipped: true})
			if *lateErr != nil {
				w.npend = n + j + 1
				return j, nil
			}
			continue
		}
		// As in fold: the key's current window, found by its slot.
		if uint(slot) < uint(len(curs)) {
			if e := &curs[slot]; e.key == key && ts >= e.start && ts < e.end && e.end > wm {
				accs[n+j] = e.acc
				continue
			}
		}
		ms.settle()
		err := w.fold(c, vp, ts, key, slot, &accs[n+j])
		if err != nil || *lateErr != nil {
			w.npend = n + j + 1
			return j, err
		}
		wm, from = c.wm, w.nextEnd()
		curs = w.curs // (fold may have given a key a slot)
	}
	w.npend = need
	return len(vs), nil
}

// flushAdds folds the waiting elements (runBatch) with one AddBatch call.
func (w *windower[T, K, A, R]) flushAdds() {
	n := w.npend
	if n == 0 {
		return
	}
	w.npend = 0 // (a panic of AddBatch folds them no second time)
	w.spec.AddBatch(w.accs[:n], w.pend[:n])
}

// endItems is flushAdds at the end of a packet's elements, before the
// packet's array goes back to its pool.
func (w *windower[T, K, A, R]) endItems() error {
	w.flushAdds()
	return nil
}

// lateErr is where the failure of the side output's sends from c's
// instance is kept.
func (w *windower[T, K, A, R]) lateErr(c *Context) *error {
	return w.late.ems[c.instance].failure()
}

// locate is an element's event time, key, slot (-1: none) and whether the
// stage passes it by (WindowSpec.Skip).
func (w *windower[T, K, A, R]) locate(vp *T) (ts int64, key K, slot int, skip bool) {
	slot = -1
	if loc := w.spec.Locate; loc != nil {
		if ts, key, slot, skip = loc(vp); skip {
			return ts, key, slot, true
		}
		if slot < 0 || slot >= MaxWindowSlot {
			slot = -1
		}
		return ts, key, slot, false
	}
	if w.spec.Skip != nil && w.spec.Skip(*vp) {
		return 0, key, -1, true
	}
	ts = w.spec.Time(*vp)
	if w.spec.Key != nil {
		key = w.spec.Key(*vp)
	}
	if w.spec.Slot != nil {
		if slot = w.spec.Slot(*vp); slot < 0 || slot >= MaxWindowSlot {
			slot = -1
		}
	}
	return ts, key, slot, false
}

// fold folds *vp, of event time ts and key key (in slot slot), into its
// open windows, or sends it to the side output when they have all closed.
// With into set (tumbling windows only: one window an element) it sets
// *into to the window's accumulator instead of calling Add.
func (w *windower[T, K, A, R]) fold(c *Context, vp *T, ts int64, key K, slot int, into **A) error {
	kw := w.lookup(key, slot)
	if w.tumbling {
		// The key's current window, when v falls in it and it is still
		// open: what the loop below would find, without the search.
		if kw != nil {
			if cur := kw.cur; cur != nil && ts >= cur.span.Start && ts < cur.span.End && cur.span.End > c.wm && !cur.beyond {
				if into != nil {
					*into = &cur.acc
					return nil
				}
				w.spec.Add(&cur.acc, *vp)
				return nil
			}
		}
	}
	v := *vp
	size, slide := w.spec.Size, w.spec.Slide
	last, ok := floorTo(ts, slide)
	if !ok {
		return fmt.Errorf("event time %d: window start out of range", ts)
	}
	added := false
	for s := last; ; s -= slide {
		if uint64(ts)-uint64(s) >= uint64(size) { // ts - s, which may not fit in an int64
			break
		}
		end := satAdd(s, size)
		beyond := s > math.MaxInt64-size        // the true end does not fit: only the final watermark closes it
		if end > c.wm || (beyond && !c.final) { // still open
			if kw == nil {
				kw = w.add(key, slot)
			}
			win := kw.find(s)
			if win == nil {
				win = w.newWindow()
				win.key, win.span, win.beyond = key, Span{Start: s, End: end}, beyond
				kw.wins = append(kw.wins, win)
				heap.Push(&w.ends, win)
			}
			if into != nil {
				*into = &win.acc
			} else {
				w.spec.Add(&win.acc, v)
			}
			w.setCur(kw, win)
			added = true
		}
		if s < math.MinInt64+slide {
			break
		}
	}
	if !added {
		c.stats.late.Add(1)
		w.late.Emit(c, Late[T]{Value: v, Watermark: c.wm})
	}
	return nil
}

// lookup is key's open windows (nil when none), found through its slot
// when it has one.
func (w *windower[T, K, A, R]) lookup(key K, slot int) *keyWindows[K, A] {
	if slot >= 0 && slot < len(w.slots) {
		if kw := w.slots[slot]; kw != nil && kw.key == key {
			return kw
		}
	}
	kw := w.open[key]
	if kw != nil && slot >= 0 && kw.slot < 0 {
		w.place(kw, slot)
	}
	return kw
}

// add makes key's (empty) open windows.
func (w *windower[T, K, A, R]) add(key K, slot int) *keyWindows[K, A] {
	var kw *keyWindows[K, A]
	if n := len(w.freeKeys); n > 0 {
		kw, w.freeKeys = w.freeKeys[n-1], w.freeKeys[:n-1]
		kw.key, kw.slot = key, -1
	} else {
		kw = &keyWindows[K, A]{key: key, slot: -1}
	}
	w.open[key] = kw
	if slot >= 0 {
		w.place(kw, slot)
	}
	return kw
}

// place puts kw in slot, unless another key holds it.
func (w *windower[T, K, A, R]) place(kw *keyWindows[K, A], slot int) {
	if slot >= len(w.slots) {
		w.slots = append(w.slots, make([]*keyWindows[K, A], slot+1-len(w.slots))...)
		for len(w.curs) < len(w.slots) {
			w.curs = append(w.curs, slotCur[K, A]{end: noCur})
		}
	}
	if w.slots[slot] == nil {
		w.slots[slot] = kw
		kw.slot = slot
		w.setCur(kw, kw.cur)
	}
}

// setCur makes win kw's current window (nil: none), in its slot's entry
// too.
func (w *windower[T, K, A, R]) setCur(kw *keyWindows[K, A], win *window[K, A]) {
	kw.cur = win
	if kw.slot < 0 {
		return
	}
	if win == nil || win.beyond {
		w.curs[kw.slot] = slotCur[K, A]{end: noCur}
		return
	}
	w.curs[kw.slot] = slotCur[K, A]{key: kw.key, start: win.span.Start, end: win.span.End, acc: &win.acc}
}

// watermark closes the windows whose end the watermark has reached, and
// emits them by start, then key.
func (w *windower[T, K, A, R]) watermark(c *Context, wm int64, out *Emitter[R]) error {
	w.flushAdds() // the waiting elements go into their windows before any closes (AddBatch)
	w.fired = w.fired[:0]
	for len(w.ends) > 0 && w.ends[0].span.End <= wm && (!w.ends[0].beyond || c.final) {
		win := heap.Pop(&w.ends).(*window[K, A])
		kw := w.open[win.key]
		if kw != nil && kw.cur == win {
			w.setCur(kw, nil)
		}
		if kw != nil && kw.remove(win) {
			delete(w.open, win.key)
			if kw.slot >= 0 && w.slots[kw.slot] == kw {
				w.slots[kw.slot] = nil
				w.curs[kw.slot] = slotCur[K, A]{end: noCur}
			}
			var zero K
			kw.key, kw.cur, kw.wins = zero, nil, kw.wins[:0]
			w.freeKeys = append(w.freeKeys, kw)
		}
		w.fired = append(w.fired, win)
	}
	if len(w.fired) == 0 {
		return nil
	}
	slices.SortFunc(w.fired, func(a, b *window[K, A]) int {
		if c := cmp.Compare(a.span.Start, b.span.Start); c != 0 || w.spec.Order == nil {
			return c
		}
		return w.spec.Order(a.key, b.key)
	})
	for i, win := range w.fired {
		out.Emit(w.spec.Result(win.key, win.span, &win.acc))
		w.fired[i] = nil
		*win = window[K, A]{}
		w.freeWins = append(w.freeWins, win)
	}
	return nil
}

// newWindow takes an empty window from the free list, or allocates one.
func (w *windower[T, K, A, R]) newWindow() *window[K, A] {
	if n := len(w.freeWins); n > 0 {
		win := w.freeWins[n-1]
		w.freeWins = w.freeWins[:n-1]
		return win
	}
	return new(window[K, A])
}

// floorTo is floor(ts/step)·step, and false when it does not fit in an int64.
func floorTo(ts, step int64) (int64, bool) {
	q := ts / step
	if ts%step < 0 {
		q--
	}
	if q < math.MinInt64/step {
		return 0, false
	}
	return q * step, true
}

// satAdd is a+b (b ≥ 0), saturating at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// winHeap is a min-heap of open windows by end.
type winHeap[K comparable, A any] []*window[K, A]

func (h winHeap[K, A]) Len() int           { return len(h) }
func (h winHeap[K, A]) Less(i, j int) bool { return h[i].span.End < h[j].span.End }
func (h winHeap[K, A]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *winHeap[K, A]) Push(x any)        { *h = append(*h, x.(*window[K, A])) }
func (h *winHeap[K, A]) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}
