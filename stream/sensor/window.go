package sensor

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/ringactor/ringactor/actors"
)

// agg is the running aggregate of one (sensor, window).
type agg struct {
	start    int64
	count    int64
	min, max float64
	sum      float64 // the values' sum in input order
	scaled   float64 // the sum of value·2⁻⁶⁴, which cannot overflow
	sensor   uint32
}

// winKey identifies a window.
type winKey struct {
	sensor uint32
	start  int64
}

// sensorState is the window stage's per-sensor cache: the window of its
// previous row, which most rows fall into again.
type sensorState struct {
	cur      *agg
	curStart int64
}

// windower is the window stage's state.
type windower struct {
	w         int64
	lateness  int64
	streaming bool
	pools     *pools

	names   []string // sensor names by id
	sensors []sensorState
	open    map[winKey]*agg
	heap    []*agg // streaming: open windows, min-heap on start
	free    []*agg

	hasMax  bool
	maxTS   int64 // watermark: newest accepted timestamp
	closeOK bool  // some window start can be closed: closeAt is valid
	closeAt int64 // windows starting at or before this have closed
	late    int64
	stats   Stats
}

// newWindowHandler is the window kernel's factory: each (re)start begins
// with no windows.
func newWindowHandler(cfg Config, p *pools) func() actors.Handler[*Batch, *Emit] {
	return func() actors.Handler[*Batch, *Emit] {
		w := &windower{w: cfg.WindowMS, lateness: cfg.LatenessMS, streaming: cfg.Streaming, pools: p,
			open: make(map[winKey]*agg)}
		return w.handle
	}
}

// handle folds a batch of rows into the windows, and emits the windows that
// have closed (all of them at the end of input) with the batch's rejects.
func (w *windower) handle(_ context.Context, b *Batch) (*Emit, error) {
	for _, name := range b.NewNames {
		w.names = append(w.names, name)
		w.sensors = append(w.sensors, sensorState{})
	}
	e := &Emit{Final: b.Final}
	var late []Reject
	for i := range b.Rows {
		r := &b.Rows[i]
		start, _ := windowStart(r.TS, w.w) // parse rejected the rows where it does not fit
		if w.closeOK && start <= w.closeAt {
			late = append(late, Reject{Line: r.Line, Reason: w.lateReason(r, start)})
			continue
		}
		w.add(r, start)
		if !w.hasMax || r.TS > w.maxTS {
			w.hasMax, w.maxTS = true, r.TS
			if w.streaming {
				w.closeAt, w.closeOK = closeThreshold(w.maxTS, w.lateness, w.w)
			}
		}
	}
	w.late += int64(len(late))
	e.Rejects = mergeRejects(b.Rejects, late)
	switch {
	case b.Final:
		e.Windows = w.flushAll()
	case w.streaming && w.closeOK:
		e.Windows = w.flushClosed()
	}
	w.stats = b.Stats
	w.stats.Rejected += w.late
	w.stats.Late = w.late
	e.Stats = w.stats
	w.pools.putBatch(b)
	return e, nil
}

// add folds row r into its window, which starts at start.
func (w *windower) add(r *Row, start int64) {
	st := &w.sensors[r.Sensor]
	a := st.cur
	if a == nil || st.curStart != start {
		k := winKey{sensor: r.Sensor, start: start}
		a = w.open[k]
		if a == nil {
			a = w.newAgg(r.Sensor, start)
			w.open[k] = a
			if w.streaming {
				w.push(a)
			}
		}
		st.cur, st.curStart = a, start
	}
	v := r.V
	if a.count == 0 {
		a.min, a.max = v, v
	} else {
		a.min, a.max = min(a.min, v), max(a.max, v) // -0 < +0, as for the builtins
	}
	a.count++
	a.sum += v
	a.scaled += v * meanScale
}

// add folds the value v into a (the stream graph's window; the channel
// pipeline's windower does the same inline).
func (a *agg) add(v float64) {
	if a.count == 0 {
		a.min, a.max = v, v
	} else {
		a.min, a.max = min(a.min, v), max(a.max, v) // -0 < +0, as for the builtins
	}
	a.count++
	a.sum += v
	a.scaled += v * meanScale
}

// meanScale scales the values of a window's second sum: 2⁻⁶⁴, so that the
// sum of up to 2⁶³ finite values stays below 2¹⁰²³.
const meanScale = 0x1p-64

// mean is the window's mean: sum/count, the float64 sum of the values in
// input order divided by the count, as long as that sum is finite. When it
// overflows although every value is finite, the mean is the sum of
// value·2⁻⁶⁴ in input order, divided by the count, times 2⁶⁴, kept within
// [min, max]; an infinite value still makes the mean ±Inf or NaN.
func (a *agg) mean() float64 {
	n := float64(a.count)
	if !math.IsInf(a.sum, 0) && !math.IsNaN(a.sum) {
		return a.sum / n
	}
	m := a.scaled / n / meanScale
	if math.IsInf(a.min, 0) || math.IsInf(a.max, 0) || math.IsNaN(m) {
		return m
	}
	return min(max(m, a.min), a.max)
}

// lateReason says why row r, whose window starts at start, is late.
func (w *windower) lateReason(r *Row, start int64) string {
	return fmt.Sprintf("late event for window %d of sensor %s: newest timestamp %d ≥ window end %d + lateness %d",
		start, quote(w.names[r.Sensor]), w.maxTS, start+w.w, w.lateness)
}

// closeThreshold returns the largest window start whose window has closed
// when the watermark is maxTS: start + w + lateness ≤ maxTS. ok is false
// when no int64 start is that small.
func closeThreshold(maxTS, lateness, w int64) (start int64, ok bool) {
	if maxTS < math.MinInt64+lateness {
		return 0, false
	}
	t := maxTS - lateness
	if t < math.MinInt64+w {
		return 0, false
	}
	return t - w, true
}

// newAgg takes an empty aggregate from the free list, or allocates one.
func (w *windower) newAgg(sensor uint32, start int64) *agg {
	var a *agg
	if n := len(w.free); n > 0 {
		a, w.free = w.free[n-1], w.free[:n-1]
	} else {
		a = new(agg)
	}
	*a = agg{start: start, sensor: sensor}
	return a
}

// stat turns a into an output row and forgets it.
func (w *windower) stat(a *agg) WindowStat {
	s := WindowStat{Sensor: w.names[a.sensor], Start: a.start, Count: a.count, Min: a.min, Max: a.max,
		Mean: a.mean()}
	delete(w.open, winKey{sensor: a.sensor, start: a.start})
	if st := &w.sensors[a.sensor]; st.cur == a {
		st.cur = nil
	}
	w.free = append(w.free, a)
	return s
}

// flushClosed emits the open windows that have closed, ordered by start,
// then sensor name.
func (w *windower) flushClosed() []WindowStat {
	var out []WindowStat
	for len(w.heap) > 0 && w.heap[0].start <= w.closeAt {
		out = append(out, w.stat(w.pop()))
	}
	slices.SortFunc(out, byStartSensor)
	return out
}

// flushAll emits every open window: ordered by start, then sensor name in
// streaming mode, by sensor name, then start otherwise.
func (w *windower) flushAll() []WindowStat {
	out := make([]WindowStat, 0, len(w.open))
	for _, a := range w.open {
		out = append(out, w.stat(a))
	}
	w.heap = w.heap[:0]
	if w.streaming {
		slices.SortFunc(out, byStartSensor)
	} else {
		slices.SortFunc(out, bySensorStart)
	}
	return out
}

// bySensorStart orders windows by sensor name (byte order), then start.
func bySensorStart(a, b WindowStat) int {
	if c := cmp.Compare(a.Sensor, b.Sensor); c != 0 {
		return c
	}
	return cmp.Compare(a.Start, b.Start)
}

// byStartSensor orders windows by start, then sensor name (byte order).
func byStartSensor(a, b WindowStat) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	return cmp.Compare(a.Sensor, b.Sensor)
}

// mergeRejects merges two lists of rejects in line order into a new slice
// (nil when both are empty); neither input is kept.
func mergeRejects(a, b []Reject) []Reject {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make([]Reject, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Line <= b[0].Line {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// push adds a to the open-window heap.
func (w *windower) push(a *agg) {
	w.heap = append(w.heap, a)
	w.up(len(w.heap) - 1)
}

// pop removes and returns the open window with the smallest start.
func (w *windower) pop() *agg {
	h := w.heap
	top := h[0]
	last := len(h) - 1
	h[0], h[last] = h[last], nil
	w.heap = h[:last]
	if last > 0 {
		w.down(0)
	}
	return top
}

// up restores the heap order from index i towards the root.
func (w *windower) up(i int) {
	h := w.heap
	for i > 0 {
		p := (i - 1) / 2
		if h[p].start <= h[i].start {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

// down restores the heap order from index i towards the leaves.
func (w *windower) down(i int) {
	h := w.heap
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].start < h[l].start {
			m = r
		}
		if h[i].start <= h[m].start {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
