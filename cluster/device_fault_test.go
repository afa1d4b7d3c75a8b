//go:build !race && linux && cgo

package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	ptest "github.com/asynkron/protoactor-go/cluster/clusterproviders/test"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/lifecycle"
)

// hostOf returns the members whose runtime runs the identity's kernel
// (launched and not terminated: a passivated activation's kernel stays
// listed, terminated).
func hostOf(ms map[string]*cluster.Member, kind, id string) []string {
	var out []string
	for name, m := range ms {
		if live(m, kind+"/"+id) {
			out = append(out, name)
		}
	}
	return out
}

// live reports whether the member runs the kernel, not terminated.
func live(m *cluster.Member, kernel string) bool {
	k, err := actors.Lookup[countReq, countResp](m.Runtime(), kernel)
	if err != nil {
		return false
	}
	st := k.State()
	return st != lifecycle.Terminated && st != lifecycle.Created
}

// waitUntil polls cond until it holds or ctx (the test's hang guard) ends.
func waitUntil(t testing.TB, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	hangguard.Until(ctx, t, what, cond)
}

// TestDeviceFaultReplaces: members A (2 simulated devices), B (1) and C
// (none) host a device-only kind. When one of A's devices faults, A keeps
// its identities (they answer from A) and every member sees A's weight
// drop from 2 devices to 1. When B's only device faults, B advertises no
// device: its identities move to A through the hand-off (each answers
// from A, none from C or B), a request sent while they move gets one
// reply, no identity is active on two members, and their activations on
// A make no device epoch there (the kind's program is loaded once per
// device, not per activation).
func TestDeviceFaultReplaces(t *testing.T) {
	kind, err := cluster.DefineDevice[countReq, countResp]("faulty", actors.DeviceSource{Code: countCUDA, Entry: "count", State: countState{}}, countFallback)
	if err != nil {
		t.Fatal(err)
	}
	kind.Kind().Require(cluster.DeviceOnly)
	simsA := simdevice.NewBackends(2, 16<<20)
	simB := simdevice.NewBackend(16 << 20)
	t.Cleanup(func() { // after the members' Close (cleanups run last first)
		for _, s := range append(simsA, simB) {
			_ = s.Close()
		}
	})
	ctx := testCtx(t)
	agent := ptest.NewInMemAgent()
	start := func(devs ...*cuda.Backend) *cluster.Member {
		opts := []cluster.Option{cluster.WithLogger(actors.DiscardLogger()), cluster.WithAdvertiseInterval(20 * time.Millisecond)}
		if len(devs) > 0 {
			var bs []gpu.Backend
			for _, d := range devs {
				bs = append(bs, d)
			}
			opts = append(opts, cluster.WithRuntimeOptions(actors.WithBackends(bs...)))
		}
		m, err := cluster.Start(ctx, "devfault", ptest.NewTestProvider(agent), []*cluster.Kind{kind.Kind()}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := m.Close(testCtx(t)); err != nil {
				t.Error(err)
			}
		})
		return m
	}
	a, b, c := start(simsA...), start(simB), start()
	ms := map[string]*cluster.Member{"A": a, "B": b, "C": c}
	for _, m := range ms {
		if err := m.WaitMembers(ctx, 3); err != nil {
			t.Fatal(err)
		}
	}
	ids := make([]string, 60)
	owner := map[string]string{}
	for i := range ids {
		ids[i] = fmt.Sprintf("f%d", i)
		if _, err := kind.Ref(c, ids[i]).Request(ctx, countReq{Add: 1}); err != nil {
			t.Fatal(err)
		}
		h := hostOf(ms, "faulty", ids[i])
		if len(h) != 1 || h[0] == "C" {
			t.Fatalf("%s hosted on %v", ids[i], h)
		}
		owner[ids[i]] = h[0]
	}
	var onA, onB []string
	for _, id := range ids {
		if owner[id] == "A" {
			onA = append(onA, id)
		} else {
			onB = append(onB, id)
		}
	}
	if len(onA) == 0 || len(onB) == 0 {
		t.Fatalf("A hosts %d, B %d: want both", len(onA), len(onB))
	}
	weightOfA := func(m *cluster.Member) int {
		p, err := m.PlacementOf("faulty", onA[0])
		if err != nil {
			t.Fatal(err)
		}
		return p.Devices
	}
	for name, m := range ms {
		if w := weightOfA(m); w != 2 {
			t.Fatalf("%s sees A with %d devices before the fault, want 2", name, w)
		}
	}

	// One of A's two devices faults: A's weight drops, its identities stay.
	simsA[1].MarkFailed(errors.New("injected fault"))
	for name, m := range ms {
		waitUntil(t, ctx, name+" seeing A with 1 device", func() bool { return weightOfA(m) == 1 })
	}
	if n := a.Advertisements(); n < 1 {
		t.Fatalf("A advertised %d times after its fault", n)
	}
	for _, ms := range c.Status().Members {
		if ms.Address == a.Address() && ms.AdvertisedDevices != 1 {
			t.Fatalf("C's status shows A with %d advertised devices, want 1", ms.AdvertisedDevices)
		}
	}
	// A stays a device member: the identities its smaller weight still
	// gives it answer from A; the others move to B (only from A: weighted
	// rendezvous moves nothing else), none to C.
	kept := 0
	for _, id := range onA {
		p, err := c.PlacementOf("faulty", id)
		if err != nil {
			t.Fatal(err)
		}
		want := "B"
		if p.Member == a.Address() {
			want = "A"
			kept++
		}
		// One that moves answers from A until A's activation has
		// passivated, then from B. Never both.
		waitUntil(t, ctx, id+" answering from "+want, func() bool {
			if _, err := kind.Ref(c, id).Request(ctx, countReq{Add: 1}); err != nil {
				t.Fatal(err)
			}
			h := hostOf(ms, "faulty", id)
			if len(h) != 1 || h[0] == "C" || (want == "A" && h[0] != "A") {
				t.Fatalf("after A's partial fault %s is hosted on %v, want %s", id, h, want)
			}
			return h[0] == want
		})
	}
	for _, id := range onB {
		if p, err := c.PlacementOf("faulty", id); err != nil || p.Member != b.Address() {
			t.Fatalf("A's partial fault moved %s, which B hosts, to %+v (%v)", id, p, err)
		}
	}
	t.Logf("A's partial fault: A keeps %d of its %d identities (B hosts %d)", kept, len(onA), len(onB))
	if kept == 0 {
		t.Fatal("A kept none of its identities after losing one of its two devices")
	}
	onB = nil
	for _, id := range ids {
		if hostOf(ms, "faulty", id)[0] == "B" {
			onB = append(onB, id)
		}
	}

	// B's only device faults: its identities move to A while requests to
	// one of them keep coming; each gets its reply.
	moved := func(id string) bool {
		p, err := c.PlacementOf("faulty", id)
		return err == nil && p.Member == a.Address()
	}
	var wg sync.WaitGroup
	var sent int
	var inflightErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for inflightErr == nil && (sent < 2 || !moved(onB[0])) {
			sent++
			_, inflightErr = kind.Ref(c, onB[0]).Request(ctx, countReq{Add: 1})
		}
	}()
	epochsA := simsA[0].EpochStats().Count
	faultAt := time.Now()
	simB.MarkFailed(errors.New("injected fault"))
	wg.Wait()
	if inflightErr != nil {
		t.Fatalf("request %d to %s while B's device faulted: %v", sent, onB[0], inflightErr)
	}
	t.Logf("%d requests to %s while it moved, each answered", sent, onB[0])
	for _, id := range onB {
		// B answers through the inbox C knows until its activation has
		// passivated; then A activates the identity. Never both.
		waitUntil(t, ctx, id+" answering from A", func() bool {
			if _, err := kind.Ref(c, id).Request(ctx, countReq{Add: 1}); err != nil {
				t.Fatalf("%s after B's fault: %v", id, err)
			}
			// Between B's passivation and A's activation the
			// identity is hosted nowhere (the reply above may have
			// come from B just before it let go): only two hosts, or
			// the member without a device, are wrong.
			h := hostOf(ms, "faulty", id)
			if len(h) > 1 || (len(h) == 1 && h[0] == "C") {
				t.Fatalf("after B's fault %s is hosted on %v", id, h)
			}
			return len(h) == 1 && h[0] == "A" && moved(id)
		})
		k, err := actors.Lookup[countReq, countResp](a.Runtime(), "faulty/"+id)
		if err != nil {
			t.Fatal(err)
		}
		if p := k.Placement(); p != "cuda:sim0" {
			t.Fatalf("%s on A runs on %q, want the device left (cuda:sim0)", id, p)
		}
	}
	t.Logf("B's %d identities answered from A, the last %v after its fault (advertisement checks every 20 ms)",
		len(onB), time.Since(faultAt).Round(time.Millisecond))
	// Activating them on A loaded no program: the kind's was loaded on A's
	// device at its start, so no device epoch parked the rings of A's
	// identities while the others moved in (one epoch per activation
	// before: seconds each on a loaded machine).
	if n := simsA[0].EpochStats().Count - epochsA; n != 0 {
		t.Fatalf("activating %d identities on A made %d device epochs on its device, want none", len(onB), n)
	}
	if p, err := b.PlacementOf("faulty", onB[0]); err != nil || p.Member != a.Address() || p.Devices != 1 {
		t.Fatalf("B places %s at %+v (%v)", onB[0], p, err)
	}
	for _, m := range []*cluster.Member{b, c} {
		for _, k := range m.Runtime().Kernels() {
			if strings.HasPrefix(k, "faulty/") && live(m, k) {
				t.Fatalf("%s still runs on a member without a usable device", k)
			}
		}
	}
}
