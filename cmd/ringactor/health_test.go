package main

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/ringactor/ringactor/cluster"
)

// TestServeGRPCHealth asks the standard grpc.health.v1 service on a
// member's remote port, as a Kubernetes gRPC probe does.
func TestServeGRPCHealth(t *testing.T) {
	name := fmt.Sprintf("health-%d", time.Now().UnixNano())
	member, _ := startServeAdmin(t, nil, "--cluster", name, "--peers", "")
	conn, err := grpc.NewClient(member, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := testCtx(t)
	hc := healthpb.NewHealthClient(conn)
	for _, svc := range []string{"", cluster.HealthService} {
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v, %v; want SERVING", svc, resp, err)
		}
	}
	if _, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("Check(nope) = %v, want NotFound", err)
	}
	w, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := w.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("Watch first = %v, %v; want SERVING", resp, err)
	}
	// Any other unknown method is Unimplemented.
	err = conn.Invoke(ctx, "/grpc.health.v1.Health/List", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("List = %v, want Unimplemented", err)
	}
}
