package cluster

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/internal/wire"
)

// inboxRig is an inbox in front of a stand-in grain actor that records the
// requests it is given and tells the inbox it is done with each (as
// grain.handle does); requests served directly are recorded too.
type inboxRig struct {
	sys    *actor.ActorSystem
	in     *inbox
	pid    *actor.PID
	mu     sync.Mutex
	order  []uint64
	direct int
	done   int // requests the inbox has been told about (handled or answered)
	seen   chan struct{}
}

func newInboxRig(t *testing.T) *inboxRig {
	t.Helper()
	quiet := actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.DiscardHandler) })
	r := &inboxRig{sys: actor.NewActorSystem(quiet), seen: make(chan struct{}, 1024)}
	t.Cleanup(r.sys.Shutdown)
	r.in = newInbox(r.sys)
	grain := r.sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if w, ok := c.Message().(*wire.WireEnvelope); ok {
			r.record(w.Id, false)
			r.in.handled(w)
			r.finished()
		}
	}))
	pid, err := r.in.register(grain, "inbox-test")
	if err != nil {
		t.Fatal(err)
	}
	r.pid = pid
	return r
}

func (r *inboxRig) record(id uint64, direct bool) {
	r.mu.Lock()
	r.order = append(r.order, id)
	if direct {
		r.direct++
	}
	r.mu.Unlock()
}

// finished counts a request whose end the inbox has been told about: only
// then may a test count on the inbox's state after it.
func (r *inboxRig) finished() {
	r.mu.Lock()
	r.done++
	r.mu.Unlock()
	r.seen <- struct{}{}
}

// serve is what the grain gives an open inbox: here it records the request
// and answers it at once.
func (r *inboxRig) serve(w *wire.WireEnvelope, _ *actor.PID) {
	r.record(w.Id, true)
	r.in.answered()
	r.finished()
}

func (r *inboxRig) send(ids ...uint64) {
	for _, id := range ids {
		r.sys.Root.Send(r.pid, &wire.WireEnvelope{Id: id})
	}
}

// wait waits until n requests have been recorded in all and the inbox told
// about each one's end.
func (r *inboxRig) wait(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		got := r.done
		r.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-r.seen:
		case <-timeout:
			t.Fatalf("%d of %d requests arrived", got, n)
		}
	}
}

func (r *inboxRig) snapshot() ([]uint64, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.order), r.direct
}

func seq(from, to uint64) []uint64 {
	var s []uint64
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

// TestInboxKeepsOrder sends requests from one goroutine while the inbox
// opens: those that went to the grain first are served before any that
// follow them, and once the grain has them all, requests go directly.
func TestInboxKeepsOrder(t *testing.T) {
	r := newInboxRig(t)
	r.send(seq(1, 50)...) // not open: all go to the grain
	r.in.open(r.serve, 1024, false)
	r.send(seq(51, 200)...) // behind the grain's until it has them all
	r.wait(t, 200)
	r.send(seq(201, 210)...) // nothing queued at the grain: directly
	r.wait(t, 210)
	order, direct := r.snapshot()
	if !slices.Equal(order, seq(1, 210)) {
		t.Fatalf("order: %v", order)
	}
	if direct < 10 {
		t.Fatalf("%d requests went directly, want at least the last 10", direct)
	}
}

// TestInboxLimits checks that the inbox admits directly only below half the
// ring, and not at all after the grain admitted at or above that until no
// request is outstanding.
func TestInboxLimits(t *testing.T) {
	r := newInboxRig(t)
	r.in.open(r.serve, 64, false) // too small a ring: never directly
	r.send(1, 2, 3)
	r.wait(t, 3)
	if _, direct := r.snapshot(); direct != 0 {
		t.Fatalf("%d requests went directly to a 64-message ring", direct)
	}

	r = newInboxRig(t)
	r.in.open(r.serve, 256, false) // limit 128
	for range 129 {
		r.in.admitting() // the grain admits 129: the last at the limit
	}
	for range 128 {
		r.in.answered()
	}
	r.send(1) // one still outstanding and the inbox tainted: to the grain
	r.wait(t, 1)
	r.in.answered()
	r.send(2) // nothing outstanding: directly
	r.wait(t, 2)
	if order, direct := r.snapshot(); direct != 1 || !slices.Equal(order, []uint64{1, 2}) {
		t.Fatalf("order %v, %d direct; want [1 2], 1 direct", order, direct)
	}
}

// TestInboxClosedDeadLetters checks that a closed inbox answers a request
// with a dead letter (its sender looks the identity up again), also through
// a reference to the process cached before it closed.
func TestInboxClosedDeadLetters(t *testing.T) {
	r := newInboxRig(t)
	r.in.open(r.serve, 1024, false)
	r.in.close()
	r.in.close() // idempotent
	for _, via := range []string{"cached process", "registry"} {
		f := actor.NewFuture(r.sys, 5*time.Second)
		if via == "cached process" {
			r.in.SendUserMessage(r.pid, &actor.MessageEnvelope{Message: &wire.WireEnvelope{Id: 1}, Sender: f.PID()})
		} else {
			r.sys.Root.RequestWithCustomSender(r.pid, &wire.WireEnvelope{Id: 1}, f.PID())
		}
		if _, err := f.Result(); !errors.Is(err, actor.ErrDeadLetter) {
			t.Fatalf("%s: got %v, want a dead letter", via, err)
		}
	}
	if order, _ := r.snapshot(); len(order) != 0 {
		t.Fatalf("a closed inbox served %v", order)
	}
	if !r.in.isClosed() {
		t.Fatal("not closed")
	}
	r.in.open(r.serve, 1024, false) // too late: stays closed
	if !r.in.isClosed() {
		t.Fatal("reopened")
	}
}

// TestInboxIdle checks the idle time the grain's receive timeout asks for.
func TestInboxIdle(t *testing.T) {
	r := newInboxRig(t)
	r.in.open(r.serve, 1024, true)
	const d = time.Hour
	if left := r.in.idle(d); left <= 0 || left > d {
		t.Fatalf("just opened: %v", left)
	}
	r.in.admitting()
	if left := r.in.idle(time.Nanosecond); left != time.Nanosecond {
		t.Fatalf("a request outstanding: %v, want the whole timeout", left)
	}
	r.in.answered()
	if left := r.in.idle(time.Nanosecond); left != 0 {
		t.Fatalf("nothing for longer than the timeout: %v", left)
	}
}
