package multiproc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/demo"
	"github.com/ringactor/ringactor/messages"
)

// Who asks an activation of the whoami kind where it runs.
type Who struct{ Seq int }

// Here is whoami's reply: the member's address and how many messages this
// activation has handled.
type Here struct {
	Addr  string
	Count int
}

func init() {
	messages.MustRegister[Who]("ringactor.multiproc.Who")
	messages.MustRegister[Here]("ringactor.multiproc.Here")
}

// memberAddr is the child member's address, set once it has started.
var memberAddr string

func whoami() actors.Handler[Who, Here] {
	n := 0
	return func(context.Context, Who) (Here, error) {
		n++
		return Here{Addr: memberAddr, Count: n}, nil
	}
}

func testKinds() []*cluster.Kind {
	return append(demo.Kinds(func() string { return memberAddr }), cluster.NewKind("whoami", whoami))
}

const (
	clusterName = "multiproc"
	// childEnv names what a child process runs: member, or one of the
	// client scenarios of client_test.go.
	childEnv = "RINGACTOR_MULTIPROC_CHILD"
	seedsEnv = "RINGACTOR_MULTIPROC_SEEDS"
)

// seeds returns the addresses in seedsEnv.
func seeds() []string {
	if s := os.Getenv(seedsEnv); s != "" {
		return strings.Split(s, ",")
	}
	return nil
}

// runMember runs one member until SIGTERM, SIGINT or the end of its stdin
// (its parent is gone), then closes it gracefully.
func runMember() int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := cluster.Start(ctx, clusterName, cluster.Peers(seeds()), testKinds(), cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		return 1
	}
	memberAddr = m.Address()
	fmt.Printf("ADDR %s\n", m.Address())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-sig:
	case <-eof:
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	if err := m.Close(cctx); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		return 1
	}
	return 0
}
