package gpu

import (
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// Accelerator is the preferred kind of backend.
type Accelerator uint8

// Accelerator preferences.
const (
	// Auto picks by workload: small work stays on the CPU, large work goes
	// to an available device (and, with adaptive selection, to whichever
	// measured faster).
	Auto Accelerator = iota
	// PreferCPU always uses the CPU.
	PreferCPU
	// PreferCUDA uses a CUDA device when one is usable and the CPU otherwise.
	PreferCUDA
)

// String names the preference as ParseAccelerator reads it.
func (a Accelerator) String() string {
	switch a {
	case Auto:
		return "auto"
	case PreferCPU:
		return "cpu"
	case PreferCUDA:
		return "cuda"
	}
	return fmt.Sprintf("accelerator(%d)", uint8(a))
}

// ParseAccelerator reads "auto", "cpu" or "cuda".
func ParseAccelerator(s string) (Accelerator, error) {
	for _, a := range []Accelerator{Auto, PreferCPU, PreferCUDA} {
		if a.String() == s {
			return a, nil
		}
	}
	return Auto, fmt.Errorf("%w: accelerator %q (want auto, cpu or cuda)", ErrArgument, s)
}

// SelectionPolicy configures a Selector.
type SelectionPolicy struct {
	Accelerator Accelerator
	// MinDeviceWork is the work (elements × kernel cost) below which Auto
	// stays on the CPU: moving a few kilobytes to a device costs more than
	// computing them (DefaultMinDeviceWork; 0 sends all work to a device).
	MinDeviceWork float64
	// Adaptive learns from measured timings per (kernel, size class,
	// backend) and picks the fastest candidate, re-measuring the others now
	// and then so that a change is noticed.
	Adaptive bool
	// MinSamples is how many timings a candidate needs before it is judged
	// (default 3); ExploreEvery is how often (in calls) a non-best
	// candidate is re-measured (default 64).
	MinSamples, ExploreEvery int
}

// DefaultMinDeviceWork is the usual SelectionPolicy.MinDeviceWork.
const DefaultMinDeviceWork = 1 << 20

// Selector picks the backend of each execution.
type Selector struct {
	backends []Backend
	policy   SelectionPolicy
	stats    sync.Map // kernel name → *kernelTimings
	calls    atomic.Uint64
}

type statKey struct {
	kernel  string
	class   uint8
	backend string
}

// kernelTimings are one kernel's timings by (size class, backend), an
// immutable list replaced on the first sight of a new pair: a lookup hashes
// only the kernel's name and compares a few entries, cheaper than hashing
// a struct of two strings on every Execute.
type kernelTimings struct {
	mu      sync.Mutex // serialises adding entries
	entries atomic.Pointer[[]timingEntry]
}

// timingEntry is one (size class, backend) pair's timing.
type timingEntry struct {
	class   uint8
	backend string
	t       *timing
}

// timing is an exponentially weighted mean of one candidate's durations.
type timing struct {
	mu      sync.Mutex
	n       int
	meanNS  float64
	samples atomic.Int64
}

// NewSelector returns a selector over backends; the CPU backend should be
// among them, as the fallback of last resort.
func NewSelector(backends []Backend, p SelectionPolicy) *Selector {
	if p.MinSamples <= 0 {
		p.MinSamples = 3
	}
	if p.ExploreEvery <= 0 {
		p.ExploreEvery = 64
	}
	return &Selector{backends: backends, policy: p}
}

// Backends returns the selector's backends.
func (s *Selector) Backends() []Backend { return s.backends }

// Backend returns the backend with that name or kind.
func (s *Selector) Backend(name string) (Backend, bool) {
	for _, b := range s.backends {
		if b.Name() == name || string(b.Kind()) == name {
			return b, true
		}
	}
	return nil, false
}

// CPU returns the first CPU backend.
func (s *Selector) CPU() (Backend, bool) { return s.Backend(string(KindCPU)) }

// Choose picks the backend for spec on n elements of dt. override names a
// backend (by name or kind) the caller insists on; "" lets the policy decide.
func (s *Selector) Choose(spec *KernelSpec, dt DType, n int, override string) (Backend, error) {
	if override != "" {
		b, ok := s.Backend(override)
		if !ok {
			return nil, &ArgumentError{Kernel: spec.Name, Arg: "backend", Reason: fmt.Sprintf("no backend %q", override), Err: ErrArgument}
		}
		if err := b.Available(); err != nil {
			return nil, err
		}
		if !b.Supports(spec, dt) {
			return nil, &ArgumentError{Kernel: spec.Name, Arg: "backend", Reason: fmt.Sprintf("%s has no %v implementation", b.Name(), dt), Err: ErrUnsupportedDType}
		}
		return b, nil
	}
	if !spec.Supports(dt) {
		return nil, &ArgumentError{Kernel: spec.Name, Arg: "input 0", Reason: fmt.Sprintf("dtype %v not supported (supports %v)", dt, spec.DTypes), Err: ErrUnsupportedDType}
	}
	var cpu, device Backend
	candidates := 0
	for _, b := range s.backends {
		if !b.Supports(spec, dt) || b.Available() != nil {
			continue
		}
		candidates++
		if b.Kind() == KindCPU {
			if cpu == nil {
				cpu = b
			}
		} else if device == nil {
			device = b
		}
	}
	switch {
	case candidates == 0:
		return nil, &DeviceError{Kind: DeviceUnavailable, Backend: "any", Reason: fmt.Sprintf("no available backend implements %q for %v", spec.Name, dt)}
	case cpu != nil && device == nil:
		return cpu, nil
	case device != nil && cpu == nil:
		return device, nil
	}
	switch s.policy.Accelerator {
	case PreferCPU:
		return cpu, nil
	case PreferCUDA:
		return device, nil
	}
	cost := spec.Cost
	if cost == 0 {
		cost = 1
	}
	if float64(n)*cost < s.policy.MinDeviceWork {
		return cpu, nil
	}
	if !s.policy.Adaptive {
		return device, nil
	}
	return s.adaptive(spec, dt, n), nil
}

// adaptive picks among the candidates by measured time.
func (s *Selector) adaptive(spec *KernelSpec, dt DType, n int) Backend {
	class := sizeClass(n)
	var best, least Backend
	bestNS, leastN := 0.0, int64(-1)
	for _, b := range s.backends {
		if b.Available() != nil || !b.Supports(spec, dt) {
			continue
		}
		t := s.timing(statKey{spec.Name, class, b.Name()})
		c := t.samples.Load()
		if leastN < 0 || c < leastN {
			least, leastN = b, c
		}
		t.mu.Lock()
		mean := t.meanNS
		t.mu.Unlock()
		if c >= int64(s.policy.MinSamples) && (best == nil || mean < bestNS) {
			best, bestNS = b, mean
		}
	}
	if leastN < int64(s.policy.MinSamples) || best == nil {
		return least // measure the candidate we know least about
	}
	if s.calls.Add(1)%uint64(s.policy.ExploreEvery) == 0 && least != best {
		return least
	}
	return best
}

func (s *Selector) timing(k statKey) *timing {
	v, ok := s.stats.Load(k.kernel)
	if !ok {
		v, _ = s.stats.LoadOrStore(k.kernel, new(kernelTimings))
	}
	kt := v.(*kernelTimings)
	if t := kt.find(k); t != nil {
		return t
	}
	kt.mu.Lock()
	defer kt.mu.Unlock()
	if t := kt.find(k); t != nil {
		return t
	}
	var list []timingEntry
	if p := kt.entries.Load(); p != nil {
		list = *p
	}
	t := &timing{}
	list = append(list[:len(list):len(list)], timingEntry{class: k.class, backend: k.backend, t: t})
	kt.entries.Store(&list)
	return t
}

// find returns the timing of k's size class and backend, or nil.
func (kt *kernelTimings) find(k statKey) *timing {
	p := kt.entries.Load()
	if p == nil {
		return nil
	}
	for i := range *p {
		if e := &(*p)[i]; e.class == k.class && e.backend == k.backend {
			return e.t
		}
	}
	return nil
}

// Observe records how long backend took for spec on n elements.
func (s *Selector) Observe(spec *KernelSpec, n int, backend Backend, d time.Duration) {
	if !s.policy.Adaptive {
		return
	}
	t := s.timing(statKey{spec.Name, sizeClass(n), backend.Name()})
	t.mu.Lock()
	if t.n == 0 {
		t.meanNS = float64(d)
	} else {
		t.meanNS += 0.3 * (float64(d) - t.meanNS)
	}
	t.n++
	t.mu.Unlock()
	t.samples.Add(1)
}

// Estimate returns the measured mean time of backend for spec on n elements
// and how many samples it rests on.
func (s *Selector) Estimate(spec *KernelSpec, n int, backend string) (time.Duration, int) {
	t := s.timing(statKey{spec.Name, sizeClass(n), backend})
	t.mu.Lock()
	defer t.mu.Unlock()
	return time.Duration(t.meanNS), t.n
}

// sizeClass buckets element counts by powers of two.
func sizeClass(n int) uint8 { return uint8(bits.Len(uint(n))) }
