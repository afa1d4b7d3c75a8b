//go:build !race && linux && cgo

package cluster_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ptest "github.com/asynkron/protoactor-go/cluster/clusterproviders/test"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
)

// manyIdentities is how many identities of one device kind
// TestDeviceKindManyIdentities activates on one member: 1,000 (far past
// the 128 grids a device keeps resident; on two cores loaded by other
// tests, thousands of activations can outlast an activation's deadline),
// or RINGACTOR_MANY_IDENTITIES (10,000 passed in 243 s beside a bench).
func manyIdentities(t *testing.T) int {
	if v := os.Getenv("RINGACTOR_MANY_IDENTITIES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("RINGACTOR_MANY_IDENTITIES=%q: want a positive count", v)
		}
		return n
	}
	return 1000
}

// TestDeviceKindManyIdentities activates manyIdentities(t) identities of a
// device kind on one member with one simulated device: each identity is a
// device ring kernel, all of them mailboxes of the kind's one grid (a grid
// per identity would need more grids than a device keeps resident); every
// request is answered from the identity's own device State.
func TestDeviceKindManyIdentities(t *testing.T) {
	n := manyIdentities(t)
	kind, err := cluster.DefineDevice[countReq, countResp]("many", actors.DeviceSource{Code: countCUDA, Entry: "count", State: countState{}},
		countFallback, actors.WithCapacity(4), actors.WithOutputCapacity(4))
	if err != nil {
		t.Fatal(err)
	}
	sim := simdevice.NewBackend(256<<20, cuda.WithArenaBytes(64<<20))
	defer sim.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// A message's handling waits behind a thousand mailboxes' on host
	// threads the machine shares with everything else: the handler bound
	// (DefaultHandlerTimeout, 5 s) failed a request under two busy loops
	// and a parallel go test; the test's own deadline is the hang guard.
	hosted := kind.Kind().WithHandlerTimeout(5 * time.Minute)
	m, err := cluster.Start(ctx, "devmany", ptest.NewTestProvider(ptest.NewInMemAgent()), []*cluster.Kind{hosted},
		cluster.WithLogger(actors.DiscardLogger()), cluster.WithRuntimeOptions(actors.WithBackends(sim)),
		// Thousands of launches go through one orchestrator: on a loaded
		// machine one can wait longer than the default 5 s (seen under two
		// busy loops); the test's own deadline is the hang guard.
		cluster.WithActivationTimeout(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer ccancel()
		if err := m.Close(cctx); err != nil {
			t.Error(err)
		}
	}()
	if err := m.WaitMembers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				id := fmt.Sprintf("id-%d", i)
				for round := range 2 {
					got, err := kind.Ref(m, id).Request(ctx, countReq{Add: uint32(i%7 + 1)})
					if err != nil {
						failed.Store(fmt.Errorf("%s: %w", id, err))
						return
					}
					if want := uint64(round+1) * uint64(i%7+1); got.Total != want {
						failed.Store(fmt.Errorf("%s round %d: total %d, want %d", id, round, got.Total, want))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	if s := sim.MailboxStats(); s.Grids != 1 || s.Mailboxes != n {
		t.Fatalf("mailbox stats %+v: want one grid of %d mailboxes", s, n)
	}
	k, err := actors.Lookup[countReq, countResp](m.Runtime(), "many/id-0")
	if err != nil {
		t.Fatal(err)
	}
	if k.Placement() != "cuda:sim" {
		t.Fatalf("identity placement %q, want the simulated device", k.Placement())
	}
}
