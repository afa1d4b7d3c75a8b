package admin

import (
	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/stream"
	"github.com/ringactor/ringactor/telemetry"
)

// WithGraphs makes /api/graphs (the dashboard's stream view) report the
// graphs src returns, e.g. func() []*stream.Graph { return
// stream.Graphs(rt) }. Without it the dashboard shows no graphs.
func WithGraphs(src func() []*stream.Graph) Option { return func(c *config) { c.graphs = src } }

// WithCluster makes /api/cluster (the dashboard's cluster view) report the
// member src returns; nil (e.g. before it has started) reports none.
func WithCluster(src func() *cluster.Member) Option { return func(c *config) { c.member = src } }

// WithDevices makes /api/devices (the dashboard's devices view) report the
// compute backends src returns, e.g. rt.Backends. Without it the devices
// view groups the kernels by placement only.
func WithDevices(src func() []gpu.Backend) Option { return func(c *config) { c.devices = src } }

// WithRuntime reports rt: its kernels (WithKernels(rt.Stats)), one kernel's
// histograms at a time read directly, its stream graphs (stream.Graphs)
// and its backends (WithDevices).
func WithRuntime(rt *actors.Runtime) Option {
	return func(c *config) {
		c.kernels = rt.Stats
		c.kernel = rt.KernelTelemetry
		c.graphs = func() []*stream.Graph { return stream.Graphs(rt) }
		c.devices = rt.Backends
	}
}

// WithMember reports m as a cluster member: WithRuntime(m.Runtime()) and
// WithCluster.
func WithMember(m *cluster.Member) Option {
	return func(c *config) {
		WithRuntime(m.Runtime())(c)
		c.member = func() *cluster.Member { return m }
	}
}

// kernelStats returns one kernel's stats, false when there is none.
func (c *config) kernelStats(id string) (telemetry.KernelStats, bool) {
	if c.kernel != nil {
		s, err := c.kernel(id)
		return s, err == nil
	}
	if c.kernels != nil {
		for _, s := range c.kernels() {
			if s.Kernel == id {
				return s, true
			}
		}
	}
	return telemetry.KernelStats{}, false
}
