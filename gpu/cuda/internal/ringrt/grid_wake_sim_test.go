//go:build linux && cgo

package ringrt

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
	"github.com/ringactor/ringactor/messages"
)

// TestRelaunchRingsMailboxesWithWork pins the relaunch's ring-all step
// (ringGrid.ringAll, the parked launch's resumed hook). A block that sees
// the grid's terminate while it owns a mailbox frees the claim and exits
// (grid_loop.cuh): the mailbox may still have requests queued, but no
// doorbell slot names it (the block took that slot) and the host rings
// again only when it publishes on an empty ring, opens a gate or frees an
// output slot the device waited on. So after the relaunch nothing but
// the ring-all step brings a block back to it.
//
// The test builds that state without depending on when the park lands:
// the gate is opened and three requests are pushed straight into the
// input ring without ringing (what the host had done before the park:
// its doorbell was taken by the block that then exited), so the mailbox
// has work, a free claim and no doorbell. One device epoch later all
// three must be answered, in order. With the ring-all step switched off
// the mailbox is never served and the test fails at its hang guard
// (TestMailboxesSurviveEpochs, one request at a time on an empty ring,
// passes either way: every request there rings).
func TestRelaunchRingsMailboxesWithWork(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	p := loadSaxpy(t, b)
	k, err := b.Open(p, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if q := atomic.LoadUint64(&k.grid.tab.entries[k.box].Queued); q != 0 {
		t.Fatalf("a closed new mailbox is queued (%d)", q)
	}
	k.cb.Open() // not Activate: it would ring
	reqs := make([]saxpyReq, 3)
	for m := range reqs {
		reqs[m] = saxpyReq{N: 2, A: float32(m + 1), X: [64]float32{1, 2}, Y: [64]float32{float32(m)}}
		if !k.in.TryPushRaw(ring.SlotHeader{TypeID: 1, CorrelationID: uint64(m)}, messages.FixedBytes(&reqs[m])) {
			t.Fatal("input ring full")
		}
	}
	ctx, cancel := hangCtx(t)
	defer cancel()
	if _, err := b.Epoch(ctx); err != nil {
		t.Fatal(err)
	}
	for m := range reqs {
		h, got := ringtest.PollReply(t, k) // fails at the hang guard: the relaunch did not ring the mailbox
		want := saxpyWant(reqs[m], uint64(m+1))
		if h.CorrelationID != uint64(m) || h.Status != ring.StatusOK || string(got) != string(messages.FixedBytes(&want)) {
			t.Fatalf("reply %d: %+v", m, h)
		}
	}
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestFullOutputRingWokenByConsumer: a block that finds its mailbox's
// output ring full sets OutWait and lets the mailbox go; the consumer that
// then takes a reply out (TryPoll) rings it, and nothing else does here:
// no request is published on an empty ring, no gate opens, no other
// mailbox, poll or epoch runs. Every reply comes, in order. With the
// consumer's ring (Kernel.freed) switched off the test fails at its
// hang guard.
func TestFullOutputRingWokenByConsumer(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	p := loadSaxpy(t, b)
	k, err := b.Open(p, Config{Capacity: 2})
	if err != nil {
		t.Fatal(err)
	}
	k.Activate()
	e := &k.grid.tab.entries[k.box]
	reqs := make([]saxpyReq, 4)
	submit := func(m int) {
		t.Helper()
		reqs[m] = saxpyReq{N: 2, A: float32(m + 1), X: [64]float32{1, 2}, Y: [64]float32{float32(m)}}
		if ok, err := k.TrySubmit(1, uint64(m), messages.FixedBytes(&reqs[m])); !ok || err != nil {
			t.Fatalf("submit %d: %v, %v", m, ok, err)
		}
	}
	deadline := hangDeadline(t)
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("hung waiting for %s (processed %d, out wait %d, queued %d)", what,
					k.cb.Processed.Load(), atomic.LoadUint64(&e.OutWait), atomic.LoadUint64(&e.Queued))
			}
			runtime.Gosched()
		}
	}
	submit(0)
	submit(1)
	waitFor("two replies filling the output ring", func() bool { return k.cb.Processed.Load() == 2 })
	submit(2) // the input ring is empty again: this rings
	submit(3)
	waitFor("the block to give up on the full output ring", func() bool {
		return atomic.LoadUint64(&e.OutWait) == 1 && atomic.LoadUint64(&e.Queued) == 0
	})
	if n := k.cb.Processed.Load(); n != 2 {
		t.Fatalf("processed %d with a full output ring", n)
	}
	for m := range reqs {
		h, got := ringtest.PollReply(t, k) // each TryPoll frees a slot: the only wake-up here
		want := saxpyWant(reqs[m], uint64(m+1))
		if h.CorrelationID != uint64(m) || h.Status != ring.StatusOK || string(got) != string(messages.FixedBytes(&want)) {
			t.Fatalf("reply %d: %+v", m, h)
		}
	}
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
