package multiproc

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/racecheck"
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
	return append(cluster.BuiltinKinds(), cluster.NewKind("whoami", whoami))
}

const (
	childEnv    = "RINGACTOR_MEMBER_CHILD"
	seedsEnv    = "RINGACTOR_MEMBER_SEEDS"
	clusterName = "multiproc"
)

// protoActorLeaks are goroutines Proto.Actor leaves behind by design (see
// package cluster's tests).
var protoActorLeaks = []goleak.Option{
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/cluster.NewGossipActor.NewThrottleWithLogger.func2.1"),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/cluster.(*Gossiper).StartGossiping.NewThrottle.func3.1"),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/remote.(*endpointManager).startActivator.NewThrottle.func1.1"),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/remote.NewThrottle.func1.1"),
	goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/internal/queue/goring.(*Queue).Push"),
}

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(protoActorLeaks...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// runChild runs one member until SIGTERM, SIGINT or the end of its stdin
// (its parent is gone), then closes it gracefully.
func runChild() int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var seeds []string
	if s := os.Getenv(seedsEnv); s != "" {
		seeds = strings.Split(s, ",")
	}
	m, err := cluster.Start(ctx, clusterName, cluster.Peers(seeds), testKinds(), cluster.WithLogger(actors.DiscardLogger()))
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

// child is a member process.
type child struct {
	cmd    *exec.Cmd
	addr   string
	stdin  io.WriteCloser
	stderr *syncBuffer
	waited chan error
}

// startChild starts a member process that knows seeds and waits for its
// address.
func startChild(t *testing.T, seeds []string) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	// Race reports do not change a child's exit status; stop checks them
	// (see racecheck.DependencyOnly).
	cmd.Env = append(os.Environ(), childEnv+"=1", seedsEnv+"="+strings.Join(seeds, ","), "GORACE=exitcode=0")
	c := &child{cmd: cmd, stderr: &syncBuffer{}, waited: make(chan error, 1)}
	cmd.Stderr = c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
				addrCh <- a
			}
		}
		close(addrCh)
		c.waited <- cmd.Wait()
	}()
	t.Cleanup(func() { c.signal(); c.stop(t) })
	select {
	case a, ok := <-addrCh:
		if !ok {
			t.Fatalf("member exited before it started: %s", c.stderr)
		}
		c.addr = a
	case <-time.After(30 * time.Second):
		t.Fatalf("member did not start in 30s: %s", c.stderr)
	}
	return c
}

// kill ends the process with SIGKILL and reaps it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-c.waited
	c.waited = nil
}

// signal asks the process to stop gracefully (SIGTERM).
func (c *child) signal() {
	if c.waited != nil {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
}

// stop waits for a signalled process to end, and checks that it exited
// cleanly with no data race reported in ringactor's code.
func (c *child) stop(t *testing.T) {
	if c.waited == nil {
		return
	}
	select {
	case err := <-c.waited:
		if err != nil {
			t.Errorf("member %s: %v: %s", c.addr, err, c.stderr)
		}
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.waited
		t.Errorf("member %s did not stop in 20s", c.addr)
	}
	c.waited = nil
	_ = c.stdin.Close()
	if err := racecheck.DependencyOnly(c.stderr.String()); err != nil {
		t.Errorf("member %s: %v", c.addr, err)
	}
}

// syncBuffer is a process's stderr, written by its copier goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startClient starts a cluster client of the children and waits until it
// sees n members.
func startClient(t *testing.T, seeds []string, n int) *cluster.Member {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := cluster.Start(ctx, clusterName, cluster.Peers(seeds), nil, cluster.AsClient(), cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.Close(ctx); err != nil {
			t.Errorf("client close: %v", err)
		}
	})
	if err := cl.WaitMembers(ctx, n); err != nil {
		t.Fatal(err)
	}
	return cl
}
