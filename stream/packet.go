package stream

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/ringactor/ringactor/messages"
)

// control says what a packet carries besides its elements.
type control uint8

const (
	ctlNone  control = iota
	ctlEOS           // the sender has ended: no more elements or watermarks from it
	ctlTimer         // a processing-time timer of the receiving instance is due
)

// mark is a watermark that takes effect before element pos of a packet
// (pos = len(items): after the last one).
type mark struct {
	pos int32
	wm  int64
}

// packet is the ring message between stage instances: a run of elements
// from one sender, the watermarks between them, and a control item after
// them. Packets are how emitted elements travel: each is one slot of the
// receiver's ring kernel, so elements go in bulk while the API stays one
// element at a time.
type packet[T any] struct {
	from  int32 // the sender's index among the receiver's inputs; -1 for the receiver itself
	items []T
	marks []mark
	ctl   control
	buf   *[]T // the pooled backing array of items, recycled by the receiver
}

// ack is a stage instance's reply to a packet: it has been handled (each
// element's own outcome is accounted for by the instance).
type ack struct{}

var (
	ackOnce sync.Once
	ackErr  error
)

// registerAck registers the reply type once.
func registerAck() error {
	ackOnce.Do(func() { _, ackErr = messages.Register[ack]("ringactor.stream.ack") })
	return ackErr
}

// registerPacket gives packet[T] a stable type id named after T; it is
// idempotent.
func registerPacket[T any]() error {
	if err := registerAck(); err != nil {
		return err
	}
	if _, err := messages.IDOf[packet[T]](); err == nil {
		return nil
	}
	_, err := messages.Register[packet[T]]("ringactor.stream.packet[" + typeName(reflect.TypeFor[T]()) + "]")
	if err != nil {
		return fmt.Errorf("%w: register the packet of %v: %w", ErrInvalidGraph, reflect.TypeFor[T](), err)
	}
	return nil
}

// typeName is a type's name qualified by its package path where it has one.
func typeName(t reflect.Type) string {
	if t.Name() != "" && t.PkgPath() != "" {
		return t.PkgPath() + "." + t.Name()
	}
	return t.String()
}

// bufPool recycles the backing arrays of packets of one element type and
// batch size. Graphs share them (poolOf: one per element type and batch
// size in the process), so that a graph started after another — a job run
// again — finds the arrays the earlier one recycled instead of allocating
// its own, and an array a stage passes on whole (MapInPlace) comes back to
// the pool its sender takes from.
type bufPool[T any] struct {
	size int
	// want is the capacity a new array gets: the longest packet put back
	// so far (at least minCap, at most size), so that the arrays of a
	// sender that packs a few elements a packet (a source's Send) stay
	// small, and those of one that fills its packets are made full size
	// after the first.
	want atomic.Int64
	p    sync.Pool
}

// minCap is the capacity of a pool's first arrays.
const minCap = 16

func (b *bufPool[T]) get() *[]T {
	if s, ok := b.p.Get().(*[]T); ok {
		return s
	}
	s := make([]T, 0, max(min(b.size, minCap), int(b.want.Load())))
	return &s
}

// put recycles s, cleared: every array in the pool holds zero values from
// its start to its capacity (a new one does too), so that Emitter.Next
// hands out a slot without zeroing it on the sender's loop — the busiest
// stage is usually the one that writes its outputs in place, while the
// array comes back here from its last receiver — and a pooled array holds
// on to nothing its old elements referred to.
func (b *bufPool[T]) put(s *[]T) {
	if s == nil {
		return
	}
	clear(*s)
	for n := int64(min(len(*s), b.size)); ; {
		w := b.want.Load()
		if n <= w || b.want.CompareAndSwap(w, n) {
			break
		}
	}
	*s = (*s)[:0]
	b.p.Put(s)
}

// pools are the process's packet pools, by element type and batch size.
var pools sync.Map // poolKey → *bufPool[T]

type poolKey struct {
	t    reflect.Type
	size int
}

// poolOf is the packet pool of element type T for g's batch size.
func poolOf[T any](g *Graph) *bufPool[T] {
	g.mu.Lock()
	defer g.mu.Unlock()
	t := reflect.TypeFor[T]()
	if p, ok := g.pools[t]; ok {
		return p.(*bufPool[T])
	}
	k := poolKey{t: t, size: g.cfg.batch}
	p, ok := pools.Load(k)
	if !ok {
		p, _ = pools.LoadOrStore(k, &bufPool[T]{size: g.cfg.batch})
	}
	if g.pools == nil {
		g.pools = map[reflect.Type]any{}
	}
	g.pools[t] = p
	return p.(*bufPool[T])
}
