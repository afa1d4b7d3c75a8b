//go:build !race

package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ringactor/ringactor/cluster"
)

// Requests whose context has no deadline take the client's fast path when
// the identity's activation is cached. These tests hit it with a cached
// activation that is gone and with a cancellation while waiting.

func TestFastPathFollowsPassivatedActivation(t *testing.T) {
	id := unique("fast-idle")
	bg := context.Background() // no deadline: the fast path
	for n := 1; n <= 2; n++ {
		got, err := cluster.Request[total](bg, memberB, "idle", id, add{N: 1})
		if err != nil || got.Calls != n {
			t.Fatalf("request %d: %+v, %v", n, got, err)
		}
	}
	// Wait until the activation has passivated (idle timeout 150ms): the
	// member's PID cache still names it.
	deadline := time.Now().Add(3 * time.Second)
	for kernelRunning("idle/" + id) {
		if time.Now().After(deadline) {
			t.Fatal("the idle activation did not passivate")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The cached activation is gone: the request is not lost, it finds the
	// identity's new activation, which starts afresh.
	got, err := cluster.Request[total](bg, memberB, "idle", id, add{N: 7})
	if err != nil {
		t.Fatal(err)
	}
	if want := (total{Total: 7, Calls: 1}); got != want {
		t.Fatalf("after passivation: got %+v, want %+v", got, want)
	}
}

func TestFastPathCancelWhileWaiting(t *testing.T) {
	id := unique("fast-held")
	// Activate and cache the identity (its handler holds each request
	// until released).
	ctx := testCtx(t)
	go func() {
		<-heldEntered
		heldRelease <- struct{}{}
	}()
	if _, err := cluster.Request[total](ctx, memberA, "held", id, add{N: 1}); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	// Cancelled once the handler holds the request (a timer could fire
	// after a handler timeout on a loaded machine).
	cctx, cancel := context.WithCancel(context.Background()) // no deadline
	defer cancel()
	go func() {
		<-heldEntered
		cancel()
	}()
	if _, err := cluster.Request[total](cctx, memberA, "held", id, add{N: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel while waiting: got %v", err)
	}
	heldRelease <- struct{}{} // the held request ends; its reply finds no requester
}

// kernelRunning reports whether a kernel named name runs on either member.
func kernelRunning(name string) bool {
	for _, mem := range []*cluster.Member{memberA, memberB} {
		for _, k := range mem.Runtime().Kernels() {
			if st, err := mem.Runtime().Status(k); k == name && err == nil && !st.State.Terminal() {
				return true
			}
		}
	}
	return false
}

// A request to a cached activation on another member that has passivated
// becomes a dead letter there; that member answers it (it carries no
// Proto.Actor sender, only its ReplyTo) and the request finds the
// identity's new activation.
func TestStaleActivationOnOtherMember(t *testing.T) {
	bg := context.Background()
	var id string
	for i := 0; id == "" && i < 200; i++ {
		cand := unique("stale-remote")
		if _, err := cluster.Request[total](bg, memberB, "idle", cand, add{N: 1}); err != nil {
			t.Fatal(err)
		}
		if pid, ok := memberB.Cluster().PidCache.Get(cand, "idle"); ok && pid.Address == memberA.Address() {
			id = cand
		}
	}
	if id == "" {
		t.Fatal("no identity placed on member A")
	}
	stale, _ := memberB.Cluster().PidCache.Get(id, "idle")
	deadline := time.Now().Add(3 * time.Second)
	for kernelRunning("idle/" + id) {
		if time.Now().After(deadline) {
			t.Fatal("the idle activation did not passivate")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Whatever member B's cache holds now, the request goes to the gone
	// activation first.
	memberB.Cluster().PidCache.Set(id, "idle", stale)
	got, err := cluster.Request[total](bg, memberB, "idle", id, add{N: 7})
	if err != nil {
		t.Fatal(err)
	}
	if want := (total{Total: 7, Calls: 1}); got != want {
		t.Fatalf("after passivation: got %+v, want %+v", got, want)
	}
	if pid, ok := memberB.Cluster().PidCache.Get(id, "idle"); !ok || pid.Id == stale.Id {
		t.Fatalf("member B still caches the gone activation %v", pid)
	}
}
