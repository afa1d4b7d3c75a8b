//go:build !race

package cluster_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"
	ptest "github.com/asynkron/protoactor-go/cluster/clusterproviders/test"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/wire"
)

// TestEmbedInUsersCluster registers ringactor kinds in a Proto.Actor cluster
// the user builds and owns, next to the user's own grain: both answer, and
// closing the embedded member leaves the user's cluster running.
func TestEmbedInUsersCluster(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t)) // a hang guard, not a speed bound
	defer cancel()
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return actors.DiscardLogger() }))
	m, kinds, err := cluster.Embed(sys, []*cluster.Kind{cluster.NewKind("add", addHandler)}, cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	// The user's own grain: echoes wire envelopes.
	userKind := pcluster.NewKind("user-echo", actor.PropsFromFunc(func(c actor.Context) {
		if w, ok := c.Message().(*wire.WireEnvelope); ok {
			c.Respond(w)
		}
	}))
	cfg := pcluster.Configure("embedded", ptest.NewTestProvider(ptest.NewInMemAgent()), disthash.New(),
		remote.Configure("127.0.0.1", 0), pcluster.WithKinds(append(kinds, userKind)...))
	c := pcluster.New(sys, cfg)
	m.Attach(c)
	c.StartMember()
	defer c.Shutdown(true)
	if err := m.WaitMembers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	got, err := cluster.Request[sum](ctx, m, "add", "e1", pair{A: []float64{1, 2}, B: []float64{3, 4}})
	if err != nil || len(got.Sum) != 2 || got.Sum[0] != 4 || got.Sum[1] != 6 {
		t.Fatalf("ringactor kind in the user's cluster: %v, %v", got, err)
	}
	if _, err := c.Request("u1", "user-echo", &wire.WireEnvelope{Id: 7}); err != nil {
		t.Fatalf("user's grain: %v", err)
	}
	if err := m.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The user's cluster outlives the embedded member.
	r, err := c.Request("u2", "user-echo", &wire.WireEnvelope{Id: 8})
	if err != nil || r.(*wire.WireEnvelope).GetId() != 8 {
		t.Fatalf("user's grain after the member closed: %v, %v", r, err)
	}
	if _, err := cluster.Request[sum](ctx, m, "add", "e1", pair{}); err == nil {
		t.Fatal("request through a closed member succeeded")
	}
}
