//go:build linux && cgo

package cuda

import "fmt"

// NewSimulatedBackends returns n simulated devices (NewSimulatedBackend,
// each with memBytes of memory and opts), each a device of its own: n
// below 1 counts as 1. A lone simulated device is named "cuda:sim", as
// NewSimulatedBackend's; several are "cuda:sim0", "cuda:sim1", …. Close
// each when done.
func NewSimulatedBackends(n int, memBytes uint64, opts ...BackendOption) []*Backend {
	n = max(n, 1)
	out := make([]*Backend, n)
	for i := range out {
		b := NewSimulatedBackend(memBytes, opts...)
		b.ordinal = i
		if n > 1 {
			b.name = fmt.Sprintf("%s:sim%d", BackendName, i)
			b.alloc.name = b.name
		}
		probe := b.probeFn
		b.probeFn = func() Report {
			r := probe()
			for j := range r.Devices {
				r.Devices[j].Index = i
				r.Devices[j].TotalMem = memBytes
				r.Devices[j].ComputeCapability = ComputeCapability{Major: 9, Minor: 0}
				r.Devices[j].CanMapHostMemory = true
				r.Devices[j].UnifiedAddressing = true
			}
			return r
		}
		out[i] = b
	}
	return out
}
