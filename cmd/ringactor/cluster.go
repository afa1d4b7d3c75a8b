package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	pcluster "github.com/asynkron/protoactor-go/cluster"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/internal/bench"
	"github.com/ringactor/ringactor/internal/demo"
	"github.com/ringactor/ringactor/persistence"
	"github.com/ringactor/ringactor/telemetry"
)

// Help text of the serve and call commands.
const (
	serveSynopsis    = "--cluster NAME [--bind HOST:PORT] [--advertise HOST:PORT] (--peers HOST:PORT,... | --etcd ENDPOINTS | --provider k8s) [--sim-devices N] [--state-store URL] [--admin ADDR [--pprof]] [-v]"
	serveDescription = `Run a member of the cluster NAME hosting the built-in kinds until SIGINT or
SIGTERM: echo (replies with the JSON object it is sent), add
({"a":[...],"b":[...]} -> {"sum":[...]}) and counter ({} or {"by":N} ->
{"count":...,"activation":...}: the identity's count after the request,
kept when the identity moves) and devscale, a device ring kernel placed
only on members with a CUDA device ({} or {"by":N} -> {"calls":...,
"placement":"HOST:PORT/cuda:sim1"}; --sim-devices N gives a member N
simulated devices). Each activated identity runs its own ring kernel, on
the one member that owns it. It binds 127.0.0.1 on a free port
unless --bind says otherwise (a wildcard address is logged as a warning),
advertises --advertise to the others (default: the bind address; for a
wildcard bind, the host's first non-loopback address, logged) and prints
"member HOST:PORT" (the advertised address) on stdout once it has joined.
Members find one another through --peers, the remote addresses of some
members (the first member of a cluster may give none: --peers ""),
through etcd, or on Kubernetes through the API server (--provider k8s:
the member annotates its own pod, $POD_NAME in $POD_NAMESPACE, and watches
the pods labelled ringactor.io/cluster=NAME; see deploy/); nodes of another
cluster name are refused (logged as an error). On a signal it leaves gracefully: passivates its identities (their
kernels drain and answer what they hold; counter hands its count to the
next owner), tells its peers and stops; the exit status is 0.

State: --state-store URL keeps counter's count in a state store, saved
before each reply (write-through), so that it survives a SIGKILL of its
owner: file:///absolute/path.db for an embedded bbolt file (a cluster of
one member: the file is locked by one process), postgres://USER@HOST/DB
for a PostgreSQL table that every member shares. With it, call
--idempotency-key makes a retried request answered, not applied again.

Operations: --admin ADDR (PORT alone means 127.0.0.1:PORT) serves /metrics
(Prometheus), /healthz, /readyz (503 until joined, 503 again while
leaving), /kernels (JSON) and, with --pprof, /debug/pprof/; the admin
endpoint starts before the member joins. The remote port also answers
grpc.health.v1. Metrics and traces are also pushed where the standard
OTEL_* environment says (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_*_EXPORTER, ...).

Every flag can also be given in the environment as RINGACTOR_ and its name
in capitals, '-' as '_' (RINGACTOR_CLUSTER, RINGACTOR_BIND,
RINGACTOR_ADVERTISE, RINGACTOR_PROVIDER, RINGACTOR_ADMIN, ...); a flag on
the command line wins over its variable.
`
	callSynopsis    = "--cluster NAME (--peers HOST:PORT,... | --etcd ENDPOINTS | --provider k8s) --kind KIND --identity ID --data '{...}' [--timeout D] [--idempotency-key K]"
	callDescription = `Send one JSON request to the identity ID of kind KIND in the cluster NAME,
as a cluster client, and print the reply as JSON on stdout. On failure it
prints the typed error on stderr and exits 1 (unknown kind, timeout,
member unavailable, remote decode or execution error).
`
)

// serveCommand is the "serve" subcommand.
var serveCommand = command{
	name:    "serve",
	summary: "run a cluster member hosting the built-in kinds (echo, add, counter, devscale) until a signal",
	run:     runServeCommand,
}

// callCommand is the "call" subcommand.
var callCommand = command{
	name:    "call",
	summary: "send one JSON request to a cluster identity and print the reply",
	run:     runCallCommand,
}

// discoveryFlags are the flags that say how a node finds the cluster.
type discoveryFlags struct {
	name    *string
	peers   *string
	etcd    *string
	kind    *string // --provider
	tlsCA   *string
	tlsCert *string
	tlsKey  *string
}

// addDiscoveryFlags defines the discovery and TLS flags in fs.
func addDiscoveryFlags(fs *flagSet) *discoveryFlags {
	return &discoveryFlags{
		name:    fs.String("cluster", "", "cluster name (required)"),
		peers:   fs.String("peers", "", "comma-separated remote addresses (HOST:PORT) of cluster members"),
		etcd:    fs.String("etcd", "", "comma-separated etcd endpoints (http://HOST:PORT)"),
		kind:    fs.String("provider", "", "how members find one another: `peers`, etcd or k8s (default: the one --peers or --etcd names)"),
		tlsCA:   fs.String("tls-ca", "", "PEM file of the CA that signs every member's certificate (mutual TLS between members)"),
		tlsCert: fs.String("tls-cert", "", "PEM file of this node's certificate (with --tls-ca)"),
		tlsKey:  fs.String("tls-key", "", "PEM file of this node's private key (with --tls-ca)"),
	}
}

// tlsOptions returns the member options of the TLS flags: none without
// them, mutual TLS with all three.
func (d *discoveryFlags) tlsOptions() ([]cluster.Option, error) {
	n := 0
	for _, s := range []string{*d.tlsCA, *d.tlsCert, *d.tlsKey} {
		if s != "" {
			n++
		}
	}
	switch n {
	case 0:
		return nil, nil
	case 3:
		cfg, err := cluster.LoadMutualTLS(*d.tlsCA, *d.tlsCert, *d.tlsKey)
		if err != nil {
			return nil, err
		}
		return []cluster.Option{cluster.WithTLS(cfg)}, nil
	}
	return nil, errors.New("--tls-ca, --tls-cert and --tls-key go together") // check rejects it first
}

// check reports a usage mistake in the discovery flags: no cluster name,
// both or neither of --peers and --etcd, an address of --peers that is not
// HOST:PORT, or some of the TLS flags without the others.
func (d *discoveryFlags) check(fs *flagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case *d.name == "":
		return errors.New("--cluster is required")
	case *d.kind != "" && *d.kind != "peers" && *d.kind != "etcd" && *d.kind != "k8s":
		return fmt.Errorf("--provider %q: want peers, etcd or k8s", *d.kind)
	case *d.kind == "k8s" && (set["peers"] || set["etcd"]):
		return errors.New("--provider k8s takes neither --peers nor --etcd")
	case *d.kind == "k8s":
	case *d.kind == "etcd" && set["peers"], *d.kind == "peers" && set["etcd"]:
		return fmt.Errorf("--provider %s does not go with --peers or --etcd of another provider", *d.kind)
	case set["peers"] && set["etcd"]:
		return errors.New("give --peers or --etcd, not both")
	case set["etcd"]:
		if len(splitList(*d.etcd)) == 0 {
			return errors.New("--etcd needs at least one endpoint")
		}
	case set["peers"]:
		for _, p := range splitList(*d.peers) {
			if err := checkHostPort(p); err != nil {
				return fmt.Errorf("--peers: %w", err)
			}
		}
	default:
		return errors.New("give --peers HOST:PORT,... (--peers \"\" for the first member) or --etcd ENDPOINTS")
	}
	n := 0
	for _, s := range []string{*d.tlsCA, *d.tlsCert, *d.tlsKey} {
		if s != "" {
			n++
		}
	}
	if n != 0 && n != 3 {
		return errors.New("--tls-ca, --tls-cert and --tls-key go together")
	}
	return nil
}

// provider returns the cluster provider the flags name, which check has
// accepted. etcd is dialled here: an unreachable etcd is a failure at run
// time.
func (d *discoveryFlags) provider() (pcluster.ClusterProvider, error) {
	if *d.kind == "k8s" {
		return cluster.Kubernetes()
	}
	if *d.etcd != "" {
		return cluster.Etcd(splitList(*d.etcd))
	}
	return cluster.Peers(splitList(*d.peers)), nil
}

// nameFlag prefixes an error of cluster.Start about an address with the
// flag that gave it (--peers for a seed, --bind, --advertise), so that the
// one line on stderr says what to change.
func nameFlag(err error) error {
	var ae *cluster.AddressError
	if !errors.As(err, &ae) {
		return err
	}
	switch ae.Which {
	case "seed":
		return fmt.Errorf("--peers: %w", err)
	case "bind", "advertise":
		return fmt.Errorf("--%s: %w", ae.Which, err)
	}
	return err
}

// checkHostPort reports whether addr is HOST:PORT with a port number from 0
// to 65535 (the host may be empty: every interface).
func checkHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT: %w", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	return nil
}

// checkAdvertise reports whether addr is HOST:PORT with a host other
// nodes can reach: not empty, not a wildcard.
func checkAdvertise(addr string) error {
	if err := checkHostPort(addr); err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Errorf("%q: a wildcard address cannot be reached by other nodes; give this host's address", addr)
	}
	return nil
}

// splitList splits a comma-separated list, dropping blank entries.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// serveFlags are the serve command's parsed flags.
type serveFlags struct {
	fs                  *flagSet
	disc                *discoveryFlags
	adm                 *adminFlags
	bind, adv           *string
	verbose, benchKinds *bool
	simDevs             *int
	stateStore          *string
}

// parseServe parses the serve command's flags, from args and then from the
// RINGACTOR_ variables that lookup reads (os.LookupEnv when nil), and checks
// them. When ok is false the command must not run and code is its exit
// status (the mistake already reported on stderr).
func parseServe(args []string, stderr io.Writer, lookup func(string) (string, bool)) (s serveFlags, code int, ok bool) {
	fs := newFlagSet("serve", serveSynopsis, serveDescription, stderr)
	fs.env, fs.lookupEnv = envName, lookup
	s = serveFlags{fs: fs, disc: addDiscoveryFlags(fs),
		bind:       fs.String("bind", cluster.DefaultAddress, "HOST:PORT the member's remote binds to"),
		adv:        fs.String("advertise", "", "HOST:PORT other nodes reach this member at (default: the bind address; never a wildcard)"),
		verbose:    fs.Bool("v", false, "log at debug level"),
		benchKinds: fs.Bool("bench-kinds", false, "also host the plain Proto.Actor echo kind that ringactor bench --cluster compares with"),
		simDevs:    fs.Int("sim-devices", 0, "give the member N simulated CUDA devices (cuda:sim0, cuda:sim1, ...; for tests and demos without a GPU; a Linux build with cgo)"),
		stateStore: fs.String("state-store", "", "keep the counter kind's state in a state store: `URL` file:///path (embedded, one member) or postgres://… (shared by the members)"),
		adm:        addAdminFlags(fs)}
	if code, ok := parseFlags(fs, args); !ok {
		return s, code, false
	}
	if err := s.adm.check(); err != nil {
		return s, usageError(fs, "%v", err), false
	}
	if err := s.disc.check(fs); err != nil {
		return s, usageError(fs, "%v", err), false
	}
	if err := checkHostPort(*s.bind); err != nil {
		return s, usageError(fs, "--bind: %v", err), false
	}
	if *s.stateStore != "" {
		if err := checkStateStoreURL(*s.stateStore); err != nil {
			return s, usageError(fs, "--state-store: %v", err), false
		}
	}
	if *s.simDevs < 0 {
		return s, usageError(fs, "--sim-devices %d: want 0 or more", *s.simDevs), false
	}
	if *s.adv != "" {
		if err := checkAdvertise(*s.adv); err != nil {
			return s, usageError(fs, "--advertise: %v", err), false
		}
	}
	return s, exitOK, true
}

// runServeCommand parses the serve command's flags and runs a member until
// ctx ends.
func runServeCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	s, code, ok := parseServe(args, stderr, nil)
	if !ok {
		return code
	}
	fs, disc, adm, bind, adv, verbose, benchKinds, simDevs := s.fs, s.disc, s.adm, s.bind, s.adv, s.verbose, s.benchKinds, s.simDevs
	tlsOpts, err := disc.tlsOptions()
	if err != nil {
		return failure(stderr, "serve", err)
	}
	provider, err := disc.provider()
	if err != nil {
		return failure(stderr, "serve", err)
	}
	log := fs.newLogger(*verbose)
	ops, err := startOps(ctx, adm, *disc.name, *bind, log)
	if err != nil {
		return failure(stderr, "serve", err)
	}
	ops.prov.SetGlobal() // Proto.Actor's actor metrics use the global meter provider
	defer func() {
		if err := ops.close(); err != nil {
			log.Warn("stopping the admin endpoint and telemetry", slog.Any("error", err))
		}
	}()
	var self atomic.Pointer[string] // the member's address, for the counter's replies
	kinds := demo.Kinds(func() string {
		if a := self.Load(); a != nil {
			return *a
		}
		return ""
	})
	opts := append([]cluster.Option{cluster.WithAddress(*bind), cluster.WithLogger(log), cluster.WithTelemetry(ops.prov), cluster.WithActorMetrics(ops.prov.MeterProvider)}, tlsOpts...)
	if *adv != "" {
		opts = append(opts, cluster.WithAdvertise(*adv))
	}
	if *verbose {
		opts = append(opts, cluster.WithProtoActorLogLevel(slog.LevelDebug))
	}
	if *simDevs > 0 {
		sims, err := simulatedDevices(*simDevs)
		if err != nil {
			return failure(stderr, "serve", err)
		}
		backends := make([]gpu.Backend, len(sims))
		for i, b := range sims {
			backends[i] = b
			defer func() { _ = b.Close() }() // after the member has closed
		}
		opts = append(opts, cluster.WithRuntimeOptions(actors.WithBackends(backends...)))
	}
	if *s.stateStore != "" {
		octx, ocancel := context.WithTimeout(ctx, 30*time.Second)
		store, err := persistence.OpenURL(octx, *s.stateStore, persistence.WithLogger(log))
		ocancel()
		if err != nil {
			return failure(stderr, "serve", fmt.Errorf("--state-store: %w", err))
		}
		defer func() { _ = store.Close() }() // after the member has closed
		opts = append(opts, cluster.WithStateStore(store))
	}
	if *benchKinds {
		bk, echo := bench.ClusterKinds()
		kinds = append(kinds, bk...)
		opts = append(opts, cluster.WithProtoKinds(echo))
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	m, err := cluster.Start(sctx, *disc.name, provider, kinds, opts...)
	err = nameFlag(err)
	if err == nil {
		ops.member.Store(m)
		if err = m.WaitReady(sctx); err != nil {
			err = errors.Join(fmt.Errorf("joining: %w", err), m.Close(context.Background()))
		}
	}
	cancel()
	if err != nil {
		return failure(stderr, "serve", err)
	}
	addr := m.Address()
	self.Store(&addr)
	fmt.Fprintf(stdout, "member %s\n", m.Address())
	log.Info("serving", slog.String("cluster", *disc.name), slog.String("address", m.Address()), slog.String("kinds", "echo,add,counter,devscale"), slog.Int("devices", len(m.Runtime().Devices())))
	<-ctx.Done()
	log.Info("leaving the cluster", slog.String("address", m.Address()))
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	if err := m.Close(cctx); err != nil {
		return failure(stderr, "serve", err)
	}
	return exitOK
}

// runCallCommand parses the call command's flags and sends one request.
func runCallCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, code, ok := parseCall(args, stderr)
	if !ok {
		return code
	}
	tlsOpts, err := c.disc.tlsOptions()
	if err != nil {
		return failure(stderr, "call", err)
	}
	provider, err := c.disc.provider()
	if err != nil {
		return failure(stderr, "call", err)
	}
	// The outcome goes to stdout or, as the typed error, to stderr; the
	// client's own logs (Proto.Actor reports every connection it closes at
	// error level) only with -v.
	log := actors.DiscardLogger()
	if c.verbose || c.logs.set {
		log = c.logs.logger(stderr, slog.LevelInfo, c.verbose)
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// Spans and the request duration go where the OTEL_* environment says
	// (nowhere by default); they are flushed before the command exits.
	prov, err := telemetry.Setup(cctx, telemetry.WithCluster(*c.disc.name))
	if err != nil {
		return failure(stderr, "call", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := prov.Shutdown(ctx); err != nil {
			log.Warn("flushing telemetry", slog.Any("error", err))
		}
	}()
	client, err := cluster.Start(cctx, *c.disc.name, provider, nil, append(tlsOpts, cluster.AsClient(), cluster.WithLogger(log), cluster.WithTelemetry(prov))...)
	if err != nil {
		if errors.Is(err, cluster.ErrBadAddress) {
			return failure(stderr, "call", nameFlag(err))
		}
		return failure(stderr, "call", fmt.Errorf("joining the cluster: %w", err))
	}
	defer closeWithin(cctx, client)
	demo.Register() // the JSON forms of the demo kinds echo and add
	rctx := cctx
	if c.idemKey != "" {
		rctx = cluster.WithIdempotencyKey(cctx, c.idemKey)
	}
	out, err := cluster.RequestJSON(rctx, client, c.kind, c.identity, []byte(c.body))
	if err != nil {
		return failure(stderr, "call", err)
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return exitOK
}

// closeWithin closes a one-shot client, waiting for it at most until ctx's
// deadline (and at least a moment): Proto.Actor's remote can hold its
// shutdown for seconds for a connection to a member that died, and the
// call's deadline covers the whole command. What is left ends with the
// process.
func closeWithin(ctx context.Context, client *cluster.Member) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Close(cctx)
	}()
	wait := 100 * time.Millisecond
	if d, ok := ctx.Deadline(); ok {
		wait = max(wait, time.Until(d))
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// callConfig is the call command's parsed command line.
type callConfig struct {
	disc           *discoveryFlags
	kind, identity string
	body           string // the request, a JSON value
	timeout        time.Duration
	verbose        bool
	logs           logFlags // --log-level, --log-format
	idemKey        string   // --idempotency-key; "": none
}

// parseCall parses the call command's flags. --data is the request body;
// --json, its old name, still works but prints a deprecation notice on
// stderr. When ok is false the command must not run and code is its exit
// status.
func parseCall(args []string, stderr io.Writer) (c callConfig, code int, ok bool) {
	fs := newFlagSet("call", callSynopsis, callDescription, stderr)
	c.disc = addDiscoveryFlags(fs)
	fs.StringVar(&c.kind, "kind", "", "kind of the identity (required)")
	fs.StringVar(&c.identity, "identity", "", "identity to call (required)")
	fs.StringVar(&c.body, "data", "", "the request `body`, a JSON value (required)")
	legacy := fs.String("json", "", "deprecated: the old name of --data")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "deadline of the call, joining the cluster included")
	fs.BoolVar(&c.verbose, "v", false, "log at debug level")
	fs.StringVar(&c.idemKey, "idempotency-key", "", "a `key` of your choice that makes the request applied at most once: a retry with the same key is answered from the identity's stored record (members with --state-store)")
	if code, ok := parseFlags(fs, args); !ok {
		return c, code, false
	}
	c.logs = fs.log
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["json"] {
		fmt.Fprintln(stderr, "ringactor call: --json for the request body is deprecated and will be removed; use --data")
		if set["data"] {
			return c, usageError(fs, "give --data or --json (deprecated), not both"), false
		}
		c.body = *legacy
	}
	if err := c.disc.check(fs); err != nil {
		return c, usageError(fs, "%v", err), false
	}
	switch {
	case c.kind == "":
		return c, usageError(fs, "--kind is required"), false
	case c.identity == "":
		return c, usageError(fs, "--identity is required"), false
	case !set["data"] && !set["json"]:
		return c, usageError(fs, "--data is required"), false
	case !json.Valid([]byte(c.body)):
		return c, usageError(fs, "--data must be a JSON value, got %s", quoteClip(c.body)), false
	case c.timeout <= 0:
		return c, usageError(fs, "--timeout must be positive"), false
	case set["idempotency-key"]:
		if err := cluster.CheckIdempotencyKey(c.idemKey); err != nil {
			return c, usageError(fs, "--idempotency-key: %v", err), false
		}
	}
	return c, exitOK, true
}

// checkStateStoreURL reports a --state-store URL that names no store
// provider, before anything starts.
func checkStateStoreURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	switch strings.ToLower(u.Scheme) {
	case "file":
		if !strings.HasPrefix(u.Path, "/") {
			return fmt.Errorf("%q: want file:///absolute/path", raw)
		}
	case "postgres", "postgresql", "mem", "memory":
	default:
		return fmt.Errorf("%q: want file:///path or postgres://…", raw)
	}
	return nil
}
