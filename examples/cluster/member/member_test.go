package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
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

func TestMain(m *testing.M) {
	if args, ok := testproc.ChildArgs(); ok {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, args, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	goleak.VerifyTestMain(m, testproc.ProtoActorThrottles()...)
}

// TestMemberServesAccounts runs the member program, sends it account
// operations from a client, and reads its admin endpoint.
func TestMemberServesAccounts(t *testing.T) {
	name := fmt.Sprintf("bank-%d", time.Now().UnixNano())
	mem := testproc.StartMember(t, "--cluster", name, "--peers", "", "--admin", "127.0.0.1:0")
	adminAddr := mem.LogValue("admin endpoint", "address")
	if adminAddr == "" {
		t.Fatalf("no admin endpoint logged:\n%s", mem.Stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bank.Register()
	c, err := cluster.Start(ctx, name, cluster.Peers([]string{mem.Address}), nil, cluster.AsClient(), cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for _, amount := range []int64{100, 50, -30} {
		if _, err := bank.Apply(ctx, c, "alice", bank.Op{Amount: amount}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bank.Apply(ctx, c, "alice", bank.Op{})
	if err != nil || b.Balance != 120 || b.Ops != 3 {
		t.Fatalf("alice = %+v, %v; want balance 120 after 3 ops", b, err)
	}
	_, err = bank.Apply(ctx, c, "alice", bank.Op{Amount: -1000})
	var re *cluster.RemoteError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "insufficient funds") {
		t.Fatalf("overdraft = %v, want a remote insufficient-funds error", err)
	}
	for path, want := range map[string]string{
		"/readyz":  "ready",
		"/metrics": `ringactor_messages_processed_total{kernel="account/alice"`,
		"/kernels": `"name":"account/alice"`,
	} {
		resp, err := http.Get("http://" + adminAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s = %d, lacks %q", path, resp.StatusCode, want)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestCommandLine: -h prints the usage and exits 0, as ringactor's
// commands do; a stray argument is a usage error, exit 2.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-h"}, 0, "Usage: member "},
		{[]string{"--help"}, 0, "Usage: member "},
		{[]string{"stray"}, 2, "member: unexpected argument \"stray\"\nRun 'member -h' for usage.\n"},
	} {
		var out, errb strings.Builder
		if code := run(context.Background(), tc.args, &out, &errb); code != tc.code || !strings.HasPrefix(errb.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d, %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}
