// Package pagerank computes PageRank with ring-kernel actors wired
// kernel-to-kernel: the graph is split across P partition kernels, each
// owning a contiguous range of nodes and the edges into them, which send
// their contributions directly to one another every iteration, and a
// coordinator kernel that collects each partition's dangling mass and L1
// change and decides when to stop.
//
// The semantics are those of networkx's pagerank (2.8): damping 0.85 by
// default, dangling nodes spread their rank uniformly over all nodes,
// duplicate edges count once, self-loops are ordinary edges, the iteration
// starts from the uniform vector and stops once the L1 change of an
// iteration is below N·tol, and the ranks sum to 1.
//
// That stopping rule, networkx's and the default, loosens with the size of
// the graph: at tol 1e-6 a graph of 2 million nodes stops once the L1 change
// is below 2, which the first iteration meets. Options.TolAbs stops instead
// once the L1 change is below an absolute bound, whatever the number of
// nodes; since each iteration shrinks the distance to the fixed point by the
// damping factor α, the last iterate is then within α/(1−α)·TolAbs of it in
// L1 (5.67·TolAbs at α 0.85). Result.Iterations and Result.Limit say how many
// iterations were made and which bound stopped them.
//
// Read a graph with Parse or ParseFile (an edge list, "src dst" a line),
// compute with Run, list the best nodes with Top.
package pagerank

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ringactor/ringactor/actors"
)

// Defaults of Options.
const (
	DefaultDamping = 0.85
	DefaultTol     = 1e-6
	DefaultMaxIter = 100
)

// Options configure Run. The zero value is networkx's defaults on one
// partition per core.
type Options struct {
	// Damping is the probability of following a link, in (0, 1]; 0 means
	// DefaultDamping.
	Damping float64
	// Tol is the convergence tolerance per node, networkx's rule: the
	// iteration stops once the L1 change of the rank vector is below
	// NumNodes × Tol. 0 means DefaultTol, unless TolAbs is set.
	Tol float64
	// TolAbs, when positive, is an absolute tolerance used instead of Tol:
	// the iteration stops once the L1 change of the rank vector is below
	// TolAbs, whatever the number of nodes, leaving the ranks within
	// Damping/(1−Damping) × TolAbs of the exact PageRank in L1. Set Tol or
	// TolAbs, not both. 0 means networkx's rule (Tol).
	TolAbs float64
	// MaxIter is the most iterations made before Run gives up with a
	// *ConvergenceError; 0 means DefaultMaxIter.
	MaxIter int
	// Partitions is the number of partition kernels; 0 means
	// runtime.GOMAXPROCS(0). It is capped at the number of nodes.
	Partitions int
	// Progress, when set, is called after each iteration (on Run's
	// goroutine, not a kernel's).
	Progress func(Progress)
	// Runtime is the ringactor runtime to launch the kernels in; nil makes a
	// private one for the Run (closed before Run returns).
	Runtime *actors.Runtime
}

// Progress is reported after each iteration.
type Progress struct {
	Iteration int           // 1-based
	Delta     float64       // the L1 change of the rank vector in this iteration
	Elapsed   time.Duration // since Run started
}

// Result is the outcome of Run.
type Result struct {
	// Ranks are the PageRank values by node index; they sum to 1.
	Ranks []float64
	// Iterations is the number of iterations made.
	Iterations int
	// Converged reports whether the last iteration's L1 change was below
	// Limit.
	Converged bool
	// Delta is the L1 change of the last iteration.
	Delta float64
	// Limit is the L1 change the iteration had to go below: NumNodes × Tol
	// (networkx's rule), or TolAbs when it was set.
	Limit float64
	// Partitions is the number of partition kernels used.
	Partitions int
	// Duration is the time from Run's start to the result: the start of a
	// private runtime, the kernels' launch, their layout of the graph and
	// the iterations; not the shutdown.
	Duration time.Duration
	// Iterating is the part of Duration spent iterating: from the
	// coordinator's first iterate command to the collected ranks.
	Iterating time.Duration
}

// ErrNotConverged is matched (errors.Is) by a *ConvergenceError.
var ErrNotConverged = errors.New("pagerank: power iteration failed to converge")

// ConvergenceError reports that MaxIter iterations did not converge, as
// networkx's PowerIterationFailedConvergence does.
type ConvergenceError struct {
	Iterations int
	Delta      float64 // the last iteration's L1 change
	Limit      float64 // NumNodes × Tol, or TolAbs when it was set
}

// Error implements error.
func (e *ConvergenceError) Error() string {
	return fmt.Sprintf("pagerank: power iteration failed to converge within %d iterations (L1 change %.3g, want below %.3g)",
		e.Iterations, e.Delta, e.Limit)
}

// Is matches ErrNotConverged.
func (e *ConvergenceError) Is(target error) bool { return target == ErrNotConverged }

// ErrInvalidOptions is matched (errors.Is) by an *OptionError.
var ErrInvalidOptions = errors.New("pagerank: invalid options")

// OptionError reports an Options field that Run cannot use; Run computes
// nothing.
type OptionError struct {
	Field string // the Options field: "Damping", "Tol", "TolAbs", "MaxIter" or "Partitions"
	Value any    // its value
	Want  string // what it must be
}

// Error implements error.
func (e *OptionError) Error() string {
	return fmt.Sprintf("pagerank: option %s = %v, want %s", e.Field, e.Value, e.Want)
}

// Is matches ErrInvalidOptions.
func (e *OptionError) Is(target error) bool { return target == ErrInvalidOptions }

// positive reports whether v is a positive finite number.
func positive(v float64) bool { return v > 0 && !math.IsInf(v, 1) }

// withDefaults fills in the defaults and checks the ranges.
func (o Options) withDefaults() (Options, error) {
	if o.Damping == 0 {
		o.Damping = DefaultDamping
	}
	if o.Tol == 0 && o.TolAbs == 0 {
		o.Tol = DefaultTol
	}
	if o.MaxIter == 0 {
		o.MaxIter = DefaultMaxIter
	}
	if o.Partitions == 0 {
		o.Partitions = runtime.GOMAXPROCS(0)
	}
	switch {
	case !(o.Damping > 0 && o.Damping <= 1):
		return o, &OptionError{Field: "Damping", Value: o.Damping, Want: "a number in (0, 1]"}
	case o.TolAbs != 0 && !positive(o.TolAbs):
		return o, &OptionError{Field: "TolAbs", Value: o.TolAbs, Want: "a positive finite number, or 0 for networkx's rule (Tol)"}
	case o.TolAbs != 0 && o.Tol != 0:
		return o, &OptionError{Field: "TolAbs", Value: o.TolAbs, Want: fmt.Sprintf("Tol (%v) or TolAbs, not both", o.Tol)}
	case o.TolAbs == 0 && !positive(o.Tol):
		return o, &OptionError{Field: "Tol", Value: o.Tol, Want: "a positive finite number"}
	case o.MaxIter < 0:
		return o, &OptionError{Field: "MaxIter", Value: o.MaxIter, Want: "at least 1"}
	case o.Partitions < 0:
		return o, &OptionError{Field: "Partitions", Value: o.Partitions, Want: "at least 1 (0: one per core)"}
	}
	return o, nil
}

// limit is the L1 change below which an iteration on n nodes has converged.
func (o Options) limit(n int) float64 {
	if o.TolAbs > 0 {
		return o.TolAbs
	}
	return float64(n) * o.Tol
}

// runs numbers the Runs of the process, so that kernel ids never collide in
// a shared runtime.
var runs atomic.Uint64

// Run computes the PageRank of g with ring kernels: P partition kernels and
// a coordinator (see the package documentation). It returns the ranks by
// node index. If MaxIter iterations do not converge, it returns the last
// iterate (Converged false) and a *ConvergenceError. If ctx ends first it
// returns ctx's error. An empty graph has no ranks and converges at once,
// as in networkx.
//
// The kernels are terminated before Run returns, and a private runtime is
// closed.
func Run(ctx context.Context, g *Graph, opts Options) (res Result, err error) {
	start := time.Now()
	o, err := opts.withDefaults()
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("pagerank: %w", err)
	}
	n := g.NumNodes()
	if n == 0 {
		return Result{Ranks: []float64{}, Converged: true, Limit: o.limit(0), Duration: time.Since(start)}, nil
	}
	p := min(o.Partitions, n)

	rt := o.Runtime
	if rt == nil {
		if rt, err = actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false)); err != nil {
			return Result{}, fmt.Errorf("pagerank: start runtime: %w", err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	k := &kernels{rt: rt, own: o.Runtime == nil}
	defer func() {
		cancel() // handlers send nothing more
		if terr := k.close(ctx); terr != nil {
			err = errors.Join(err, terr)
		}
	}()

	bounds := splitRanges(g, p)
	pr := &problem{ctx: runCtx, g: g, bounds: bounds, need: links(g, bounds), allShares: make([]float64, n),
		alpha: o.Damping, limit: o.limit(n), maxIter: o.MaxIter, parts: make([]*partitionKernel, p)}
	coord, err := k.launch(ctx, pr, fmt.Sprintf("pagerank-%d", runs.Add(1)))
	if err != nil {
		return Result{}, err
	}
	if _, err := coord.Send(ctx, coordMsg{Kind: coordStart}); err != nil {
		return Result{}, fmt.Errorf("pagerank: start: %w", err)
	}
	for {
		u, err := coord.Receive(ctx)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return Result{}, fmt.Errorf("pagerank: %w", cerr)
			}
			return Result{}, fmt.Errorf("pagerank: %w", err)
		}
		switch u.Kind {
		case updateProgress:
			if o.Progress != nil {
				o.Progress(Progress{Iteration: u.Iter, Delta: u.Delta, Elapsed: time.Since(start)})
			}
		case updateDone:
			res = Result{Ranks: u.Ranks, Iterations: u.Iter, Converged: u.Converged, Delta: u.Delta, Limit: o.limit(n),
				Partitions: p, Duration: time.Since(start), Iterating: u.Iterating}
			if !u.Converged {
				return res, &ConvergenceError{Iterations: u.Iter, Delta: u.Delta, Limit: res.Limit}
			}
			return res, nil
		}
	}
}

// kernels are the ring kernels of one Run, in the order they were launched.
type kernels struct {
	rt       *actors.Runtime
	own      bool // rt is the Run's own: close it
	launched []interface {
		ID() string
		Terminate(context.Context) error
	}
}

// launch launches the coordinator, then the partitions routed into it, fills
// pr.parts and opens every gate. The coordinator's handle is returned.
func (k *kernels) launch(ctx context.Context, pr *problem, prefix string) (*actors.Kernel[coordMsg, update], error) {
	p := len(pr.parts)
	// Per iteration a partition is sent one command and at most P−1 shares;
	// the coordinator gets at most P² replies, one per message a partition
	// handles, plus Run's start. Sized with room to spare, the rings never
	// fill, so no handler ever waits on a send.
	coordCap := capacity(p*p + p + 2)
	coord, err := actors.Launch(ctx, k.rt, actors.NewKernel(prefix+"/coordinator",
		once(prefix+"/coordinator", func() actors.Handler[coordMsg, update] { return newCoordinator(pr) }),
		actors.WithCapacity(coordCap), actors.WithOutputCapacity(4*coordCap)))
	if err != nil {
		return nil, fmt.Errorf("pagerank: launch coordinator: %w", err)
	}
	k.launched = append(k.launched, coord)
	for i := range p {
		id := fmt.Sprintf("%s/partition-%d", prefix, i)
		part, err := actors.Launch(ctx, k.rt, actors.NewKernel(id,
			once(id, func() actors.Handler[partMsg, coordMsg] { return newPartition(pr, i) }),
			actors.WithCapacity(capacity(p+2)), actors.WithDownstream(coord.ID())))
		if err != nil {
			return nil, fmt.Errorf("pagerank: launch partition %d: %w", i, err)
		}
		k.launched = append(k.launched, part)
		pr.parts[i] = part
	}
	if err := coord.Activate(ctx); err != nil {
		return nil, fmt.Errorf("pagerank: activate coordinator: %w", err)
	}
	for i, part := range pr.parts {
		if err := part.Activate(ctx); err != nil {
			return nil, fmt.Errorf("pagerank: activate partition %d: %w", i, err)
		}
	}
	return coord, nil
}

// close terminates the kernels, partitions first, or closes the Run's own
// runtime, which terminates them all. It runs even when ctx has ended, with
// a deadline of its own.
func (k *kernels) close(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if k.own {
		if err := k.rt.Close(cctx); err != nil {
			return fmt.Errorf("pagerank: close runtime: %w", err)
		}
		return nil
	}
	var errs []error
	for i := len(k.launched) - 1; i >= 0; i-- {
		if err := k.launched[i].Terminate(cctx); err != nil && !errors.Is(err, actors.ErrTerminated) {
			errs = append(errs, fmt.Errorf("pagerank: terminate %s: %w", k.launched[i].ID(), err))
		}
	}
	return errors.Join(errs...)
}

// capacity is the smallest power of two of at least n and 16.
func capacity(n int) int {
	c := 16
	for c < n {
		c *= 2
	}
	return c
}

// Ranked is a node and its rank.
type Ranked struct {
	Index int
	Name  string
	Rank  float64
}

// Top returns the k nodes of highest rank, highest first; ties go to the
// node that comes first in the graph. k ≤ 0 or beyond the number of nodes
// returns them all.
func Top(g *Graph, ranks []float64, k int) []Ranked {
	if k <= 0 || k > len(ranks) {
		k = len(ranks)
	}
	// better reports whether node i goes before node j.
	better := func(i, j int) bool { return ranks[i] > ranks[j] || ranks[i] == ranks[j] && i < j }
	var top []int
	if k < len(ranks)/8 {
		// A few of many: keep the best k seen so far, sorted.
		top = make([]int, 0, k+1)
		for i := range ranks {
			if len(top) == k && !better(i, top[k-1]) {
				continue
			}
			at, _ := slices.BinarySearchFunc(top, i, func(a, b int) int {
				if better(a, b) {
					return -1
				}
				return 1
			})
			top = slices.Insert(top, at, i)
			if len(top) > k {
				top = top[:k]
			}
		}
	} else {
		top = make([]int, len(ranks))
		for i := range top {
			top[i] = i
		}
		slices.SortFunc(top, func(a, b int) int {
			if c := cmp.Compare(ranks[b], ranks[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		top = top[:k]
	}
	out := make([]Ranked, len(top))
	for n, i := range top {
		out[n] = Ranked{Index: i, Name: g.Names[i], Rank: ranks[i]}
	}
	return out
}
