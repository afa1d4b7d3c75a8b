//go:build !race

package cluster_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"

	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
)

// protoEcho is a plain Proto.Actor grain both members host: the baseline of
// the request benchmarks.
func protoEcho() *pcluster.Kind {
	return pcluster.NewKind("proto-echo", actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*wire.WireEnvelope); ok {
			c.Respond(m)
		}
	}))
}

// benchIdentities returns identities of which member B is the owner, so
// that requests from member A cross the wire.
func benchIdentities(b *testing.B, n int) []string {
	b.Helper()
	ctx := context.Background()
	var ids []string
	for i := 0; len(ids) < n && i < 10000; i++ {
		id := fmt.Sprintf("bench-%d", i)
		if _, err := typedAdd.Ref(memberA, id).Request(ctx, pair{}); err != nil {
			b.Fatal(err)
		}
		if pid, ok := memberA.Cluster().PidCache.Get(id, typedAdd.Name()); ok && pid.Address == memberB.Address() {
			ids = append(ids, id)
		}
	}
	return ids
}

// BenchmarkTypedRequest measures typed requests from member A to
// identities on member B, 64 in flight (allocations are those of both
// members: they share the process).
func BenchmarkTypedRequest(b *testing.B) {
	ids := benchIdentities(b, 8)
	ctx := context.Background()
	msg := pair{A: []float64{1, 2}, B: []float64{3, 4}}
	var next atomic.Int64
	b.SetParallelism(32)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ref := typedAdd.Ref(memberA, ids[int(next.Add(1))%len(ids)])
		for pb.Next() {
			if _, err := ref.Request(ctx, msg); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkProtoActorRequest is the baseline: raw Proto.Actor cluster
// requests with a wire envelope of the same message to an echo grain.
func BenchmarkProtoActorRequest(b *testing.B) {
	ids := benchIdentities(b, 8)
	env, err := messages.NewEnvelope(pair{A: []float64{1, 2}, B: []float64{3, 4}})
	if err != nil {
		b.Fatal(err)
	}
	raw, err := wire.Pack(env, messages.MaxPayloadSize)
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	b.SetParallelism(32)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		id := ids[int(next.Add(1))%len(ids)]
		for pb.Next() {
			if _, err := memberA.Cluster().Request(id, "proto-echo", raw); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
