package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
)

func TestInboxHandsBackWhatTheGrainDidNotHandle(t *testing.T) {
	r := newInboxRig(t)
	// A grain that only records (it handles nothing): every request the
	// inbox gives it stays queued until it says it handled it.
	rec := &recorder{}
	grain, ok := r.sys.ProcessRegistry.Add(rec, "queued-grain")
	if !ok {
		t.Fatal("registering the recording grain")
	}
	in := newInbox(r.sys)
	pid, err := in.register(grain, "queued-inbox")
	if err != nil {
		t.Fatal(err)
	}
	sender := actor.NewPID("somewhere:1", "requester")
	w1, w2, w3 := &wire.WireEnvelope{Id: 1}, &wire.WireEnvelope{Id: 2}, &wire.WireEnvelope{Id: 3}
	r.sys.Root.Send(pid, w1)
	r.sys.Root.RequestWithCustomSender(pid, w2, sender)
	r.sys.Root.RequestWithCustomSender(pid, w3, sender)
	if got := len(rec.messages()); got != 3 {
		t.Fatalf("the grain got %d requests, want 3 (the inbox is not open)", got)
	}
	in.handled(w2) // out of order: senders race each other
	if d := in.idle(time.Hour); d == 0 {
		t.Error("idle with requests queued at the grain")
	}
	left := in.close()
	if len(left) != 2 || left[0].w != w1 || left[0].sender != nil || left[1].w != w3 || left[1].sender == nil || left[1].sender.Id != "requester" {
		t.Fatalf("close handed back %+v, want requests 1 (no sender) and 3 (its sender)", left)
	}
	if again := in.close(); again != nil {
		t.Fatalf("a second close handed back %+v", again)
	}
}

// gated is the message of TestStoppingGrainAnswersQueuedRequests' kind: a
// registered type, so that its activation launches a kernel (and its
// handler's factory holds it).
type gated struct{ N int }

func init() { messages.MustRegister[gated]("ringactor.cluster.test.Gated") }

// A request queued at a grain's mailbox when the grain stops is answered
// (moved: not handled, look again) instead of dropped with the mailbox.
func TestStoppingGrainAnswersQueuedRequests(t *testing.T) {
	verifyNoLeaks(t)
	m := newLocalMember(t)
	entered, gate := make(chan struct{}), make(chan struct{})
	k := NewKind("gated", func() actors.Handler[gated, gated] {
		close(entered)
		<-gate // holds the grain in its activation
		return func(_ context.Context, g gated) (gated, error) { return g, nil }
	})
	in := newInbox(m.sys)
	grain := m.sys.Root.Spawn(actor.PropsFromProducer(k.producer(m, "id", nil, in)))
	inPID, err := in.register(grain, grain.Id+"$in")
	if err != nil {
		t.Fatal(err)
	}
	// While the grain activates, it is told to stop, then requests come
	// in: they queue at its mailbox behind the stop.
	<-entered
	m.sys.Root.Send(grain, passivateGrain{})
	const n = 8
	waiters := make([]*replyWaiter, n)
	ids := make([]uint64, n)
	for i := range waiters {
		ids[i] = messages.NextID()
		var ok bool
		if waiters[i], ok = m.replies.wait(ids[i]); !ok {
			t.Fatal("wait refused")
		}
		m.sys.Root.Send(inPID, &wire.WireEnvelope{Id: ids[i], ReplyTo: m.replyAddress()})
	}
	close(gate)
	bound := time.NewTimer(10 * time.Second)
	defer bound.Stop()
	for i, wt := range waiters {
		var got any
		select {
		case got = <-wt.ch:
		case <-bound.C:
			t.Fatalf("request %d got no answer: lost with the grain's mailbox", i)
		}
		we, ok := got.(*wire.WireError)
		if !ok || we.GetKind() != wireKindMoved || we.GetMessageId() != ids[i] {
			t.Errorf("request %d: answer %v, want a WireError of kind %q", i, got, wireKindMoved)
		}
		m.replies.done(ids[i], wt)
	}
}
