package admin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/admin"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/messages"
	"github.com/ringactor/ringactor/stream"
)

// ping and pong are the fixture's cluster kind's messages.
type ping struct{ N int }
type pong struct{ N int }

func init() {
	messages.MustRegister[ping]("ringactor.admin.test.ping")
	messages.MustRegister[pong]("ringactor.admin.test.pong")
}

// fixture is a real member under traffic for the dashboard: a cluster kind
// "echo" (its activations are kernels), a plain ring kernel "square" and a
// stream graph source → enrich (2 instances) → store, all in the member's
// runtime, served by the admin endpoint at base. Its runtime has a backend
// without a device (noDevice) beside the CPU.
type fixture struct {
	m    *cluster.Member
	g    *stream.Graph
	src  *stream.Source[int]
	out  <-chan int
	sq   *actors.Kernel[ping, pong]
	srv  *admin.Server
	base string
}

// noDevice is a compute backend of the fixture's runtime that has no
// device: Available says why, whatever machine the test runs on.
type noDevice struct{}

// noDeviceName and noDeviceReason are its name and its Available's reason.
const (
	noDeviceName   = "cuda:9"
	noDeviceReason = "no device 9 on this machine"
)

func (noDevice) Name() string          { return noDeviceName }
func (noDevice) Kind() gpu.BackendKind { return gpu.KindCUDA }
func (noDevice) Available() error {
	return &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: noDeviceName, Reason: noDeviceReason}
}
func (noDevice) Supports(*gpu.KernelSpec, gpu.DType) bool { return false }
func (noDevice) Execute(context.Context, *gpu.KernelSpec, []*gpu.UnifiedBuffer, *gpu.UnifiedBuffer, []float64) error {
	return gpu.ErrDeviceNotAvailable
}
func (noDevice) ExecuteBatch(context.Context, *gpu.KernelSpec, [][]*gpu.UnifiedBuffer, []*gpu.UnifiedBuffer, []float64) error {
	return gpu.ErrDeviceNotAvailable
}
func (noDevice) Allocator() gpu.Allocator { return nil }

// identities the fixture's traffic reaches.
var identities = []string{"alice", "bob", "carol"}

// startFixture starts the member, kernel, graph and admin endpoint; all
// are stopped at the end of the test.
func startFixture(t testing.TB) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	echo := cluster.NewKind("echo", func() actors.Handler[ping, pong] {
		return func(_ context.Context, p ping) (pong, error) { return pong(p), nil }
	})
	m, err := cluster.Start(ctx, fmt.Sprintf("admin-test-%d", time.Now().UnixNano()), cluster.Peers(nil), []*cluster.Kind{echo},
		cluster.WithLogger(actors.DiscardLogger()), cluster.WithRuntimeOptions(actors.WithBackends(noDevice{})))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{m: m}
	t.Cleanup(func() { f.close(t) })
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	rt := m.Runtime()
	f.sq, err = actors.Launch(ctx, rt, actors.NewStatelessKernel("square", func(_ context.Context, v ping) (pong, error) {
		if v.N < 0 {
			return pong{}, errors.New("negative")
		}
		return pong{v.N * v.N}, nil
	}))
	if err == nil {
		err = f.sq.Activate(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	f.g = stream.New(stream.WithRuntime(rt), stream.WithBatch(8), stream.WithLogger(actors.DiscardLogger()))
	f.src = stream.NewSource[int](f.g, "events")
	enrich := stream.Map(f.g, "enrich", func(v int) (int, error) { return v + 1, nil }, stream.Parallelism(2))
	sink, out := stream.ToChan[int](f.g, "store", 0)
	f.out = out
	if err := errors.Join(stream.Connect(f.src, enrich), stream.Connect(enrich, sink)); err != nil {
		t.Fatal(err)
	}
	if err := f.g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	f.srv, err = admin.Listen(ctx, "127.0.0.1:0", admin.New(admin.WithMember(m)))
	if err != nil {
		t.Fatal(err)
	}
	f.base = "http://" + f.srv.Addr()
	return f
}

// traffic sends n requests to every identity of echo, n to square (one in
// ten fails) and n elements through the graph, and returns once all were
// answered or delivered.
func (f *fixture) traffic(t testing.TB, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range n {
		for _, id := range identities {
			if r, err := cluster.Request[pong](ctx, f.m, "echo", id, ping{i}); err != nil || r.N != i {
				t.Fatalf("echo %s: %v %v", id, r, err)
			}
		}
		v := i
		if i%10 == 9 {
			v = -1
		}
		if _, err := f.sq.Request(ctx, ping{v}); (err != nil) != (v < 0) {
			t.Fatalf("square(%d): %v", v, err)
		}
	}
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			if err := f.src.Send(ctx, i); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for range n {
		select {
		case <-f.out:
		case <-ctx.Done():
			t.Fatal("the graph delivered too little:", ctx.Err())
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}

// background keeps the fixture busy until the returned stop is called: a
// varying request rate to echo and square, and a stream whose sink reads
// slower than the source sends (its rings fill: backpressure). Used for
// the README's screenshot only.
func (f *fixture) background() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for n := 0; ctx.Err() == nil; n++ {
			for i := range 1 + (n/400)%4 {
				_, _ = cluster.Request[pong](ctx, f.m, "echo", identities[(n+i)%len(identities)], ping{n})
				_, _ = f.sq.Request(ctx, ping{n % 50})
			}
			select {
			case <-ctx.Done():
			case <-t.C:
			}
		}
	})
	wg.Go(func() {
		for i := 0; f.src.Send(ctx, i) == nil; i++ {
		}
	})
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case <-f.out:
				case <-ctx.Done():
					return
				}
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// kernels reads /kernels.
func (f *fixture) kernels(t testing.TB) admin.Snapshot {
	t.Helper()
	resp, err := http.Get(f.base + "/kernels")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s admin.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// close stops the admin endpoint, the graph, the kernel and the member.
func (f *fixture) close(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	if f.srv != nil {
		http.DefaultClient.CloseIdleConnections()
		errs = append(errs, f.srv.Close(ctx))
	}
	if f.g != nil {
		errs = append(errs, f.g.Stop(ctx))
	}
	errs = append(errs, f.m.Close(ctx))
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
}
