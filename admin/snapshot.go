package admin

import (
	"sort"
	"time"

	"github.com/ringactor/ringactor/telemetry"
)

// Snapshot is the JSON document /kernels serves: the time it was taken and
// every kernel, sorted by name.
type Snapshot struct {
	// Time is when the counters were read; a reader computes rates from
	// two snapshots' Processed and Time.
	Time    time.Time `json:"time"`
	Kernels []Kernel  `json:"kernels"`
}

// Kernel is one ring kernel in a Snapshot.
type Kernel struct {
	Name string `json:"name"`
	// Kind is what the kernel is: KindStream (a stream stage instance),
	// the cluster kind of an activation, or KindKernel.
	Kind      string `json:"kind"`
	State     string `json:"state"`
	Placement string `json:"placement"`

	Processed uint64 `json:"processed"`
	Errors    uint64 `json:"errors"`
	Dropped   uint64 `json:"dropped"`
	Restarts  uint64 `json:"restarts"`
	Depth     int64  `json:"depth"`
	Capacity  int    `json:"capacity"`

	// Latency is admission → end of handling, Queue admission → handler
	// start, Handler the handler and its reply's hand-off.
	Latency Percentiles `json:"latency"`
	Queue   Percentiles `json:"queue_delay"`
	Handler Percentiles `json:"handler"`

	LastActivity time.Time `json:"last_activity,omitzero"`
}

// Percentiles summarise one latency histogram, in nanoseconds.
type Percentiles struct {
	Count uint64 `json:"count"`
	P50   int64  `json:"p50_ns"`
	P90   int64  `json:"p90_ns"`
	P99   int64  `json:"p99_ns"`
	Mean  int64  `json:"mean_ns"`
}

// NewSnapshot builds the Snapshot of stats taken at now.
func NewSnapshot(now time.Time, stats []telemetry.KernelStats) Snapshot {
	s := Snapshot{Time: now, Kernels: make([]Kernel, 0, len(stats))}
	for _, k := range stats {
		s.Kernels = append(s.Kernels, Kernel{
			Name: k.Kernel, Kind: KindKernel, State: k.State, Placement: k.Backend,
			Processed: k.Processed, Errors: k.Errors, Dropped: k.Dropped, Restarts: k.Restarts,
			Depth: k.Depth, Capacity: k.Capacity,
			Latency: percentiles(k.Latency), Queue: percentiles(k.QueueDelay), Handler: percentiles(k.HandlerTime),
			LastActivity: k.LastActivity,
		})
	}
	sort.Slice(s.Kernels, func(i, j int) bool { return s.Kernels[i].Name < s.Kernels[j].Name })
	return s
}

// percentiles summarises h.
func percentiles(h telemetry.HistogramSnapshot) Percentiles {
	return Percentiles{Count: h.Count, P50: int64(h.Quantile(0.5)), P90: int64(h.Quantile(0.9)), P99: int64(h.Quantile(0.99)), Mean: int64(h.Mean())}
}
