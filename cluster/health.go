package cluster

import (
	"context"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// HealthService is the service name, besides "" (the whole server), that
// the member's grpc.health.v1 answers for.
const HealthService = "ringactor"

// gRPC method names of grpc.health.v1.
const (
	healthCheck = "/grpc.health.v1.Health/Check"
	healthWatch = "/grpc.health.v1.Health/Watch"
)

// healthService serves the standard grpc.health.v1 Health service (Check
// and Watch) on the member's remote port: Proto.Actor builds that gRPC
// server and registers only its own service, so the health methods are
// answered by grpc.UnknownServiceHandler. SERVING when Ready returns nil,
// NOT_SERVING before the member has joined and while it leaves; unknown
// services are NotFound and any other method Unimplemented. The option is
// appended to the server options the other remote options (TLS) set.
func healthService(m *Member) remote.ConfigOption {
	return func(rc *remote.Config) {
		rc.ServerOptions = append(rc.ServerOptions, grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
			method, _ := grpc.MethodFromServerStream(stream)
			switch method {
			case healthCheck, healthWatch:
			default:
				return status.Errorf(codes.Unimplemented, "unknown method %s", method)
			}
			var req healthpb.HealthCheckRequest
			if err := stream.RecvMsg(&req); err != nil {
				return err
			}
			if s := req.GetService(); s != "" && s != HealthService {
				return status.Errorf(codes.NotFound, "unknown service %q (this server has %q)", s, HealthService)
			}
			if method == healthCheck {
				return stream.SendMsg(&healthpb.HealthCheckResponse{Status: m.servingStatus()})
			}
			return m.watchHealth(stream.Context(), stream)
		}))
	}
}

// servingStatus is the member's health status now.
func (m *Member) servingStatus() healthpb.HealthCheckResponse_ServingStatus {
	if m.Ready() != nil {
		return healthpb.HealthCheckResponse_NOT_SERVING
	}
	return healthpb.HealthCheckResponse_SERVING
}

// watchHealth sends the member's health status now and again at each
// change (topology changes, leaving) until the stream ends.
func (m *Member) watchHealth(ctx context.Context, stream grpc.ServerStream) error {
	last := healthpb.HealthCheckResponse_SERVICE_UNKNOWN
	for {
		m.mu.Lock()
		changed := m.topoCh
		m.mu.Unlock()
		if st := m.servingStatus(); st != last {
			if err := stream.SendMsg(&healthpb.HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			last = st
		}
		select {
		case <-changed:
		case <-m.closed:
			if last != healthpb.HealthCheckResponse_NOT_SERVING {
				return stream.SendMsg(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_NOT_SERVING})
			}
			<-ctx.Done()
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}
