package stream

import (
	"math"
	"sync/atomic"
	"time"
)

// instStats are one instance's counters, written by its loop (and by the
// senders and reply callbacks of its input), read by Stats and telemetry.
type instStats struct {
	in     atomic.Uint64 // elements admitted into its ring
	done   atomic.Uint64 // elements handled
	failed atomic.Uint64 // elements whose outcome is an error
	out    atomic.Uint64 // elements emitted
	late   atomic.Uint64 // elements a window stage found late
	wm     atomic.Int64  // its watermark
}

// StageStats are one stage instance's counters. Every element admitted gets
// one outcome: once the graph has drained, In = Done + Failed.
type StageStats struct {
	Stage    string
	Instance int
	In       uint64 // elements admitted into the instance's ring
	Done     uint64 // elements handled
	Failed   uint64 // elements whose outcome is an error
	Out      uint64 // elements emitted (sources: sent), side outputs included
	Late     uint64 // a window stage: elements that came after all their windows had closed
	Depth    int64  // packets queued in its ring kernel
	// Watermark is the instance's event-time watermark (math.MinInt64:
	// none yet); WatermarkLag is how far it is behind the wall clock, in
	// milliseconds, when event time is Unix milliseconds (0 without one).
	Watermark    int64
	WatermarkLag int64
	// Chained: the instance runs on its upstream's loop (operator
	// chaining), so it has no ring of its own and Depth is 0.
	Chained bool
}

// Stats returns every stage instance's counters, in declaration order.
func (g *Graph) Stats() []StageStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	nodes := g.nodes
	var out []StageStats
	now := time.Now().UnixMilli()
	for _, n := range nodes {
		for i, st := range n.stats {
			s := StageStats{Stage: n.name, Instance: i, In: st.in.Load(), Done: st.done.Load(), Failed: st.failed.Load(),
				Out: st.out.Load(), Late: st.late.Load(), Watermark: st.wm.Load(), Chained: n.chained}
			if s.Watermark != math.MinInt64 && s.Watermark != math.MaxInt64 {
				s.WatermarkLag = now - s.Watermark
			}
			if n.depth != nil {
				s.Depth = n.depth(i)
			}
			out = append(out, s)
		}
	}
	return out
}
