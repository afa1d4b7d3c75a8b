package compute

import (
	"reflect"
	"sync/atomic"

	"github.com/ringactor/ringactor/gpu"
)

// devices spreads executions over the orchestrator's device backends:
// every non-CPU backend of the selector, each with the executions in
// flight on it.
type devices struct {
	backends []gpu.Backend
	inflight []atomic.Int64
	next     atomic.Uint64 // where the search for the least loaded starts
}

// newDevices collects the device backends among backends.
func newDevices(backends []gpu.Backend) *devices {
	d := &devices{}
	for _, b := range backends {
		// Only backends of comparable types (pointers, as every backend of
		// this module): slot compares them with ==.
		if b.Kind() != gpu.KindCPU && reflect.TypeOf(b).Comparable() {
			d.backends = append(d.backends, b)
		}
	}
	d.inflight = make([]atomic.Int64, len(d.backends))
	return d
}

// slot returns b's index among the devices, or -1.
func (d *devices) slot(b gpu.Backend) int {
	for i, x := range d.backends {
		if x == b {
			return i
		}
	}
	return -1
}

// pick returns the device to run c on when the selector chose device
// chosen and no backend was named: the device the call's buffers already
// live on (their memory stays on one device), or else the available
// device of chosen's kind that implements the kernel with the fewest
// executions in flight, ties taking turns. A device that faulted is
// not available. With one device, chosen.
func (d *devices) pick(chosen gpu.Backend, c *call, items [][]*gpu.UnifiedBuffer, outs []*gpu.UnifiedBuffer) gpu.Backend {
	if len(d.backends) < 2 || chosen.Kind() == gpu.KindCPU {
		return chosen
	}
	if b, ok := d.affinity(chosen, items, outs); ok {
		return b
	}
	// The least loaded eligible devices; among them, the next in turn.
	eligible := func(b gpu.Backend) bool {
		return b.Kind() == chosen.Kind() && b.Supports(c.spec, c.dtype) && b.Available() == nil
	}
	least, ties := int64(-1), 0
	for i, b := range d.backends {
		if !eligible(b) {
			continue
		}
		switch l := d.inflight[i].Load(); {
		case least < 0 || l < least:
			least, ties = l, 1
		case l == least:
			ties++
		}
	}
	if ties == 0 {
		return chosen
	}
	turn := int(d.next.Add(1) % uint64(ties))
	for i, b := range d.backends {
		if eligible(b) && d.inflight[i].Load() == least {
			if turn == 0 {
				return b
			}
			turn--
		}
	}
	return chosen // the loads changed between the passes
}

// affinity returns the device one of the call's buffers lives on, when
// it is one of the devices; ok is false when none lives on a device. A
// buffer on a device that cannot run the call keeps the selector's choice
// (its execution then fails or recovers as the recovery policy says).
func (d *devices) affinity(chosen gpu.Backend, items [][]*gpu.UnifiedBuffer, outs []*gpu.UnifiedBuffer) (gpu.Backend, bool) {
	find := func(buf *gpu.UnifiedBuffer) (gpu.Backend, bool) {
		if buf == nil {
			return nil, false
		}
		a := buf.DeviceAllocator()
		if a == nil {
			return nil, false
		}
		for _, b := range d.backends {
			if ba := b.Allocator(); ba != nil && ba.Name() == a.Name() {
				if b.Available() != nil {
					return chosen, true
				}
				return b, true
			}
		}
		return nil, false
	}
	for _, in := range items {
		for _, buf := range in {
			if b, ok := find(buf); ok {
				return b, true
			}
		}
	}
	for _, buf := range outs {
		if b, ok := find(buf); ok {
			return b, true
		}
	}
	return nil, false
}
