package admin

import (
	"encoding/json"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/stream"
	"github.com/ringactor/ringactor/telemetry"
)

// Kinds of a Kernel besides a cluster kind's name.
const (
	KindKernel = "kernel" // a ring kernel of the runtime
	KindStream = "stream" // a stream graph's stage instance
)

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

// classify sets each kernel's Kind: a stream stage (its id starts with a
// listed graph's id) or an activation of a cluster kind (its id is
// kind/identity).
func (c *config) classify(ks []Kernel) {
	prefixes := map[string]string{}
	if c.graphs != nil {
		for _, g := range c.graphs() {
			prefixes[g.ID()] = KindStream
		}
	}
	if c.member != nil {
		if m := c.member(); m != nil {
			for _, ms := range m.Status().Members {
				if ms.Self {
					for _, k := range ms.Kinds {
						prefixes[k] = k
					}
				}
			}
		}
	}
	for i := range ks {
		if p, _, ok := strings.Cut(ks[i].Name, "/"); ok {
			if k, ok := prefixes[p]; ok {
				ks[i].Kind = k
			}
		}
	}
}

// Histogram is what /api/histogram serves: one kernel's log-linear
// histogram, its non-empty buckets only.
type Histogram struct {
	Kernel string `json:"kernel"`
	// Of is "latency", "queue_delay" or "handler".
	Of      string       `json:"of"`
	Count   uint64       `json:"count"`
	Buckets []Bucket     `json:"buckets"`
	Summary Percentiles  `json:"summary"`
	Start   time.Time    `json:"start,omitzero"`
	Time    time.Time    `json:"time"`
	Bounds  BucketBounds `json:"bounds"`
}

// Bucket is one bucket of a Histogram: Count durations in [Lo, Hi)
// nanoseconds (Hi 0: no upper bound).
type Bucket struct {
	Lo    int64  `json:"lo_ns"`
	Hi    int64  `json:"hi_ns"`
	Count uint64 `json:"count"`
}

// BucketBounds are the histogram layout's smallest and largest finite
// bounds, for drawing its whole range.
type BucketBounds struct {
	Min int64 `json:"min_ns"`
	Max int64 `json:"max_ns"`
}

// histogram serves /api/histogram?kernel=ID&of=latency|queue_delay|handler.
func (c *config) histogram(w http.ResponseWriter, r *http.Request) {
	id, of := r.URL.Query().Get("kernel"), r.URL.Query().Get("of")
	if of == "" {
		of = "latency"
	}
	st, ok := c.kernelStats(id)
	if !ok {
		http.Error(w, "no kernel "+id, http.StatusNotFound)
		return
	}
	var h telemetry.HistogramSnapshot
	switch of {
	case "latency":
		h = st.Latency
	case "queue_delay":
		h = st.QueueDelay
	case "handler":
		h = st.HandlerTime
	default:
		http.Error(w, "of: want latency, queue_delay or handler", http.StatusBadRequest)
		return
	}
	out := Histogram{Kernel: id, Of: of, Count: h.Count, Buckets: []Bucket{}, Summary: percentiles(h), Start: h.Start, Time: c.now(),
		Bounds: BucketBounds{Min: int64(telemetry.BucketUpper(0) * 1e9), Max: int64(telemetry.BucketLower(telemetry.HistogramBuckets-1) * 1e9)}}
	for i, n := range h.Counts {
		if n == 0 {
			continue
		}
		b := Bucket{Lo: int64(math.Round(telemetry.BucketLower(i) * 1e9)), Count: n}
		if hi := telemetry.BucketUpper(i); !math.IsInf(hi, 1) {
			b.Hi = int64(math.Round(hi * 1e9))
		}
		out.Buckets = append(out.Buckets, b)
	}
	writeJSON(w, out)
}

// Graph is one stream graph in /api/graphs: its topology, each stage
// instance's counters, and how full each edge's rings are.
type Graph struct {
	stream.Topology
	Stages []stream.StageStats `json:"stages"`
	// Fill is, per edge in Topology.Edges' order, the fullest ring of its
	// downstream node's instances: queued packets over Capacity (up to 2
	// with the overflow full), 0 for a chained one.
	Fill []float64 `json:"fill"`
}

// graphsJSON serves /api/graphs.
func (c *config) graphsJSON(w http.ResponseWriter, _ *http.Request) {
	out := []Graph{}
	if c.graphs != nil {
		for _, g := range c.graphs() {
			out = append(out, newGraph(g.Topology(), g.Stats()))
		}
	}
	writeJSON(w, map[string]any{"time": c.now(), "graphs": out})
}

// newGraph joins a graph's topology and stats.
func newGraph(t stream.Topology, stats []stream.StageStats) Graph {
	g := Graph{Topology: t, Stages: stats, Fill: make([]float64, len(t.Edges))}
	if g.Stages == nil {
		g.Stages = []stream.StageStats{}
	}
	fullest := map[string]float64{}
	for _, s := range stats {
		if t.Capacity > 0 {
			fullest[s.Stage] = max(fullest[s.Stage], float64(s.Depth)/float64(t.Capacity))
		}
	}
	for i, e := range t.Edges {
		g.Fill[i] = fullest[e.To]
	}
	return g
}

// clusterJSON serves /api/cluster: the member's Status, or
// {"member": false} without one.
func (c *config) clusterJSON(w http.ResponseWriter, _ *http.Request) {
	var m *cluster.Member
	if c.member != nil {
		m = c.member()
	}
	if m == nil {
		writeJSON(w, map[string]any{"member": false})
		return
	}
	writeJSON(w, struct {
		Member bool `json:"member"`
		cluster.Status
	}{true, m.Status()})
}

// Device is one compute backend in /api/devices, with the kernels placed
// on it.
type Device struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Available is false when the backend cannot run kernels; Reason
	// says why.
	Available bool     `json:"available"`
	Reason    string   `json:"reason,omitempty"`
	Kernels   []string `json:"kernels"`
	// Processed, Errors, Restarts and Dropped sum its kernels'; Faults
	// are its kernels' errors and restarts.
	Processed uint64 `json:"processed"`
	Errors    uint64 `json:"errors"`
	Restarts  uint64 `json:"restarts"`
	Dropped   uint64 `json:"dropped"`
	// Epochs are a CUDA backend's device epochs (nil for others).
	Epochs *Epochs `json:"epochs,omitempty"`
}

// Epochs summarise a CUDA backend's device epochs (cuda.EpochStats).
type Epochs struct {
	Count       int    `json:"count"`
	RingsParked int    `json:"rings_parked"`
	Total       int64  `json:"total_ns"`
	Last        int64  `json:"last_ns"`
	Max         int64  `json:"max_ns"`
	LastReason  string `json:"last_reason,omitempty"`
}

// epochStater is a backend with device epochs (cuda.Backend).
type epochStater interface{ EpochStats() cuda.EpochStats }

// devicesJSON serves /api/devices: every backend and every placement a
// kernel has, with its kernels.
func (c *config) devicesJSON(w http.ResponseWriter, _ *http.Request) {
	byName := map[string]*Device{}
	var out []*Device
	get := func(name string) *Device {
		if d := byName[name]; d != nil {
			return d
		}
		d := &Device{Name: name, Kind: name, Available: true, Kernels: []string{}}
		if k, _, ok := strings.Cut(name, ":"); ok {
			d.Kind = k
		}
		byName[name] = d
		out = append(out, d)
		return d
	}
	if c.devices != nil {
		for _, b := range c.devices() {
			d := get(b.Name())
			d.Kind = string(b.Kind())
			if err := b.Available(); err != nil {
				d.Available, d.Reason = false, err.Error()
			}
			if es, ok := b.(epochStater); ok {
				s := es.EpochStats()
				d.Epochs = &Epochs{Count: s.Count, RingsParked: s.RingsParked, Total: int64(s.Total), Last: int64(s.Last), Max: int64(s.Max), LastReason: s.LastReason}
			}
		}
	}
	if c.kernels != nil {
		for _, k := range c.kernels() {
			d := get(k.Backend)
			d.Kernels = append(d.Kernels, k.Kernel)
			d.Processed += k.Processed
			d.Errors += k.Errors
			d.Restarts += k.Restarts
			d.Dropped += k.Dropped
		}
	}
	for _, d := range out {
		sort.Strings(d.Kernels)
	}
	if out == nil {
		out = []*Device{}
	}
	writeJSON(w, map[string]any{"time": c.now(), "devices": out})
}
