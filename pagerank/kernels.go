package pagerank

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/messages"
)

// The ring kernels of one Run and what they say to each other.
//
//	Run ──start──▶ coordinator ──init / iterate / collect──▶ partition 0 … P−1
//	                    ▲                                      │  │
//	                    └──── report / ranks (WithDownstream) ─┘  └─share──▶ other partitions
//	Run ◀──progress / done (receive stream)── coordinator
//
// Every partition kernel's replies go downstream into the coordinator's
// ring; partitions send their shares to one another, and the coordinator
// its commands to the partitions, from inside their handlers through the
// typed handles of the other kernels. Run only starts the coordinator and
// reads its receive stream.
//
// One iteration k: the coordinator sends iterate(k, dangling mass of
// x^{k−1}) to every partition; each computes its share x[u]/outdeg(u) from
// x^{k−1} into its range of the shared share vector, sends a share message
// (that range) to each partition that has edges from it, and once it holds
// every share it needs it computes x^k over its range (its rows of the
// graph's in-edge CSR) and replies with a report: its L1 change and the
// dangling mass of x^k. With all P reports the coordinator stops (converged,
// or out of iterations) by sending collect, or starts iteration k+1. Each
// partition answers collect with its ranks, which the coordinator assembles
// into the result on its receive stream.
//
// Deadlock: a handler that sends waits while the target's ring is full, so
// no ring may fill. In any iteration a partition is sent at most 1 command
// and P−1 shares, and the coordinator receives one reply for each message a
// partition handles (at most P² per iteration) before it sends the next
// command; the rings are sized above that (see capacity).

// partMsg is the message of a partition kernel.
type partMsg struct {
	Kind     partKind
	Iter     int       // the iteration an iterate or a share belongs to
	From     int       // the sending partition of a share
	Share    []float64 // x[u]/outdeg(u) over the sender's range; read-only
	Dangling float64   // for iterate: the dangling mass of x^{Iter−1}
}

// partKind says what a partMsg is.
type partKind uint8

const (
	partInit    partKind = iota + 1 // build the layout, start from x⁰ = 1/N
	partIterate                     // compute iteration Iter
	partShare                       // another partition's share for iteration Iter
	partCollect                     // reply with the ranks
)

// coordMsg is the message of the coordinator kernel, and the reply of the
// partition kernels.
type coordMsg struct {
	Kind     coordKind
	Part     int
	Iter     int
	Delta    float64   // report: the partition's L1 change
	Dangling float64   // report: the dangling mass of the partition's x^Iter
	Ranks    []float64 // ranks: the partition's final x, by local index
}

// coordKind says what a coordMsg is.
type coordKind uint8

const (
	coordNone   coordKind = iota // nothing to report (a share was taken)
	coordStart                   // from Run: start the computation
	coordReport                  // a partition finished iteration Iter
	coordRanks                   // a partition's final ranks
)

// update is the coordinator's reply: what Run reads from its receive stream.
type update struct {
	Kind      updateKind
	Iter      int
	Delta     float64       // the L1 change of iteration Iter
	Converged bool          // done: whether the last iteration converged
	Ranks     []float64     // done: the ranks by node index
	Iterating time.Duration // done: from the first iterate command to the ranks
}

// updateKind says what an update is.
type updateKind uint8

const (
	updateNone     updateKind = iota // nothing for Run
	updateProgress                   // iteration Iter is complete
	updateDone                       // the result is ready
)

func init() {
	messages.MustRegister[partMsg]("ringactor.pagerank.PartitionMessage")
	messages.MustRegister[coordMsg]("ringactor.pagerank.CoordinatorMessage")
	messages.MustRegister[update]("ringactor.pagerank.Update")
}

// partitionKernel is the typed handle of a partition kernel.
type partitionKernel = actors.Kernel[partMsg, coordMsg]

// problem is what every kernel of one Run knows.
type problem struct {
	ctx    context.Context // the Run's: handlers stop sending once it ends
	g      *Graph
	bounds []int // partition ranges
	need   [][]bool
	// allShares is x[u]/outdeg(u) of every node: each partition writes its
	// own range, then tells the partitions that read it (a share message).
	allShares []float64
	alpha     float64
	limit     float64 // the iteration has converged once its L1 change is below this
	maxIter   int
	parts     []*partitionKernel // filled by Run before any kernel is activated
}

// once returns a handler factory that makes a handler with mk the first time
// and, should the kernel be restarted (its state is then lost), a handler
// that fails every message so that the Run fails instead of computing
// garbage.
func once[Req, Resp any](id string, mk func() actors.Handler[Req, Resp]) func() actors.Handler[Req, Resp] {
	var starts atomic.Int32
	return func() actors.Handler[Req, Resp] {
		if starts.Add(1) > 1 {
			return func(context.Context, Req) (Resp, error) {
				var zero Resp
				return zero, fmt.Errorf("pagerank: kernel %s restarted and lost its state", id)
			}
		}
		return mk()
	}
}

// partition is the state of one partition kernel.
type partition struct {
	*problem
	id     int
	l      *layout
	sendTo []int // the other partitions that need this one's share
	self   bool  // whether this partition needs its own share
	expect int   // shares needed per iteration, its own included

	x, next, share []float64
	recv           [][]float64 // this iteration's shares by sender
	got            int
	done           int  // the last completed iteration
	started        bool // iterate(done+1) has arrived
	dsum           float64
}

// newPartition returns the handler of partition id.
func newPartition(pr *problem, id int) actors.Handler[partMsg, coordMsg] {
	p := &partition{problem: pr, id: id, self: pr.need[id][id]}
	for q, yes := range pr.need[id] {
		if yes && q != id {
			p.sendTo = append(p.sendTo, q)
		}
	}
	for s := range pr.need {
		if pr.need[s][id] {
			p.expect++
		}
	}
	return p.handle
}

// handle is the partition kernel's handler.
func (p *partition) handle(_ context.Context, m partMsg) (coordMsg, error) {
	if p.ctx.Err() != nil {
		return coordMsg{}, nil // the Run is over: send nothing more
	}
	switch m.Kind {
	case partInit:
		p.init()
		return coordMsg{Kind: coordReport, Part: p.id, Dangling: p.danglingMass()}, nil
	case partIterate:
		if m.Iter != p.done+1 || p.started {
			return coordMsg{}, fmt.Errorf("partition %d: iterate %d during iteration %d", p.id, m.Iter, p.done+1)
		}
		p.started, p.dsum = true, m.Dangling
		for i, xi := range p.x {
			p.share[i] = xi * p.l.invDeg[i]
		}
		for _, q := range p.sendTo {
			if _, err := p.parts[q].Send(p.ctx, partMsg{Kind: partShare, Iter: m.Iter, From: p.id, Share: p.share}); err != nil {
				return coordMsg{}, fmt.Errorf("partition %d: send share to partition %d: %w", p.id, q, err)
			}
		}
		if p.self {
			p.take(p.id, p.share)
		}
		return p.tryFinish(), nil
	case partShare:
		if m.Iter != p.done+1 || p.recv[m.From] != nil {
			return coordMsg{}, fmt.Errorf("partition %d: share of partition %d for iteration %d during iteration %d", p.id, m.From, m.Iter, p.done+1)
		}
		p.take(m.From, m.Share)
		return p.tryFinish(), nil
	case partCollect:
		return coordMsg{Kind: coordRanks, Part: p.id, Iter: p.done, Ranks: p.x}, nil
	}
	return coordMsg{}, fmt.Errorf("partition %d: unknown message kind %d", p.id, m.Kind)
}

// init builds the partition's layout and starts from the uniform vector.
func (p *partition) init() {
	p.l = newLayout(p.g, p.bounds, p.id)
	n := p.l.hi - p.l.lo
	p.x, p.next, p.share = make([]float64, n), make([]float64, n), p.allShares[p.l.lo:p.l.hi:p.l.hi]
	x0 := 1 / float64(p.g.NumNodes())
	for i := range p.x {
		p.x[i] = x0
	}
	p.recv = make([][]float64, len(p.parts))
}

// take records the share of partition from.
func (p *partition) take(from int, share []float64) {
	p.recv[from] = share
	p.got++
}

// tryFinish completes the iteration once the iterate command and every
// needed share are in, and returns the report; otherwise it returns an
// empty reply.
func (p *partition) tryFinish() coordMsg {
	if !p.started || p.got < p.expect {
		return coordMsg{}
	}
	delta := p.step()
	clear(p.recv)
	p.got, p.started = 0, false
	p.done++
	return coordMsg{Kind: coordReport, Part: p.id, Iter: p.done, Delta: delta, Dangling: p.danglingMass()}
}

// step computes x^k over the partition's range from the shares and the
// dangling mass of x^{k−1}, exactly as networkx does,
//
//	x = alpha * (x @ A + sum(x[is_dangling]) * dangling_weights) + (1 - alpha) * p
//
// with uniform p and dangling weights, and returns the L1 change.
func (p *partition) step() float64 {
	y, x := p.next, p.x
	pN := 1 / float64(p.g.NumNodes())
	alpha := p.alpha
	dw := p.dsum * pN
	tele := (1 - alpha) * pN
	delta := 0.0
	// Each node's in-edges are added in increasing source order, whatever
	// the number of partitions: the rows of the partition's range are one
	// contiguous run of inSrc, gathered from the shared share vector.
	share, inSrc := p.allShares, p.g.inSrc
	off := p.g.inOff[p.l.lo : p.l.hi+1]
	for v := range y {
		acc := 0.0
		for _, u := range inSrc[off[v]:off[v+1]] {
			acc += share[u]
		}
		xv := alpha*(acc+dw) + tele
		delta += math.Abs(xv - x[v])
		y[v] = xv
	}
	p.x, p.next = y, p.x
	return delta
}

// danglingMass is the rank held by the partition's dangling nodes.
func (p *partition) danglingMass() float64 {
	m := 0.0
	for _, i := range p.l.dangling {
		m += p.x[i]
	}
	return m
}

// coordinator is the state of the coordinator kernel.
type coordinator struct {
	*problem
	iter        int // the iteration whose reports are awaited
	got         int
	delta, dang []float64 // this iteration's reports by partition
	lastDelta   float64
	converged   bool
	ranks       []float64
	collected   int
	iterStart   time.Time // when iterate 1 was sent
}

// newCoordinator returns the coordinator's handler.
func newCoordinator(pr *problem) actors.Handler[coordMsg, update] {
	c := &coordinator{problem: pr, delta: make([]float64, len(pr.parts)), dang: make([]float64, len(pr.parts))}
	return c.handle
}

// handle is the coordinator kernel's handler.
func (c *coordinator) handle(_ context.Context, m coordMsg) (update, error) {
	if c.ctx.Err() != nil {
		return update{}, nil // the Run is over: send nothing more
	}
	switch m.Kind {
	case coordNone:
		return update{}, nil
	case coordStart:
		return update{}, c.broadcast(partMsg{Kind: partInit})
	case coordReport:
		return c.report(m)
	case coordRanks:
		lo := c.bounds[m.Part]
		if len(m.Ranks) != c.bounds[m.Part+1]-lo {
			return update{}, fmt.Errorf("coordinator: partition %d sent %d ranks, want %d", m.Part, len(m.Ranks), c.bounds[m.Part+1]-lo)
		}
		if c.ranks == nil {
			c.ranks = make([]float64, c.g.NumNodes())
		}
		copy(c.ranks[lo:], m.Ranks)
		if c.collected++; c.collected < len(c.parts) {
			return update{}, nil
		}
		return update{Kind: updateDone, Iter: c.iter, Delta: c.lastDelta, Converged: c.converged, Ranks: c.ranks,
			Iterating: time.Since(c.iterStart)}, nil
	}
	return update{}, fmt.Errorf("coordinator: unknown message kind %d", m.Kind)
}

// report takes one partition's report; with all of them it decides whether
// to go on.
func (c *coordinator) report(m coordMsg) (update, error) {
	if m.Iter != c.iter {
		return update{}, fmt.Errorf("coordinator: report of partition %d for iteration %d during iteration %d", m.Part, m.Iter, c.iter)
	}
	c.delta[m.Part], c.dang[m.Part] = m.Delta, m.Dangling
	if c.got++; c.got < len(c.parts) {
		return update{}, nil
	}
	c.got = 0
	dangling, delta := 0.0, 0.0
	for i := range c.parts {
		dangling += c.dang[i]
		delta += c.delta[i]
	}
	k := c.iter
	if k == 0 { // x⁰ is set up everywhere
		c.iter = 1
		c.iterStart = time.Now()
		return update{}, c.broadcast(partMsg{Kind: partIterate, Iter: 1, Dangling: dangling})
	}
	c.lastDelta = delta
	var err error
	switch {
	case delta < c.limit:
		c.converged = true
		err = c.broadcast(partMsg{Kind: partCollect})
	case k >= c.maxIter:
		err = c.broadcast(partMsg{Kind: partCollect})
	default:
		c.iter++
		err = c.broadcast(partMsg{Kind: partIterate, Iter: c.iter, Dangling: dangling})
	}
	return update{Kind: updateProgress, Iter: k, Delta: delta}, err
}

// broadcast sends m to every partition.
func (c *coordinator) broadcast(m partMsg) error {
	for i, k := range c.parts {
		if _, err := k.Send(c.ctx, m); err != nil {
			return fmt.Errorf("coordinator: send to partition %d: %w", i, err)
		}
	}
	return nil
}
