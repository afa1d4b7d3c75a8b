package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	pcluster "github.com/asynkron/protoactor-go/cluster"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/bench"
)

// Help text of the serve and call commands.
const (
	serveSynopsis    = "--cluster NAME [--bind HOST:PORT] (--peers HOST:PORT,... | --etcd ENDPOINTS) [-v]"
	serveDescription = `Run a member of the cluster NAME hosting the built-in kinds until SIGINT or
SIGTERM: echo (replies with the JSON object it is sent) and add
({"a":[...],"b":[...]} -> {"sum":[...]}). Each activated identity runs its
own ring kernel. It binds 127.0.0.1 on a free port unless --bind says
otherwise (a wildcard address is logged as a warning) and prints
"member HOST:PORT" on stdout once it has joined. Members find one another
through --peers, the remote addresses of some members (the first member of
a cluster may give none: --peers ""), or through etcd. On a signal it
leaves gracefully: tells its peers, passivates its identities (their
kernels drain and answer what they hold) and stops; the exit status is 0.
`
	callSynopsis    = "--cluster NAME (--peers HOST:PORT,... | --etcd ENDPOINTS) --kind KIND --identity ID --json '{...}' [--timeout D]"
	callDescription = `Send one JSON request to the identity ID of kind KIND in the cluster NAME,
as a cluster client, and print the reply as JSON on stdout. On failure it
prints the typed error on stderr and exits 1 (unknown kind, timeout,
member unavailable, remote decode or execution error).
`
)

// serveCommand is the "serve" subcommand.
var serveCommand = command{
	name:    "serve",
	summary: "run a cluster member hosting the built-in kinds (echo, add) until a signal",
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
	tlsCA   *string
	tlsCert *string
	tlsKey  *string
}

func addDiscoveryFlags(fs *flag.FlagSet) *discoveryFlags {
	return &discoveryFlags{
		name:    fs.String("cluster", "", "cluster name (required)"),
		peers:   fs.String("peers", "", "comma-separated remote addresses (HOST:PORT) of cluster members"),
		etcd:    fs.String("etcd", "", "comma-separated etcd endpoints (http://HOST:PORT)"),
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
	return nil, errors.New("--tls-ca, --tls-cert and --tls-key go together")
}

// provider checks the flags and returns the cluster provider they name.
func (d *discoveryFlags) provider(fs *flag.FlagSet) (pcluster.ClusterProvider, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case *d.name == "":
		return nil, errors.New("--cluster is required")
	case set["peers"] && set["etcd"]:
		return nil, errors.New("give --peers or --etcd, not both")
	case set["etcd"]:
		eps := splitList(*d.etcd)
		if len(eps) == 0 {
			return nil, errors.New("--etcd needs at least one endpoint")
		}
		return cluster.Etcd(eps)
	case set["peers"]:
		return cluster.Peers(splitList(*d.peers)), nil
	}
	return nil, errors.New("give --peers HOST:PORT,... (--peers \"\" for the first member) or --etcd ENDPOINTS")
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runServeCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", serveSynopsis, serveDescription, stderr)
	disc := addDiscoveryFlags(fs)
	bind := fs.String("bind", cluster.DefaultAddress, "HOST:PORT the member's remote binds to")
	verbose := fs.Bool("v", false, "log at debug level")
	benchKinds := fs.Bool("bench-kinds", false, "also host the plain Proto.Actor echo kind that `ringactor bench --cluster` compares with")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	provider, err := disc.provider(fs)
	if err != nil {
		return usageError(fs, "%v", err)
	}
	tlsOpts, err := disc.tlsOptions()
	if err != nil {
		return usageError(fs, "%v", err)
	}
	log := newLogger(stderr, *verbose)
	kinds := cluster.BuiltinKinds()
	opts := append([]cluster.Option{cluster.WithAddress(*bind), cluster.WithLogger(log)}, tlsOpts...)
	if *benchKinds {
		bk, echo := bench.ClusterKinds()
		kinds = append(kinds, bk...)
		opts = append(opts, cluster.WithProtoKinds(echo))
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	m, err := cluster.Start(sctx, *disc.name, provider, kinds, opts...)
	cancel()
	if err != nil {
		return failure(log, "serve", err)
	}
	fmt.Fprintf(stdout, "member %s\n", m.Address())
	log.Info("serving", slog.String("cluster", *disc.name), slog.String("address", m.Address()), slog.String("kinds", "echo,add"))
	<-ctx.Done()
	log.Info("leaving the cluster", slog.String("address", m.Address()))
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	if err := m.Close(cctx); err != nil {
		return failure(log, "serve", err)
	}
	return exitOK
}

func runCallCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("call", callSynopsis, callDescription, stderr)
	disc := addDiscoveryFlags(fs)
	kind := fs.String("kind", "", "kind of the identity (required)")
	identity := fs.String("identity", "", "identity to call (required)")
	body := fs.String("json", "", "the request, a JSON value (required)")
	timeout := fs.Duration("timeout", 10*time.Second, "deadline of the call, joining the cluster included")
	verbose := fs.Bool("v", false, "log at debug level")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	provider, err := disc.provider(fs)
	if err != nil {
		return usageError(fs, "%v", err)
	}
	switch {
	case *kind == "":
		return usageError(fs, "--kind is required")
	case *identity == "":
		return usageError(fs, "--identity is required")
	case !json.Valid([]byte(*body)):
		return usageError(fs, "--json must be a JSON value, got %q", *body)
	case *timeout <= 0:
		return usageError(fs, "--timeout must be positive")
	}
	tlsOpts, err := disc.tlsOptions()
	if err != nil {
		return usageError(fs, "%v", err)
	}
	// The outcome goes to stdout or, as the typed error, to stderr; the
	// client's own logs (Proto.Actor reports every connection it closes at
	// error level) only with -v.
	log := actors.DiscardLogger()
	if *verbose {
		log = newLogger(stderr, true)
	}
	cctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	c, err := cluster.Start(cctx, *disc.name, provider, nil, append(tlsOpts, cluster.AsClient(), cluster.WithLogger(log))...)
	if err != nil {
		fmt.Fprintf(stderr, "ringactor call: joining the cluster: %v\n", err)
		return exitFailure
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	}()
	out, err := cluster.RequestJSON(cctx, c, *kind, *identity, []byte(*body))
	if err != nil {
		fmt.Fprintf(stderr, "ringactor call: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return exitOK
}
