package stream

import "math"

// runMarks are the watermarks of the packet being handled as a run
// function (Funcs.run) sees them: it takes the quiet ones itself, between
// its elements, instead of ending the run at each. A mark is quiet when
// the instance has one input and the mark's watermark is below the
// stage's Watermark threshold (Funcs.watermarkFrom: no window closes at
// it). A run stops before an element with a mark in front of it that is
// not quiet; the instance applies that mark as usual and starts a new run.
// So a packet whose marks close no window is one run, however many marks
// lie between its elements.
//
// The run takes quiet marks lazily (below): the newest waits in pend, and
// settle applies it to the instance — its watermark, its outputs' pending
// marks — before anything that reads them: an element that leaves the
// run's fast path (a new window, a late or skipped element), the end of
// the run, a panic. Between two such points nothing reads the watermark
// but the fast path's check against a window that is open, and a quiet
// watermark is below the end of every open window, so the elements see
// what they would see with each mark applied in front of them, and the
// outputs get the same marks (consecutive advances with no element
// between them are one mark on an output either way).
type runMarks struct {
	marks []mark // the packet's
	next  int    // the first mark not yet taken (an index in marks)
	base  int    // the packet index of the run's first element
	from  int32  // the packet's sender
	one   bool   // the instance has one input, which has not ended: marks can be quiet
	pend  int64  // the newest quiet watermark taken and not yet applied (math.MinInt64: none)
	apply func(from int32, wm int64)
}

// at is the index in the run of the element that the next mark comes
// before (math.MaxInt when none does).
func (m *runMarks) at() int {
	if m.next < len(m.marks) {
		return int(m.marks[m.next].pos) - m.base
	}
	return math.MaxInt
}

// below takes the marks in front of the run's element j when their
// watermarks are below from (the stage's threshold: they are quiet), and
// reports whether it took all of them; it stops at the first that is not
// quiet (the run then stops before j, after settle).
func (m *runMarks) below(j int, from int64) bool {
	for m.next < len(m.marks) && int(m.marks[m.next].pos)-m.base <= j {
		wm := m.marks[m.next].wm
		if !m.one || wm >= from {
			return false
		}
		m.pend = max(m.pend, wm)
		m.next++
	}
	return true
}

// settle applies the quiet watermark below took last, if any.
func (m *runMarks) settle() {
	if m.pend != math.MinInt64 {
		wm := m.pend
		m.pend = math.MinInt64
		m.apply(m.from, wm)
	}
}

// canQuiet reports whether sender from's marks can be quiet: the instance
// has that one input, it has not ended, and the stage has a Watermark
// threshold (Funcs.watermarkFrom).
func (in *instance[In, Out]) canQuiet(from int32) bool {
	return from == 0 && len(in.inWM) == 1 && !in.ended[0] && !in.c.final && in.c.wm == in.inWM[0] && in.f.watermarkFrom != nil
}

// quietWM applies sender from's watermark wm, quiet (below the stage's
// Watermark threshold, see runMarks), as senderWM would: the instance's
// watermark and its outputs', without a Watermark call.
func (in *instance[In, Out]) quietWM(from int32, wm int64) {
	if from != 0 || len(in.inWM) != 1 || wm <= in.inWM[0] {
		return // (senderWM ignores it)
	}
	in.inWM[0], in.c.wm = wm, wm
	if in.s.timeOf == nil {
		in.out.advance(wm)
	}
	for _, x := range in.extra {
		x.advance(wm)
	}
}
