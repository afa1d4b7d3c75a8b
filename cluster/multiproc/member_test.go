package multiproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	pcluster "github.com/asynkron/protoactor-go/cluster"
	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/internal/demo"
	"github.com/ringactor/ringactor/internal/demo/demomsg"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/persistence"
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
var memberAddr atomic.Pointer[string]

// self returns memberAddr.
func self() string {
	if a := memberAddr.Load(); a != nil {
		return *a
	}
	return ""
}

func whoami() actors.Handler[Who, Here] {
	n := 0
	return func(context.Context, Who) (Here, error) {
		n++
		return Here{Addr: self(), Count: n}, nil
	}
}

func testKinds() []*cluster.Kind {
	// devpref: devscale's device handler, device preferred (NewDeviceKind's
	// default): on a member without a device only when no member with one
	// lists it.
	devpref, err := cluster.NewDeviceKind("devpref", actors.DeviceSource{Code: demomsg.DevscaleCUDA, Entry: demomsg.DevscaleEntry, State: demomsg.DevscaleState{}},
		func() actors.Handler[demomsg.DevscaleRequest, demomsg.DevscaleReply] {
			return demomsg.NewDevscaleFallback()
		})
	if err != nil {
		panic(err)
	}
	return append(demo.Kinds(self), cluster.NewKind("whoami", whoami), devpref, trackedKind())
}

const (
	clusterName = "multiproc"
	// childEnv names what a child process runs: member, or one of the
	// client scenarios of client_test.go.
	childEnv = "RINGACTOR_MULTIPROC_CHILD"
	seedsEnv = "RINGACTOR_MULTIPROC_SEEDS"
	// bindEnv is the address a member binds (default: loopback, any port).
	bindEnv = "RINGACTOR_MULTIPROC_BIND"
	// advertiseEnv, when set, is the address a member advertises
	// (WithAdvertise): a proxy in front of its bind address.
	advertiseEnv = "RINGACTOR_MULTIPROC_ADVERTISE"
	// etcdEnv is the etcd endpoint of a node that uses the etcd provider.
	etcdEnv = "RINGACTOR_MULTIPROC_ETCD"
	// leakEnv makes a member check, after closing, that it left no
	// goroutine behind (exit status 3 and "LEAK" on stderr otherwise).
	leakEnv = "RINGACTOR_MULTIPROC_LEAKCHECK"
	// simDevicesEnv gives a member that many simulated CUDA devices.
	simDevicesEnv = "RINGACTOR_MULTIPROC_SIM_DEVICES"
	// logDirEnv, when set, is a folder where each member writes its log
	// (member-PID.log, debug level; Proto.Actor's from WARN) and
	// the churn test keeps its clients' records: for reading after a
	// failed run. Unset, members log nothing.
	logDirEnv = "RINGACTOR_MULTIPROC_LOGDIR"
	// stateStoreEnv is the state store URL of a member
	// (cluster.WithStateStore); unset: none.
	stateStoreEnv = "RINGACTOR_MULTIPROC_STATE_STORE"
	// membersEnv is how many members a client scenario waits for
	// (default 3).
	membersEnv = "RINGACTOR_MULTIPROC_MEMBERS"
)

// provider returns the provider the environment names: etcd at etcdEnv,
// or the peers provider with the seeds.
func provider() (pcluster.ClusterProvider, error) {
	if e := os.Getenv(etcdEnv); e != "" {
		return cluster.Etcd([]string{e}, cluster.WithEtcdBaseKey("/ringactor-multiproc"))
	}
	return cluster.Peers(seeds()), nil
}

// seeds returns the addresses in seedsEnv.
func seeds() []string {
	if s := os.Getenv(seedsEnv); s != "" {
		return strings.Split(s, ",")
	}
	return nil
}

// memberLogger is the member's logger: a debug-level file in logDirEnv,
// or nothing.
func memberLogger() *slog.Logger {
	dir := os.Getenv(logDirEnv)
	if dir == "" {
		return actors.DiscardLogger()
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("member-%d.log", os.Getpid())))
	if err != nil {
		fmt.Fprintln(os.Stderr, "log:", err)
		return actors.DiscardLogger()
	}
	// Left open: the process's last records matter most; exit closes it.
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// noDevices closes no devices.
func noDevices() {}

// runMember runs one member until SIGTERM, SIGINT or the end of its stdin
// (its parent is gone), then closes it gracefully.
func runMember() int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := provider()
	if err != nil {
		fmt.Fprintln(os.Stderr, "provider:", err)
		return 1
	}
	opts := []cluster.Option{cluster.WithLogger(memberLogger())}
	if b := os.Getenv(bindEnv); b != "" {
		opts = append(opts, cluster.WithAddress(b))
	}
	if a := os.Getenv(advertiseEnv); a != "" {
		opts = append(opts, cluster.WithAdvertise(a))
	}
	if a := os.Getenv(proxyEnv); a != "" {
		px, err := startDelayProxy(a, os.Getenv(bindEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, "delay proxy:", err)
			return 1
		}
		memberProxy = px
		defer px.close() // after the member closed; closing twice is harmless
		opts = append(opts, cluster.WithAdvertise(a))
	}
	closeDevs := noDevices
	var devs []gpu.Backend
	if n := envInt(simDevicesEnv, 0); n > 0 {
		devs, closeDevs = simDevices(n)
		defer closeDevs() // on an early return; closing twice is harmless
		opts = append(opts, cluster.WithRuntimeOptions(actors.WithBackends(devs...)))
	}
	if u := os.Getenv(stateStoreEnv); u != "" {
		store, err := persistence.OpenURL(ctx, u)
		if err != nil {
			fmt.Fprintln(os.Stderr, "state store:", err)
			return 1
		}
		defer store.Close() // after the member has closed
		opts = append(opts, cluster.WithStateStore(store))
	}
	m, err := cluster.Start(ctx, clusterName, p, testKinds(), opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "start:", err)
		return 1
	}
	addr := m.Address()
	memberAddr.Store(&addr)
	fmt.Printf("ADDR %s\n", m.Address())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	eof := make(chan struct{})
	go func() {
		faults(m, devs, os.Stdin)
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
	closeDevs() // after the member, before the leak check
	if memberProxy != nil {
		memberProxy.close()
	}
	if os.Getenv(leakEnv) != "" {
		signal.Stop(sig)
		if err := goleak.Find(protoActorLeaks...); err != nil {
			fmt.Fprintln(os.Stderr, "LEAK after close:", err)
			return 3
		}
	}
	return 0
}

// protoActorLeaks are goroutines Proto.Actor leaves behind by design (its
// throttlers' tickers are never stopped) and the goroutine that drains
// this child's stdin.
var protoActorLeaks = append(testproc.ProtoActorThrottles(),
	goleak.IgnoreAnyFunction("github.com/ringactor/ringactor/cluster/multiproc.runMember.func1"))

// memberProxy is the member's delay proxy (proxyEnv), or nil.
var memberProxy *delayProxy

// faults reads the test's lines from in until it ends: "fault NAME" (a
// simulated device's name, or "all") marks those devices failed, as a
// device ring kernel does when its launch faults; the member then
// advertises fewer devices. Once the member has advertised the change
// (and, when no device is left, passivated every device identity it
// hosted) it prints "FAULTED NAME". "delay D" (a duration) sets the delay
// of the member's delay proxy and prints "DELAYED D".
func faults(m *cluster.Member, devs []gpu.Backend, in io.Reader) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if arg, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "delay "); ok {
			d, err := time.ParseDuration(arg)
			if err != nil || memberProxy == nil {
				fmt.Fprintf(os.Stderr, "delay %q: %v (proxy %v)\n", arg, err, memberProxy != nil)
				continue
			}
			memberProxy.setDelay(d)
			fmt.Printf("DELAYED %s\n", arg)
			continue
		}
		name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "fault ")
		if !ok {
			continue
		}
		before, left := m.Advertisements(), 0
		for _, d := range devs {
			f, ok := d.(interface{ MarkFailed(error) })
			switch {
			case !ok:
			case name == "all" || d.Name() == name:
				f.MarkFailed(errors.New("fault injected by the test"))
			case d.Available() == nil:
				left++
			}
		}
		// Advertised; with no device left, every device identity
		// passivated (a kernel on a faulted device moves to its fallback
		// at its next message: not waited for).
		settled := func() bool {
			return m.Advertisements() > before && (left > 0 || len(m.Runtime().DeviceKernels()) == 0)
		}
		tick := time.NewTicker(10 * time.Millisecond) // polling the member's state, in the child
		for !settled() {
			<-tick.C
		}
		tick.Stop()
		fmt.Printf("FAULTED %s\n", name)
	}
}
