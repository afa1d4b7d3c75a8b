package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/examples/cluster/bank"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

// TestMain runs a member hosting the bank kinds when started as a child.
func TestMain(m *testing.M) {
	if args, ok := testproc.ChildArgs(); ok {
		os.Exit(hostAccounts(args[0]))
	}
	goleak.VerifyTestMain(m, testproc.ProtoActorThrottles()...)
}

// hostAccounts is the child: a member of the cluster name hosting the bank
// kinds until SIGTERM.
func hostAccounts(name string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	bank.Register()
	m, err := cluster.Start(ctx, name, cluster.Peers(nil), bank.Kinds(), cluster.WithLogger(actors.DiscardLogger()))
	if err == nil {
		err = m.WaitReady(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("member %s\n", m.Address())
	<-ctx.Done()
	if err := m.Close(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func TestClientAppliesOperations(t *testing.T) {
	name := fmt.Sprintf("bank-client-%d", time.Now().UnixNano())
	mem := testproc.StartMember(t, name)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--cluster", name, "--peers", mem.Address, "bob+50", "bob-20", "bob-100", "bob"}, &out, &errb)
	if code != 1 {
		t.Errorf("exit %d, want 1 (one operation failed); stderr %s", code, errb.String())
	}
	got := out.String()
	for _, want := range []string{
		"bob +50: balance 50 after 1 ops\n",
		"bob -20: balance 30 after 2 ops\n",
		"bob -100: error: ",
		"insufficient funds",
		"bob +0: balance 30 after 2 ops\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestParseOps(t *testing.T) {
	ops, err := parseOps([]string{"a+1", "b-2", "c"})
	if err != nil || len(ops) != 3 || ops[0] != (accountOp{"a", 1}) || ops[1] != (accountOp{"b", -2}) || ops[2] != (accountOp{"c", 0}) {
		t.Fatalf("parseOps = %v, %v", ops, err)
	}
	for _, bad := range [][]string{nil, {"+5"}, {"a+x"}, {"a+99999999999999999999"}} {
		if _, err := parseOps(bad); err == nil {
			t.Errorf("parseOps(%q) accepted", bad)
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--cluster", "x"}, &out, &errb); code != 2 {
		t.Errorf("no operations: exit %d, want 2", code)
	}
}

// TestHelpExitsZero: -h prints the usage and exits 0, as ringactor's
// commands do; a bad flag is one line and a hint, exit 2.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 0 || !strings.HasPrefix(errb.String(), "Usage: client ") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"--nope"}, &out, &errb); code != 2 ||
		errb.String() != "client: flag provided but not defined: -nope\nRun 'client -h' for usage.\n" {
		t.Errorf("bad flag: exit %d, stderr %q", code, errb.String())
	}
}
