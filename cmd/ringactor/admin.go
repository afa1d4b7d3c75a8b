package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/ringactor/ringactor/admin"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/stream"
	"github.com/ringactor/ringactor/telemetry"
)

// adminFlags are serve's operations flags.
type adminFlags struct {
	addr  *string
	pprof *bool
}

// addAdminFlags defines --admin and --pprof in fs.
func addAdminFlags(fs *flagSet) *adminFlags {
	return &adminFlags{
		addr:  fs.String("admin", "", "serve the dashboard (/), /metrics, /healthz, /readyz, /kernels on `ADDR` (PORT means 127.0.0.1:PORT; off by default)"),
		pprof: fs.Bool("pprof", false, "also serve /debug/pprof on the --admin address"),
	}
}

// check reports a bad --admin address, or --pprof without --admin.
func (a *adminFlags) check() error {
	if *a.addr == "" {
		if *a.pprof {
			return errors.New("--pprof needs --admin")
		}
		return nil
	}
	if _, err := admin.ListenAddress(*a.addr); err != nil {
		return fmt.Errorf("--admin: %w", err)
	}
	return nil
}

// memberOps is serve's operations side: the telemetry providers, the admin
// endpoint (when asked for), and the member it reports on once started.
type memberOps struct {
	prov   *telemetry.Providers
	server *admin.Server
	member atomic.Pointer[cluster.Member]
}

// startOps builds the telemetry providers from the OTEL_* environment (with
// a Prometheus reader when the admin endpoint is on) and starts the admin
// endpoint: until the member has joined, /readyz answers 503.
func startOps(ctx context.Context, a *adminFlags, clusterName, bind string, log *slog.Logger) (*memberOps, error) {
	sopts := []telemetry.SetupOption{telemetry.WithCluster(clusterName)}
	if bind != "" && !hasPortZero(bind) {
		sopts = append(sopts, telemetry.WithMemberAddress(bind))
	}
	if *a.addr != "" {
		sopts = append(sopts, telemetry.WithPrometheus())
	}
	prov, err := telemetry.Setup(ctx, sopts...)
	if err != nil {
		return nil, err
	}
	ops := &memberOps{prov: prov}
	if *a.addr == "" {
		return ops, nil
	}
	h := admin.New(
		admin.WithMetrics(prov.PrometheusHandler()),
		admin.WithKernels(ops.kernels),
		admin.WithCluster(ops.member.Load),
		admin.WithGraphs(ops.graphs),
		admin.WithDevices(ops.devices),
		admin.WithReadiness(ops.ready),
		admin.WithPprof(*a.pprof))
	ops.server, err = admin.Listen(ctx, *a.addr, h)
	if err != nil {
		_ = prov.Shutdown(ctx)
		return nil, err
	}
	log.Info("admin endpoint", slog.String("address", ops.server.Addr()), slog.Bool("pprof", *a.pprof))
	return ops, nil
}

// hasPortZero reports whether HOST:PORT asks for any free port.
func hasPortZero(hostPort string) bool {
	return len(hostPort) >= 2 && hostPort[len(hostPort)-2:] == ":0"
}

// ready is /readyz: the member's readiness, not ready before it exists.
func (o *memberOps) ready() error {
	m := o.member.Load()
	if m == nil {
		return fmt.Errorf("%w: starting", cluster.ErrNotReady)
	}
	return m.Ready()
}

// kernels is /kernels: the member runtime's kernels.
func (o *memberOps) kernels() []telemetry.KernelStats {
	if m := o.member.Load(); m != nil {
		return m.Runtime().Stats()
	}
	return nil
}

// graphs is the dashboard's stream view: the member runtime's graphs.
func (o *memberOps) graphs() []*stream.Graph {
	if m := o.member.Load(); m != nil {
		return stream.Graphs(m.Runtime())
	}
	return nil
}

// devices is the dashboard's devices view: the member runtime's backends.
func (o *memberOps) devices() []gpu.Backend {
	if m := o.member.Load(); m != nil {
		return m.Runtime().Backends()
	}
	return nil
}

// close stops the admin endpoint and flushes the telemetry exporters.
func (o *memberOps) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	if o.server != nil {
		errs = append(errs, o.server.Close(ctx))
	}
	errs = append(errs, o.prov.Shutdown(ctx))
	return errors.Join(errs...)
}
