package stream

import "math"

// runMarks are the watermarks of the packet being handled as a run
// function (Funcs.run) sees them: it takes the quiet ones itself, between
// its elements, instead of ending the run at each. A mark is quiet when
// applying it is all it takes: the instance has one input and the stage's
// Watermark has nothing to do at it (below Funcs.watermarkFrom: no window
// closes). A run stops before an element with a mark in front of it that
// is not quiet; the instance applies that mark as usual and starts a new
// run. So a packet whose marks close no window is one run, however many
// marks lie between its elements, and the watermarks take effect between
// the same elements as when each mark ends a run.
type runMarks struct {
	marks []mark // the packet's
	next  int    // the first mark not yet applied (an index in marks)
	base  int    // the packet index of the run's first element
	from  int32  // the packet's sender
	quiet func(from int32, wm int64) bool
}

// at is the index in the run of the element that the next mark comes
// before (math.MaxInt when none does).
func (m *runMarks) at() int {
	if m.next < len(m.marks) {
		return int(m.marks[m.next].pos) - m.base
	}
	return math.MaxInt
}

// take applies the marks in front of the run's element j when they are
// all quiet, and reports whether it did; it stops at the first one that is
// not (the run then stops before j).
func (m *runMarks) take(j int) bool {
	for m.next < len(m.marks) && int(m.marks[m.next].pos)-m.base <= j {
		if !m.quiet(m.from, m.marks[m.next].wm) {
			return false
		}
		m.next++
	}
	return true
}

// quietWM applies sender from's watermark wm when it is quiet (see
// runMarks), as senderWM would, and reports whether it did; when it does
// not, nothing has changed.
func (in *instance[In, Out]) quietWM(from int32, wm int64) bool {
	if from != 0 || len(in.inWM) != 1 || in.ended[0] || in.c.final || in.c.wm != in.inWM[0] {
		return false
	}
	if wm <= in.inWM[0] {
		return true // senderWM ignores it
	}
	if in.f.Watermark != nil && (in.f.watermarkFrom == nil || wm >= in.f.watermarkFrom()) {
		return false
	}
	// advance's work for one input, without a Watermark call
	in.inWM[0], in.c.wm = wm, wm
	if in.s.timeOf == nil {
		in.out.advance(wm)
	}
	for _, x := range in.extra {
		x.advance(wm)
	}
	return true
}
