//go:build !race && linux && cgo

package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	ptest "github.com/asynkron/protoactor-go/cluster/clusterproviders/test"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/messages"
)

type countReq struct{ Add uint32 }
type countResp struct{ Total uint64 }
type countState struct{ Total uint64 }

func init() {
	messages.MustRegister[countReq]("cluster.test.count.request")
	messages.MustRegister[countResp]("cluster.test.count.response")
}

const countCUDA = `
__device__ uint32_t count(const rc_ctx *ctx, const countReq *req, countResp *resp, countState *st) {
	if (ctx->thread == 0) {
		st->Total += req->Add;
		resp->Total = st->Total;
	}
	return RC_STATUS_OK;
}
`

func countFallback() actors.Handler[countReq, countResp] {
	var total uint64
	return func(_ context.Context, r countReq) (countResp, error) {
		total += uint64(r.Add)
		return countResp{Total: total}, nil
	}
}

// TestDeviceKind: identities of a device kind are device ring kernels on a
// member with the simulated device, each with its own device State.
func TestDeviceKind(t *testing.T) {
	if _, err := cluster.NewDeviceKind[countReq, countResp]("bad", actors.DeviceSource{Code: countCUDA, Entry: "count", State: "no"}, countFallback); !errors.Is(err, actors.ErrInvalidKernel) {
		t.Fatalf("bad state type: %v", err)
	}
	kind, err := cluster.DefineDevice[countReq, countResp]("count", actors.DeviceSource{Code: countCUDA, Entry: "count", State: countState{}}, countFallback)
	if err != nil {
		t.Fatal(err)
	}
	sim := simdevice.NewBackend(16 << 20)
	defer sim.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, err := cluster.Start(ctx, "devkind", ptest.NewTestProvider(ptest.NewInMemAgent()), []*cluster.Kind{kind.Kind()},
		cluster.WithLogger(actors.DiscardLogger()), cluster.WithRuntimeOptions(actors.WithBackends(sim)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cctx, ccancel := context.WithCancel(testCtx(t)) // a hang guard, not a speed bound
		defer ccancel()
		if err := m.Close(cctx); err != nil {
			t.Error(err)
		}
	}()
	if err := m.WaitMembers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		for _, id := range []string{"a", "b"} {
			add := uint32(1)
			if id == "b" {
				add = 10
			}
			var got countResp
			if id == "a" { // the typed reference and the string-keyed call reach the same kind
				got, err = kind.Ref(m, id).Request(ctx, countReq{Add: add})
			} else {
				got, err = cluster.Request[countResp](ctx, m, "count", id, countReq{Add: add})
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Total != uint64(i+1)*uint64(add) {
				t.Fatalf("%s after %d: total %d", id, i+1, got.Total)
			}
		}
	}
	k, err := actors.Lookup[countReq, countResp](m.Runtime(), "count/a")
	if err != nil {
		t.Fatal(err)
	}
	if k.Placement() != "cuda:sim" {
		t.Fatalf("identity placement %q, want the simulated device", k.Placement())
	}
}
