package devcore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// fakeRing is a Parkable without a device: it acknowledges a park at once
// unless stuck, and records what the epoch did to it.
type fakeRing struct {
	name       string
	unsettled  int  // Settled answers false this many times first
	stuck      bool // never acknowledges
	ownStop    bool // already acknowledged a termination of its own
	parked     bool
	acked      bool
	terminates int
	retires    int
	resumes    int
	settleSeen bool // Settled was true before the first Terminate
}

func (f *fakeRing) Settled() bool {
	if f.unsettled > 0 {
		f.unsettled--
		return false
	}
	if f.terminates == 0 {
		f.settleSeen = true
	}
	return true
}

func (f *fakeRing) Terminate() bool {
	f.terminates++
	if f.ownStop {
		return false
	}
	f.parked = true
	f.acked = !f.stuck
	return true
}

func (f *fakeRing) Acked() bool   { return f.acked }
func (f *fakeRing) Retire() error { f.retires++; return nil }
func (f *fakeRing) Unpark()       { f.parked = false }

func (f *fakeRing) Resume() error {
	f.resumes++
	f.parked, f.acked = false, false
	return nil
}

func (f *fakeRing) Stuck(settling bool) string {
	return fmt.Sprintf("ring %s (settling %v)", f.name, settling)
}

func newEpochs() *Epochs {
	return &Epochs{ParkTimeout: time.Minute} // a hang guard; no test waits for it unless it says so
}

// TestEpochsParkAroundCall: the call runs with every live ring parked and
// acknowledged, each ring is parked once, retired and relaunched once,
// and the stats count one epoch of two rings serving its caller.
func TestEpochsParkAroundCall(t *testing.T) {
	e := newEpochs()
	a, b := &fakeRing{name: "a"}, &fakeRing{name: "b", unsettled: 3}
	if id := e.Add(a); id != 1 {
		t.Fatalf("first id %d", id)
	}
	if id := e.Add(b); id != 2 {
		t.Fatalf("second id %d", id)
	}
	called := false
	err := e.Run(context.Background(), "test", func() error {
		called = true
		for _, f := range []*fakeRing{a, b} {
			if !f.parked || !f.acked || f.retires != 1 {
				t.Errorf("ring %s during the call: parked %v acked %v retired %d", f.name, f.parked, f.acked, f.retires)
			}
		}
		return nil
	})
	if err != nil || !called {
		t.Fatalf("Run = %v (called %v)", err, called)
	}
	for _, f := range []*fakeRing{a, b} {
		if f.parked || f.terminates != 1 || f.resumes != 1 || !f.settleSeen {
			t.Fatalf("ring %s after the epoch: %+v", f.name, *f)
		}
	}
	st := e.Stats()
	if st.Count != 1 || st.RingsParked != 2 || st.Served != 1 || st.LastReason != "test" {
		t.Fatalf("stats %+v", st)
	}
}

// TestEpochsWithoutRings: without live rings the call runs as is, a
// waiting request is served, and no epoch is counted.
func TestEpochsWithoutRings(t *testing.T) {
	e := newEpochs()
	req := e.Pace.Request()
	called := false
	if err := e.Run(context.Background(), "test", func() error { called = true; return nil }); err != nil || !called {
		t.Fatalf("Run = %v (called %v)", err, called)
	}
	if !req.Finished() {
		t.Fatal("the waiting request was not served")
	}
	if st := e.Stats(); st != (EpochStats{}) {
		t.Fatalf("stats %+v", st)
	}
}

// TestEpochsNested: an epoch asked for inside an epoch's call just runs
// its call; the rings are parked once.
func TestEpochsNested(t *testing.T) {
	e := newEpochs()
	a := &fakeRing{name: "a"}
	e.Add(a)
	inner := false
	err := e.Run(context.Background(), "outer", func() error {
		return e.Run(context.Background(), "inner", func() error { inner = true; return nil })
	})
	if err != nil || !inner || a.terminates != 1 || a.resumes != 1 {
		t.Fatalf("nested Run = %v (inner call %v), ring %+v", err, inner, *a)
	}
}

// TestEpochsParkTimeout: a ring that never acknowledges fails the epoch
// with ErrEpochTimeout naming it; the call is not made and the rings that
// did park are relaunched (the stuck one gets Resume too, to hand its
// owner's request back). A ring that stopped of its own is left alone.
func TestEpochsParkTimeout(t *testing.T) {
	e := newEpochs()
	e.ParkTimeout = 20 * time.Millisecond
	good, stuck, own := &fakeRing{name: "good"}, &fakeRing{name: "stuck", stuck: true}, &fakeRing{name: "own", ownStop: true}
	e.Add(good)
	e.Add(stuck)
	e.Add(own)
	called := false
	err := e.Run(context.Background(), "test", func() error { called = true; return nil })
	if !errors.Is(err, ErrEpochTimeout) || !errors.Is(err, context.DeadlineExceeded) || called {
		t.Fatalf("Run = %v (call made: %v)", err, called)
	}
	if !strings.Contains(err.Error(), "ring stuck (settling false)") {
		t.Fatalf("error does not name the stuck ring: %v", err)
	}
	if good.resumes != 1 || stuck.resumes != 1 || own.resumes != 0 {
		t.Fatalf("resumes: good %d stuck %d own %d", good.resumes, stuck.resumes, own.resumes)
	}
	if st := e.Stats(); st.Count != 0 {
		t.Fatalf("a failed epoch was counted: %+v", st)
	}
}

// TestEpochsSettleTimeout: a ring that never settles fails the epoch
// before anything is parked.
func TestEpochsSettleTimeout(t *testing.T) {
	e := newEpochs()
	e.ParkTimeout = 20 * time.Millisecond
	a := &fakeRing{name: "a", unsettled: 1 << 30}
	e.Add(a)
	err := e.Run(context.Background(), "test", func() error { return nil })
	if !errors.Is(err, ErrEpochTimeout) || !strings.Contains(err.Error(), "ring a (settling true)") {
		t.Fatalf("Run = %v", err)
	}
	if a.terminates != 0 {
		t.Fatalf("an unsettled ring was parked %d times", a.terminates)
	}
}

// TestEpochsRemove: a removed ring is not parked any more.
func TestEpochsRemove(t *testing.T) {
	e := newEpochs()
	a := &fakeRing{name: "a"}
	e.Add(a)
	e.Remove(a)
	if e.Len() != 0 {
		t.Fatalf("Len %d after Remove", e.Len())
	}
	if err := e.Run(context.Background(), "test", func() error { return nil }); err != nil || a.terminates != 0 {
		t.Fatalf("Run = %v, removed ring parked %d times", err, a.terminates)
	}
}
