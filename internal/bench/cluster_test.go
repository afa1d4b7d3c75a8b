//go:build !race

// Two cluster members in one process race inside Proto.Actor (gRPC's global
// logger, see cluster/cluster_test.go): this test is built without -race.

package bench

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

// protoActorLeaks are goroutines Proto.Actor leaves behind by design: its
// throttlers run on tickers that are never stopped.
var protoActorLeaks = testproc.ProtoActorThrottles()

func TestRunClusterReportsBothPaths(t *testing.T) {
	// Runs last: the members are closed by then.
	defer goleak.VerifyNone(t, append(protoActorLeaks, goleak.IgnoreCurrent())...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	kinds, echo := ClusterKinds()
	host, err := cluster.Start(ctx, "bench-test", cluster.Peers(nil), kinds,
		cluster.WithProtoKinds(echo), cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close(context.Background())
	req, err := cluster.Start(ctx, "bench-test", cluster.Peers([]string{host.Address()}), nil,
		cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer req.Close(context.Background())
	if err := req.WaitMembers(ctx, 2); err != nil {
		t.Fatal(err)
	}
	res, err := RunCluster(ctx, ClusterConfig{RTTSamples: 100, Messages: 400, InFlight: 4, Identities: 2, PayloadLen: 8}, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.ClusterMsgsPerS <= 0 || res.ProtoActorClusterMsgsPS <= 0 || res.ClusterRTTP50 <= 0 || res.ProtoActorClusterRTTP50 <= 0 {
		t.Fatalf("missing measures: %+v", res)
	}
	if res.ClusterClientAllocs <= 0 || res.ProtoActorClusterClientAllocs <= 0 || res.ClusterServerAllocs <= 0 || res.ProtoActorClusterServerAllocs <= 0 {
		t.Fatalf("allocations per request not measured: %+v", res)
	}
	if res.ClusterClientCPU <= 0 || res.ProtoActorClusterClientCPU <= 0 || res.ClusterServerCPU <= 0 || res.ProtoActorClusterServerCPU <= 0 {
		t.Fatalf("CPU per request not measured: %+v", res)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cluster_msgs_per_s", "protoactor_cluster_msgs_per_s", "cluster_rtt_p50_ns", "protoactor_cluster_rtt_p50_ns",
		"cluster_client_allocs_per_request", "protoactor_cluster_client_allocs_per_request",
		"cluster_server_allocs_per_request", "protoactor_cluster_server_allocs_per_request",
		"cluster_client_cpu_ns_per_request", "cluster_server_cpu_ns_per_request"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
}
