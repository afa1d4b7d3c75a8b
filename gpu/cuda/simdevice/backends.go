//go:build linux && cgo

package simdevice

import (
	"fmt"

	"github.com/ringactor/ringactor/gpu/cuda"
)

// NewBackends returns n simulated devices (NewBackend, each with memBytes
// of memory and opts), each a device of its own: n below 1 counts as 1. A
// lone simulated device is named "cuda:sim", as NewBackend's; several are
// "cuda:sim0", "cuda:sim1", …, with ordinals 0, 1, …. Close each when
// done.
func NewBackends(n int, memBytes uint64, opts ...cuda.BackendOption) []*cuda.Backend {
	n = max(n, 1)
	out := make([]*cuda.Backend, n)
	for i := range out {
		name := Name
		if n > 1 {
			name = fmt.Sprintf("%s%d", Name, i)
		}
		info := cuda.DeviceInfo{Name: "simulated", Index: i, SMs: 2, TotalMem: memBytes,
			ComputeCapability: cuda.ComputeCapability{Major: 9, Minor: 0}, CanMapHostMemory: true,
			UnifiedAddressing: true}
		out[i] = cuda.NewHostBackend(NewDevice(memBytes), name, i, info, opts...)
	}
	return out
}
