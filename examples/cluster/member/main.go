// Command member is a ringactor cluster member hosting the bank example's
// account kind, deployed the way a user deploys their own kinds: its own
// main, telemetry from the standard OTEL_* environment, an admin endpoint
// for Prometheus and Kubernetes probes, a graceful leave on SIGTERM.
//
//	member --cluster bank --bind 10.0.0.5:7000 --etcd http://etcd:2379 --admin :9090
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	pcluster "github.com/asynkron/protoactor-go/cluster"

	"github.com/ringactor/ringactor/admin"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/examples/cluster/bank"
	"github.com/ringactor/ringactor/telemetry"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// config is the member's command line.
type config struct {
	cluster, bind, peers, etcd, admin string
	tlsCA, tlsCert, tlsKey            string
}

// run runs the member until ctx ends and returns the exit status: 0 (and
// -h prints the usage); 2 for a bad command line, reported in one line and
// a hint; 1 for a failure, logged.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("member", flag.ContinueOnError)
	fs.StringVar(&c.cluster, "cluster", "bank", "cluster name")
	fs.StringVar(&c.bind, "bind", cluster.DefaultAddress, "HOST:PORT of the member's remote (what other members dial)")
	fs.StringVar(&c.peers, "peers", "", "comma-separated HOST:PORT of members to join (without --etcd)")
	fs.StringVar(&c.etcd, "etcd", "", "comma-separated etcd endpoints (a real deployment)")
	fs.StringVar(&c.admin, "admin", "", "admin endpoint ADDR (/metrics, /healthz, /readyz, /kernels); PORT means loopback")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "CA PEM file (mutual TLS between members, with --tls-cert and --tls-key)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "this member's certificate PEM file")
	fs.StringVar(&c.tlsKey, "tls-key", "", "this member's private key PEM file")
	fs.SetOutput(io.Discard) // -h prints the usage below; a mistake is one line
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stderr, usage)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "member: %v\nRun 'member -h' for usage.\n", err)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	if err := serve(ctx, c, stdout, log); err != nil {
		log.Error("member failed", slog.Any("error", err))
		return 1
	}
	return 0
}

// usage is what -h prints before the flags.
const usage = `Usage: member [--cluster NAME] [--bind HOST:PORT] (--peers HOST:PORT,... | --etcd ENDPOINTS)
              [--admin ADDR] [--tls-ca FILE --tls-cert FILE --tls-key FILE]

Run a member of the bank cluster hosting the account kind until SIGINT or
SIGTERM, then leave gracefully.

Flags:
`

// serve starts telemetry, the admin endpoint and the member, waits for ctx,
// then leaves the cluster gracefully.
func serve(ctx context.Context, c config, stdout io.Writer, log *slog.Logger) (err error) {
	bank.Register()
	prov, err := telemetry.Setup(ctx, telemetry.WithServiceName("bank-member"), telemetry.WithCluster(c.cluster),
		telemetry.WithPrometheus())
	if err != nil {
		return err
	}
	prov.SetGlobal() // Proto.Actor's actor metrics use the global meter provider
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = errors.Join(err, prov.Shutdown(sctx))
	}()

	// The admin endpoint starts first, so that a readiness probe sees 503
	// while the member joins.
	var member atomic.Pointer[cluster.Member]
	if c.admin != "" {
		srv, err := admin.Listen(ctx, c.admin, admin.New(
			admin.WithMetrics(prov.PrometheusHandler()),
			admin.WithReadiness(func() error {
				if m := member.Load(); m != nil {
					return m.Ready()
				}
				return fmt.Errorf("%w: starting", cluster.ErrNotReady)
			}),
			admin.WithKernels(func() []telemetry.KernelStats {
				if m := member.Load(); m != nil {
					return m.Runtime().Stats()
				}
				return nil
			}),
			admin.WithCluster(member.Load))) // the dashboard's cluster view
		if err != nil {
			return err
		}
		log.Info("admin endpoint", slog.String("address", srv.Addr()))
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err = errors.Join(err, srv.Close(sctx))
		}()
	}

	provider, err := c.provider()
	if err != nil {
		return err
	}
	opts := []cluster.Option{cluster.WithAddress(c.bind), cluster.WithLogger(log),
		cluster.WithTelemetry(prov), cluster.WithActorMetrics(prov.MeterProvider)}
	if c.tlsCA != "" {
		tlsCfg, err := cluster.LoadMutualTLS(c.tlsCA, c.tlsCert, c.tlsKey)
		if err != nil {
			return err
		}
		opts = append(opts, cluster.WithTLS(tlsCfg))
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	m, err := cluster.Start(sctx, c.cluster, provider, bank.Kinds(), opts...)
	if err != nil {
		return err
	}
	member.Store(m)
	if err := m.WaitReady(sctx); err != nil {
		return errors.Join(err, m.Close(context.Background()))
	}
	fmt.Fprintf(stdout, "member %s\n", m.Address())
	log.Info("serving", slog.String("cluster", c.cluster), slog.String("address", m.Address()))
	<-ctx.Done()
	// SIGTERM: /readyz turns 503 at once (the member is leaving), the
	// member tells its peers, its accounts' kernels drain and answer what
	// they hold, and the identities move to the other members.
	log.Info("leaving the cluster")
	lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer lcancel()
	return m.Close(lctx)
}

// provider is the cluster provider of the flags: etcd, or the peers list.
func (c config) provider() (pcluster.ClusterProvider, error) {
	if c.etcd != "" {
		return cluster.Etcd(strings.Split(c.etcd, ","))
	}
	var peers []string
	for _, p := range strings.Split(c.peers, ",") {
		if p = strings.TrimSpace(p); p != "" {
			peers = append(peers, p)
		}
	}
	return cluster.Peers(peers), nil
}
