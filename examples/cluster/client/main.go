// Command client applies operations to the bank example's accounts as a
// cluster client: it joins, sends each operation to its account wherever
// the cluster hosts it, prints the balances and leaves.
//
//	client --cluster bank --etcd http://etcd:2379 alice+100 bob+50 alice-30 alice
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
	"strconv"
	"strings"
	"syscall"
	"time"

	pcluster "github.com/asynkron/protoactor-go/cluster"

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

// run applies the operations of args and returns the exit status: 0 (and
// -h prints the usage); 2 for a bad command line, reported in one line and
// a hint; 1 when an operation or the client failed.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	name := fs.String("cluster", "bank", "cluster name")
	peers := fs.String("peers", "", "comma-separated HOST:PORT of members (without --etcd)")
	etcd := fs.String("etcd", "", "comma-separated etcd endpoints")
	timeout := fs.Duration("timeout", 10*time.Second, "deadline of the whole run")
	fs.SetOutput(io.Discard) // -h prints the usage below; a mistake is one line
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stderr, "Usage: client [--cluster NAME] (--peers HOST:PORT,... | --etcd ENDPOINTS) [--timeout D] OP...\n\n",
			"Apply each OP to its account as a cluster client and print the balances: ACCOUNT+N\n",
			"deposits, ACCOUNT-N withdraws, ACCOUNT reads.\n\nFlags:\n")
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return 0
	}
	var ops []accountOp
	if err == nil {
		ops, err = parseOps(fs.Args())
	}
	if err != nil {
		fmt.Fprintf(stderr, "client: %v\nRun 'client -h' for usage.\n", err)
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "client: %v\n", err)
		return 1
	}
	var provider pcluster.ClusterProvider
	if *etcd != "" {
		if provider, err = cluster.Etcd(strings.Split(*etcd, ",")); err != nil {
			return fail(err)
		}
	} else {
		provider = cluster.Peers(strings.Split(*peers, ","))
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	bank.Register()
	prov, err := telemetry.Setup(ctx, telemetry.WithServiceName("bank-client"), telemetry.WithCluster(*name))
	if err != nil {
		return fail(err)
	}
	defer prov.Shutdown(context.Background()) // flush the client's spans
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := cluster.Start(ctx, *name, provider, nil, cluster.AsClient(), cluster.WithLogger(log), cluster.WithTelemetry(prov))
	if err != nil {
		return fail(fmt.Errorf("joining: %w", err))
	}
	defer c.Close(context.Background())
	code := 0
	for _, op := range ops {
		b, err := bank.Apply(ctx, c, op.account, bank.Op{Amount: op.amount})
		if err != nil {
			fmt.Fprintf(stdout, "%s %+d: error: %v\n", op.account, op.amount, err)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "%s %+d: balance %d after %d ops\n", op.account, op.amount, b.Balance, b.Ops)
	}
	return code
}

// accountOp is one operation of the command line: ACCOUNT+N, ACCOUNT-N or
// ACCOUNT (read).
type accountOp struct {
	account string
	amount  int64
}

// parseOps parses the operations.
func parseOps(args []string) ([]accountOp, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("no operations (ACCOUNT+N, ACCOUNT-N or ACCOUNT)")
	}
	out := make([]accountOp, 0, len(args))
	for _, a := range args {
		i := strings.IndexAny(a, "+-")
		if i < 0 {
			out = append(out, accountOp{account: a})
			continue
		}
		n, err := strconv.ParseInt(a[i:], 10, 64)
		if err != nil || i == 0 {
			return nil, fmt.Errorf("bad operation %q (want ACCOUNT+N, ACCOUNT-N or ACCOUNT)", a)
		}
		out = append(out, accountOp{account: a[:i], amount: n})
	}
	return out, nil
}
