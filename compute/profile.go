package compute

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// KernelProfile aggregates one compute kernel's executions.
type KernelProfile struct {
	Kernel      string
	Calls       uint64
	Errors      uint64
	Retries     uint64
	Fallbacks   uint64
	Splits      uint64
	Validations uint64
	Mismatches  uint64
	TotalTime   time.Duration
	MinTime     time.Duration
	MaxTime     time.Duration
	BytesIn     uint64
	BytesOut    uint64
	ByBackend   map[string]uint64 // calls per backend
}

// AvgTime is the mean execution time.
func (p KernelProfile) AvgTime() time.Duration {
	if p.Calls == 0 {
		return 0
	}
	return p.TotalTime / time.Duration(p.Calls)
}

// Profile is an orchestrator-wide snapshot of execution profiles.
type Profile struct {
	Kernels []KernelProfile // sorted by kernel name
	Pool    PoolProfile
}

// PoolProfile is the buffer pool's counters.
type PoolProfile struct {
	Hits, Misses, Drops uint64
	HeldBytes           int64
}

// profiler accumulates per-kernel counters with atomics: recording costs a
// map lookup and a few atomic adds.
type profiler struct {
	kernels sync.Map // name → *kernelCounters
}

type kernelCounters struct {
	calls, errors, retries, fallbacks, splits, validations, mismatches atomic.Uint64
	total, min, max                                                    atomic.Int64
	bytesIn, bytesOut                                                  atomic.Uint64
	backends                                                           sync.Map // name → *atomic.Uint64
}

func (pr *profiler) counters(kernel string) *kernelCounters {
	if k, ok := pr.kernels.Load(kernel); ok {
		return k.(*kernelCounters)
	}
	k, _ := pr.kernels.LoadOrStore(kernel, &kernelCounters{})
	return k.(*kernelCounters)
}

func (pr *profiler) record(p *ExecProfile, err error) {
	k := pr.counters(p.Kernel)
	k.calls.Add(1)
	if err != nil {
		k.errors.Add(1)
	}
	// Zeros are not added: each atomic add costs some 5–20 ns of a tiny
	// Execute's few hundred.
	if p.Retries > 0 {
		k.retries.Add(uint64(p.Retries))
	}
	if p.Fallback {
		k.fallbacks.Add(1)
	}
	if p.Splits > 0 {
		k.splits.Add(uint64(p.Splits))
	}
	if p.Validated {
		k.validations.Add(1)
	}
	d := int64(p.Duration)
	k.total.Add(d)
	for {
		cur := k.min.Load()
		if (cur != 0 && cur <= d) || k.min.CompareAndSwap(cur, d) {
			break
		}
	}
	for {
		cur := k.max.Load()
		if cur >= d || k.max.CompareAndSwap(cur, d) {
			break
		}
	}
	if p.BytesIn > 0 {
		k.bytesIn.Add(uint64(p.BytesIn))
	}
	if p.BytesOut > 0 {
		k.bytesOut.Add(uint64(p.BytesOut))
	}
	if p.Backend != "" {
		c, ok := k.backends.Load(p.Backend)
		if !ok {
			c, _ = k.backends.LoadOrStore(p.Backend, new(atomic.Uint64))
		}
		c.(*atomic.Uint64).Add(1)
	}
}

func (pr *profiler) mismatch(kernel string) { pr.counters(kernel).mismatches.Add(1) }

func (pr *profiler) snapshot() []KernelProfile {
	var out []KernelProfile
	pr.kernels.Range(func(name, v any) bool {
		k := v.(*kernelCounters)
		p := KernelProfile{
			Kernel: name.(string), Calls: k.calls.Load(), Errors: k.errors.Load(), Retries: k.retries.Load(),
			Fallbacks: k.fallbacks.Load(), Splits: k.splits.Load(), Validations: k.validations.Load(),
			Mismatches: k.mismatches.Load(), TotalTime: time.Duration(k.total.Load()),
			MinTime: time.Duration(k.min.Load()), MaxTime: time.Duration(k.max.Load()),
			BytesIn: k.bytesIn.Load(), BytesOut: k.bytesOut.Load(), ByBackend: map[string]uint64{},
		}
		k.backends.Range(func(b, c any) bool {
			p.ByBackend[b.(string)] = c.(*atomic.Uint64).Load()
			return true
		})
		out = append(out, p)
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Kernel < out[j].Kernel })
	return out
}

// Profile returns the execution profile of every compute kernel called so
// far, and the buffer pool's counters.
func (orc *Orchestrator) Profile() Profile {
	s := orc.pool.Stats()
	return Profile{Kernels: orc.profiler.snapshot(), Pool: PoolProfile{Hits: s.Hits, Misses: s.Misses, Drops: s.Drops, HeldBytes: s.HeldBytes}}
}
