package supervision_test

import (
	"errors"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/supervision"
)

const strategyTimeout = 5 * time.Second

type escalation struct {
	reason, message any
}

// fakeSupervisor records every call on a channel.
type fakeSupervisor struct {
	restarted, stopped, resumed chan []*actor.PID
	escalated                   chan escalation
}

func newFakeSupervisor() *fakeSupervisor {
	return &fakeSupervisor{
		restarted: make(chan []*actor.PID, 16),
		stopped:   make(chan []*actor.PID, 16),
		resumed:   make(chan []*actor.PID, 16),
		escalated: make(chan escalation, 16),
	}
}

var _ actor.Supervisor = (*fakeSupervisor)(nil)

func (f *fakeSupervisor) Children() []*actor.PID { return nil }
func (f *fakeSupervisor) EscalateFailure(reason, message any) {
	f.escalated <- escalation{reason, message}
}
func (f *fakeSupervisor) RestartChildren(pids ...*actor.PID) { f.restarted <- pids }
func (f *fakeSupervisor) StopChildren(pids ...*actor.PID)    { f.stopped <- pids }
func (f *fakeSupervisor) ResumeChildren(pids ...*actor.PID)  { f.resumed <- pids }

// noOtherCalls fails if a call other than except was recorded.
func (f *fakeSupervisor) noOtherCalls(t *testing.T, except string) {
	t.Helper()
	check := func(name string, ch chan []*actor.PID) {
		if name == except {
			return
		}
		select {
		case p := <-ch:
			t.Errorf("unexpected %s(%v)", name, p)
		default:
		}
	}
	check("RestartChildren", f.restarted)
	check("StopChildren", f.stopped)
	check("ResumeChildren", f.resumed)
	if except != "EscalateFailure" {
		select {
		case e := <-f.escalated:
			t.Errorf("unexpected EscalateFailure(%v, %v)", e.reason, e.message)
		default:
		}
	}
}

func newSystem(t *testing.T) *actor.ActorSystem {
	t.Helper()
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return quietLogger() }))
	t.Cleanup(sys.Shutdown)
	return sys
}

// subscribeEvents delivers every SupervisorEvent of sys on the returned channel.
func subscribeEvents(t *testing.T, sys *actor.ActorSystem) <-chan *actor.SupervisorEvent {
	t.Helper()
	ch := make(chan *actor.SupervisorEvent, 64)
	sub := sys.EventStream.Subscribe(func(evt any) {
		if e, ok := evt.(*actor.SupervisorEvent); ok {
			ch <- e
		}
	})
	t.Cleanup(func() { sys.EventStream.Unsubscribe(sub) })
	return ch
}

func recvPIDs(t *testing.T, ch <-chan []*actor.PID, what string) []*actor.PID {
	t.Helper()
	select {
	case p := <-ch:
		return p
	case <-time.After(strategyTimeout):
		t.Fatalf("no %s within %v", what, strategyTimeout)
		return nil
	}
}

func recvEvent(t *testing.T, ch <-chan *actor.SupervisorEvent) *actor.SupervisorEvent {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(strategyTimeout):
		t.Fatalf("no SupervisorEvent within %v", strategyTimeout)
		return nil
	}
}

func onlyPID(t *testing.T, got []*actor.PID, want *actor.PID) {
	t.Helper()
	if len(got) != 1 || got[0] != want {
		t.Errorf("children = %v, want [%v]", got, want)
	}
}

func checkEvent(t *testing.T, e *actor.SupervisorEvent, child *actor.PID, reason any, d supervision.Directive) {
	t.Helper()
	if e.Child != child || e.Reason != reason || e.Directive != d {
		t.Errorf("SupervisorEvent = {%v %v %v}, want {%v %v %v}", e.Child, e.Reason, e.Directive, child, reason, d)
	}
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestNewStrategyDefaultsAndOptions(t *testing.T) {
	s := supervision.NewStrategy()
	if s.Decider == nil || s.Backoff != supervision.DefaultBackoff || s.Window != 10*time.Second || s.MaxRestarts != 0 || s.Logger != nil {
		t.Errorf("NewStrategy() = %+v", s)
	}
	if s.Decider(&gpu.ExecutionError{Err: errors.New("x")}) != supervision.Resume {
		t.Error("default decider is not DefaultDecider")
	}
	b := supervision.Backoff{Initial: time.Second}
	l := quietLogger()
	s = supervision.NewStrategy(
		supervision.WithDecider(supervision.RestartOnError),
		supervision.WithBackoff(b),
		supervision.WithMaxRestarts(5, time.Minute),
		supervision.WithLogger(l),
	)
	if s.Backoff != b || s.MaxRestarts != 5 || s.Window != time.Minute || s.Logger != l {
		t.Errorf("NewStrategy(opts) = %+v", s)
	}
	if s.Decider(&gpu.ExecutionError{Err: errors.New("x")}) != supervision.Restart {
		t.Error("WithDecider not applied")
	}
}

func TestStrategyResume(t *testing.T) {
	sys := newSystem(t)
	events := subscribeEvents(t, sys)
	sup := newFakeSupervisor()
	child := sys.NewLocalPID("kernel-1")
	rs := actor.NewRestartStatistics()
	reason := &gpu.ExecutionError{Kernel: "k", Err: errors.New("bad input")}

	s := supervision.NewStrategy(supervision.WithLogger(quietLogger()))
	s.HandleFailure(sys, sup, child, rs, reason, "msg")

	onlyPID(t, recvPIDs(t, sup.resumed, "ResumeChildren"), child)
	checkEvent(t, recvEvent(t, events), child, reason, supervision.Resume)
	sup.noOtherCalls(t, "ResumeChildren")
	if rs.FailureCount() != 0 {
		t.Errorf("Resume counted a failure: %d", rs.FailureCount())
	}
}

func TestStrategyRestartAfterBackoff(t *testing.T) {
	sys := newSystem(t)
	events := subscribeEvents(t, sys)
	sup := newFakeSupervisor()
	child := sys.NewLocalPID("kernel-2")
	rs := actor.NewRestartStatistics()
	reason := &gpu.ExecutionError{Kernel: "k", Panic: "boom"}
	const delay = 30 * time.Millisecond

	s := supervision.NewStrategy(
		supervision.WithBackoff(supervision.Backoff{Initial: delay, Max: time.Second, Multiplier: 2}),
		supervision.WithLogger(quietLogger()),
	)
	start := time.Now()
	s.HandleFailure(sys, sup, child, rs, reason, "msg")

	onlyPID(t, recvPIDs(t, sup.restarted, "RestartChildren"), child)
	if el := time.Since(start); el < delay {
		t.Errorf("RestartChildren after %v, want ≥ backoff %v", el, delay)
	}
	checkEvent(t, recvEvent(t, events), child, reason, supervision.Restart)
	sup.noOtherCalls(t, "RestartChildren")
	if rs.FailureCount() != 1 {
		t.Errorf("FailureCount = %d, want 1", rs.FailureCount())
	}
}

func TestStrategyStopsAfterMaxRestartsWithinWindow(t *testing.T) {
	sys := newSystem(t)
	events := subscribeEvents(t, sys)
	sup := newFakeSupervisor()
	child := sys.NewLocalPID("kernel-3")
	rs := actor.NewRestartStatistics()
	reason := errors.New("crash")

	s := supervision.NewStrategy(
		supervision.WithDecider(supervision.RestartOnError),
		supervision.WithBackoff(supervision.Backoff{Initial: time.Microsecond, Max: time.Millisecond, Multiplier: 2}),
		supervision.WithMaxRestarts(2, time.Hour),
		supervision.WithLogger(quietLogger()),
	)
	for i := range 2 {
		s.HandleFailure(sys, sup, child, rs, reason, i)
		onlyPID(t, recvPIDs(t, sup.restarted, "RestartChildren"), child)
		checkEvent(t, recvEvent(t, events), child, reason, supervision.Restart)
	}
	s.HandleFailure(sys, sup, child, rs, reason, 2)
	onlyPID(t, recvPIDs(t, sup.stopped, "StopChildren"), child)
	checkEvent(t, recvEvent(t, events), child, reason, supervision.Stop)
	sup.noOtherCalls(t, "StopChildren")
}

func TestStrategyStopDirective(t *testing.T) {
	sys := newSystem(t)
	events := subscribeEvents(t, sys)
	sup := newFakeSupervisor()
	child := sys.NewLocalPID("kernel-4")
	reason := &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda"}

	supervision.NewStrategy(supervision.WithLogger(quietLogger())).
		HandleFailure(sys, sup, child, actor.NewRestartStatistics(), reason, nil)
	onlyPID(t, recvPIDs(t, sup.stopped, "StopChildren"), child)
	checkEvent(t, recvEvent(t, events), child, reason, supervision.Stop)
	sup.noOtherCalls(t, "StopChildren")
}

func TestStrategyEscalate(t *testing.T) {
	sys := newSystem(t)
	events := subscribeEvents(t, sys)
	sup := newFakeSupervisor()
	child := sys.NewLocalPID("kernel-5")
	reason := errors.New("up the chain")
	msg := struct{ n int }{7}

	s := supervision.NewStrategy(
		supervision.WithDecider(func(any) supervision.Directive { return supervision.Escalate }),
		supervision.WithLogger(quietLogger()),
	)
	s.HandleFailure(sys, sup, child, actor.NewRestartStatistics(), reason, msg)
	select {
	case e := <-sup.escalated:
		if e.reason != reason || e.message != msg {
			t.Errorf("EscalateFailure(%v, %v), want (%v, %v)", e.reason, e.message, reason, msg)
		}
	case <-time.After(strategyTimeout):
		t.Fatal("no EscalateFailure")
	}
	checkEvent(t, recvEvent(t, events), child, reason, supervision.Escalate)
	sup.noOtherCalls(t, "EscalateFailure")
}

// restartDelays runs failures through s inside a synctest bubble (fake
// clock): before each failure the clock advances by gaps[i]; it returns the
// fake time between each HandleFailure and its RestartChildren.
func restartDelays(t *testing.T, sys *actor.ActorSystem, s *supervision.Strategy, gaps []time.Duration) []time.Duration {
	t.Helper()
	var delays []time.Duration
	synctest.Test(t, func(t *testing.T) {
		sup := newFakeSupervisor()
		child := actor.NewPID("nonhost", "kernel-bubble")
		rs := actor.NewRestartStatistics()
		for i, gap := range gaps {
			time.Sleep(gap) // advances the bubble's fake clock
			start := time.Now()
			s.HandleFailure(sys, sup, child, rs, errors.New("crash"), i)
			<-sup.restarted
			delays = append(delays, time.Since(start))
		}
	})
	return delays
}

func TestStrategyBackoffGrowsAndResetsAfterQuietWindow(t *testing.T) {
	sys := newSystem(t)
	s := supervision.NewStrategy(
		supervision.WithDecider(supervision.RestartOnError),
		supervision.WithBackoff(supervision.Backoff{Initial: time.Second, Max: time.Hour, Multiplier: 2}),
		supervision.WithMaxRestarts(0, 10*time.Second),
		supervision.WithLogger(quietLogger()),
	)
	// Failures at t=0, 1s, 3s (each after the previous restart), then one at
	// t=7s+20s, when none of the earlier ones is within the 10 s window.
	got := restartDelays(t, sys, s, []time.Duration{0, 0, 0, 20 * time.Second})
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("restart %d after %v, want %v (all: %v)", i+1, got[i], want[i], got)
		}
	}
}

// BUG (strategy.go, HandleFailure, Restart case): the delay is
// Backoff.Delay(rs.FailureCount()), which counts every failure since the
// last reset, but the Strategy contract says "a restart waits
// Backoff.Delay(n), where n counts the child's failures within Window". The
// count is only reset when no failure at all is within the window, so old
// failures that have left the window keep inflating the backoff.
func TestStrategyBackoffCountsOnlyFailuresWithinWindow(t *testing.T) {
	sys := newSystem(t)
	s := supervision.NewStrategy(
		supervision.WithDecider(supervision.RestartOnError),
		supervision.WithBackoff(supervision.Backoff{Initial: time.Second, Max: time.Hour, Multiplier: 2}),
		supervision.WithMaxRestarts(0, 10*time.Second),
		supervision.WithLogger(quietLogger()),
	)
	// Failures at t=0, 1s, 3s; restarts done at t=7s. The fourth failure
	// comes at t=12.5s: the ones at 0 and 1s are out of the 10 s window,
	// the one at 3s is in it, so n = 2 (3s and 12.5s) and the delay 2 s.
	got := restartDelays(t, sys, s, []time.Duration{0, 0, 0, 5500 * time.Millisecond})
	if got[3] != 2*time.Second {
		t.Errorf("4th restart after %v, want Backoff.Delay(2) = 2s: only 2 failures are within the window (delays %v)", got[3], got)
	}
}
