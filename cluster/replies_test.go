package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/internal/testutil/testproc"
	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
)

// newLocalMember returns a member on an actor system without a remote:
// enough for its reply process and dead-letter answers, which do not care
// whether a message crossed the wire.
func newLocalMember(t *testing.T) *Member {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return quiet }))
	m, _, err := newMember(sys, "replies-test", nil, memberConfig{logger: quiet, requestTimeout: DefaultRequestTimeout, maxPayload: messages.MaxPayloadSize})
	if err != nil {
		sys.Shutdown()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(context.Background()); err != nil {
			t.Error(err)
		}
		sys.Shutdown()
	})
	return m
}

// verifyNoLeaks checks, after the test's other cleanups (the member's
// Close among them), that it left no goroutines behind.
func verifyNoLeaks(t *testing.T) {
	t.Helper()
	opts := append(testproc.ProtoActorThrottles(), goleak.IgnoreCurrent())
	t.Cleanup(func() { goleak.VerifyNone(t, opts...) })
}

// recorder is a Proto.Actor process that records what it is sent (from
// the sender's goroutine: it has no mailbox).
type recorder struct {
	mu  sync.Mutex
	got []any
}

func (r *recorder) SendUserMessage(_ *actor.PID, m any) {
	r.mu.Lock()
	r.got = append(r.got, actor.UnwrapEnvelopeMessage(m))
	r.mu.Unlock()
}
func (r *recorder) SendSystemMessage(*actor.PID, any) {}
func (r *recorder) Stop(*actor.PID)                   {}

func (r *recorder) messages() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]any(nil), r.got...)
}

func TestRepliesGoToTheirRequestOnce(t *testing.T) {
	r := newReplies()
	w1, ok1 := r.wait(1)
	w2, ok2 := r.wait(2)
	if !ok1 || !ok2 {
		t.Fatal("wait refused a new id")
	}
	r.SendUserMessage(nil, &wire.WireEnvelope{CorrelationId: 2, Id: 20})
	r.SendUserMessage(nil, &wire.WireError{MessageId: 1, Kind: "execution"})
	// A second reply to a request, a reply to no request and a message
	// that is no reply are dropped.
	r.SendUserMessage(nil, &wire.WireEnvelope{CorrelationId: 2, Id: 21})
	r.SendUserMessage(nil, &wire.WireEnvelope{CorrelationId: 99})
	r.SendUserMessage(nil, "hello")
	if got := (<-w2.ch).(*wire.WireEnvelope); got.Id != 20 {
		t.Errorf("request 2 got reply %d, want 20", got.Id)
	}
	if got := (<-w1.ch).(*wire.WireError); got.Kind != "execution" {
		t.Errorf("request 1 got %+v", got)
	}
	select {
	case extra := <-w2.ch:
		t.Errorf("request 2 got a second reply %v", extra)
	default:
	}
	if n := r.waiting(); n != 0 {
		t.Errorf("%d requests still wait after their replies", n)
	}
	r.done(1, w1)
	r.done(2, w2)
}

func TestRepliesRefuseADuplicateIDAndDropLateReplies(t *testing.T) {
	r := newReplies()
	w, ok := r.wait(7)
	if !ok {
		t.Fatal("wait(7) refused")
	}
	if _, dup := r.wait(7); dup {
		t.Fatal("a second request of id 7 was let in")
	}
	r.done(7, w)
	// The request gave up: its reply comes too late and goes nowhere, and
	// the id is free again.
	r.SendUserMessage(nil, &wire.WireEnvelope{CorrelationId: 7})
	w, ok = r.wait(7)
	if !ok {
		t.Fatal("id 7 not free after done")
	}
	select {
	case stale := <-w.ch:
		t.Fatalf("a new request of id 7 found the old one's reply %v", stale)
	default:
	}
	r.done(7, w)
	if n := r.waiting(); n != 0 {
		t.Errorf("%d requests wait", n)
	}
}

func TestRepliesConcurrentRequests(t *testing.T) {
	r := newReplies()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := uint64(g*1000 + i + 1)
				w, ok := r.wait(id)
				if !ok {
					errs <- fmt.Errorf("id %d refused", id)
					return
				}
				if i%3 == 0 { // some give up before their reply
					r.done(id, w)
					r.SendUserMessage(nil, &wire.WireEnvelope{CorrelationId: id})
					continue
				}
				go r.SendUserMessage(nil, &wire.WireEnvelope{CorrelationId: id, Id: id + 1})
				if got := (<-w.ch).(*wire.WireEnvelope); got.CorrelationId != id {
					errs <- fmt.Errorf("request %d got the reply to %d", id, got.CorrelationId)
				}
				r.done(id, w)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := r.waiting(); n != 0 {
		t.Errorf("%d requests wait", n)
	}
}

func TestRequestReplyGetsItsAnswerWithoutSender(t *testing.T) {
	verifyNoLeaks(t)
	m := newLocalMember(t)
	var senders sync.Map // request id → whether it came with a Proto.Actor sender
	echo := m.sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		w, ok := c.Message().(*wire.WireEnvelope)
		if !ok {
			return
		}
		senders.Store(w.Id, c.Sender() != nil)
		if to := m.replyPID(w.GetReplyTo()); to != nil {
			c.Send(to, &wire.WireEnvelope{CorrelationId: w.Id, Id: w.Id + 1})
		}
	}))
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &wire.WireEnvelope{Id: messages.NextID()}
			res, err := m.requestReply(context.Background(), echo, w, nil)
			if err != nil {
				t.Error(err)
				return
			}
			if r, ok := res.(*wire.WireEnvelope); !ok || r.CorrelationId != w.Id {
				t.Errorf("request %d got %v", w.Id, res)
			}
			if w.ReplyTo != m.replyAddress() {
				t.Errorf("request's ReplyTo = %q, want %q", w.ReplyTo, m.replyAddress())
			}
			if s, _ := senders.Load(w.Id); s != false {
				t.Errorf("request %d came with a Proto.Actor sender", w.Id)
			}
		}()
	}
	wg.Wait()
	if n := m.replies.waiting(); n != 0 {
		t.Errorf("%d requests wait", n)
	}
}

func TestRequestToAGoneProcessIsADeadLetter(t *testing.T) {
	verifyNoLeaks(t)
	m := newLocalMember(t)
	gone := actor.NewPID(m.sys.Address(), "no-such-activation")
	_, err := m.requestReply(context.Background(), gone, &wire.WireEnvelope{Id: messages.NextID()}, nil)
	if !errors.Is(err, actor.ErrDeadLetter) {
		t.Fatalf("request to a gone process: %v, want actor.ErrDeadLetter", err)
	}
	if n := m.replies.waiting(); n != 0 {
		t.Errorf("%d requests wait", n)
	}
}

func TestRequestReplyEndsWithItsContext(t *testing.T) {
	verifyNoLeaks(t)
	m := newLocalMember(t)
	silent := &recorder{}
	pid, ok := m.sys.ProcessRegistry.Add(silent, "silent")
	if !ok {
		t.Fatal("registering the silent process")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.requestReply(ctx, pid, &wire.WireEnvelope{Id: messages.NextID()}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled request: %v", err)
	}
	expired := make(chan time.Time, 1)
	expired <- time.Now()
	if _, err := m.requestReply(context.Background(), pid, &wire.WireEnvelope{Id: messages.NextID()}, expired); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("expired request: %v", err)
	}
	if n := m.replies.waiting(); n != 0 {
		t.Errorf("%d requests wait after giving up", n)
	}
	if got := len(silent.messages()); got != 2 {
		t.Errorf("the target got %d requests, want 2", got)
	}
}

func TestDeadLettersAnswerOnlyRequests(t *testing.T) {
	verifyNoLeaks(t)
	m := newLocalMember(t)
	rec := &recorder{}
	if _, ok := m.sys.ProcessRegistry.Add(rec, "rec"); !ok {
		t.Fatal("registering the recorder")
	}
	to := m.sys.Address() + "/rec"
	gone := actor.NewPID(m.sys.Address(), "gone")
	// A reply and a one-way message that become dead letters are not
	// answered; a request is, once, with a WireError of kind gone and the
	// request's id. The recorder has no mailbox: what it is sent is
	// recorded before Send returns.
	m.sys.Root.Send(gone, &wire.WireEnvelope{Id: 1, CorrelationId: 5, ReplyTo: to})
	m.sys.Root.Send(gone, &wire.WireEnvelope{Id: 2})
	m.sys.Root.Send(gone, &wire.WireEnvelope{Id: 3, ReplyTo: "no-slash"})
	m.sys.Root.Send(gone, &wire.WireEnvelope{Id: 4, ReplyTo: to})
	got := rec.messages()
	if len(got) != 1 {
		t.Fatalf("recorded %d answers, want 1: %v", len(got), got)
	}
	we, ok := got[0].(*wire.WireError)
	if !ok || we.GetKind() != wireKindGone || we.GetMessageId() != 4 {
		t.Fatalf("answer %v, want a WireError of kind %q for message 4", got[0], wireKindGone)
	}
}

func TestReplyPIDParsesAndBoundsItsCache(t *testing.T) {
	m := newLocalMember(t)
	for _, bad := range []string{"no-slash", "/id", "addr/", ""} {
		if p := m.replyPID(bad); p != nil {
			t.Errorf("replyPID(%q) = %v, want nil", bad, p)
		}
	}
	p := m.replyPID("10.0.0.1:8090/" + replyProcessID)
	if p == nil || p.Address != "10.0.0.1:8090" || p.Id != replyProcessID {
		t.Fatalf("replyPID = %v", p)
	}
	if again := m.replyPID("10.0.0.1:8090/" + replyProcessID); again != p {
		t.Error("a known ReplyTo made a new PID")
	}
	// A requester naming ever new reply targets does not grow the cache
	// without bound.
	for i := range 2 * maxReplyPIDs {
		if p := m.replyPID(fmt.Sprintf("10.0.0.2:%d/x", i)); p == nil {
			t.Fatal("valid ReplyTo refused")
		}
	}
	if n := m.replyPIDCount.Load(); n > maxReplyPIDs {
		t.Errorf("cache holds %d PIDs, bound %d", n, maxReplyPIDs)
	}
}

func TestRetriedRequestSendsACopyWithItsOwnID(t *testing.T) {
	verifyNoLeaks(t)
	m := newLocalMember(t)
	rec := &recorder{}
	pid, ok := m.sys.ProcessRegistry.Add(rec, "retried")
	if !ok {
		t.Fatal("registering the recorder")
	}
	expired := func() <-chan time.Time {
		c := make(chan time.Time, 1)
		c <- time.Now()
		return c
	}
	w := &wire.WireEnvelope{Id: messages.NextID(), TypeId: 9, Payload: []byte{1, 2}, Cluster: "c"}
	for range 2 {
		if _, err := m.requestReply(context.Background(), pid, w, expired()); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("attempt: %v", err)
		}
	}
	got := rec.messages()
	if len(got) != 2 {
		t.Fatalf("the target got %d envelopes, want 2", len(got))
	}
	first, second := got[0].(*wire.WireEnvelope), got[1].(*wire.WireEnvelope)
	if first != w || second == w {
		t.Fatal("the second attempt did not send an envelope of its own")
	}
	if second.Id == first.Id || second.TypeId != 9 || string(second.Payload) != "\x01\x02" || second.Cluster != "c" || second.ReplyTo != w.ReplyTo {
		t.Fatalf("second attempt %v, first %v", second, first)
	}
}
