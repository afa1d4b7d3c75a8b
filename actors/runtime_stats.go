package actors

import "github.com/ringactor/ringactor/telemetry"

// Stats returns the counters of every launched kernel (state, placement,
// counters, depth, latency histograms): the runtime's telemetry.Source, what
// an admin endpoint's /kernels reports (admin.WithKernels(rt.Stats)).
func (rt *Runtime) Stats() []telemetry.KernelStats { return rt.allStats() }
