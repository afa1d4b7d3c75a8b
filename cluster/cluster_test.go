//go:build !race

// These tests start two cluster members in one process. Proto.Actor's
// remote.Start calls grpclog.SetLoggerV2 on every start while the first
// member's gRPC server goroutine reads the logger, a data race inside the
// dependency that the race detector reports on every run. So they are built
// without -race only, and ./test.sh runs them in a separate, race-free step;
// cluster/multiproc runs members in child processes under -race instead.

package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ptest "github.com/asynkron/protoactor-go/cluster/clusterproviders/test"
	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
	"github.com/ringactor/ringactor/internal/testutil/testproc"
	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
)

type pair struct{ A, B []float64 }
type sum struct{ Sum []float64 }
type add struct{ N int }
type total struct{ Total, Calls int }
type unregistered struct{ X int }

func init() {
	messages.MustRegister[pair]("ringactor.cluster.test.Pair")
	messages.MustRegister[sum]("ringactor.cluster.test.Sum")
	messages.MustRegister[add]("ringactor.cluster.test.Add")
	messages.MustRegister[total]("ringactor.cluster.test.Total")
}

func addHandler() actors.Handler[pair, sum] {
	return func(_ context.Context, p pair) (sum, error) {
		if len(p.A) != len(p.B) {
			return sum{}, fmt.Errorf("add: length mismatch %d != %d", len(p.A), len(p.B))
		}
		out := make([]float64, len(p.A))
		for i := range p.A {
			out[i] = p.A[i] + p.B[i]
		}
		return sum{out}, nil
	}
}

func runningSum() actors.Handler[add, total] {
	var t total
	return func(_ context.Context, a add) (total, error) {
		t.Total += a.N
		t.Calls++
		return t, nil
	}
}

// heldEntered and heldRelease drive the "held" kind: its handler says it
// has a request (heldEntered) and holds it until released or its deadline.
var (
	heldEntered = make(chan struct{}, 16)
	heldRelease = make(chan struct{}, 16)
)

func heldHandler() actors.Handler[add, total] {
	return func(ctx context.Context, a add) (total, error) {
		heldEntered <- struct{}{}
		select {
		case <-ctx.Done():
			return total{}, ctx.Err()
		case <-heldRelease:
			return total{Total: a.N}, nil
		}
	}
}

func slowHandler() actors.Handler[add, total] {
	return func(ctx context.Context, a add) (total, error) {
		select {
		case <-ctx.Done():
			return total{}, ctx.Err()
		case <-time.After(2 * time.Second):
			return total{Total: a.N}, nil
		}
	}
}

// kinds are registered on both members.
func kinds() []*cluster.Kind {
	return []*cluster.Kind{
		cluster.NewKind("add", addHandler),
		cluster.NewKind("sum", runningSum),
		cluster.NewKind("idle", runningSum).WithIdleTimeout(150 * time.Millisecond),
		cluster.NewKind("slow", slowHandler).WithHandlerTimeout(300 * time.Millisecond),
		cluster.NewKind("held", heldHandler),
		typedAdd.Kind(),
		typedSum.Kind(),
	}
}

var memberA, memberB *cluster.Member

// protoActorLeaks are goroutines Proto.Actor leaves behind by design: its
// throttlers run on tickers that are never stopped, and the test provider's
// TTL loop ranges over a ticker channel that Stop does not close.
var protoActorLeaks = append(testproc.ProtoActorThrottles(),
	goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/cluster/clusterproviders/test.(*Provider).startTtlReport.func1"))

func TestMain(m *testing.M) {
	code := run(m)
	if code == 0 {
		if err := goleak.Find(protoActorLeaks...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func run(m *testing.M) int {
	// A hang guard for starting the package's two members, not a speed
	// bound: a loaded CI machine takes many times an idle one's second.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	agent := ptest.NewInMemAgent()
	var errA, errB error
	memberA, errA = cluster.Start(ctx, "test", ptest.NewTestProvider(agent), kinds(), cluster.WithLogger(actors.DiscardLogger()), cluster.WithProtoKinds(protoEcho()))
	if errA == nil {
		memberB, errB = cluster.Start(ctx, "test", ptest.NewTestProvider(agent), kinds(), cluster.WithLogger(actors.DiscardLogger()), cluster.WithProtoKinds(protoEcho()))
	}
	defer func() {
		for _, mem := range []*cluster.Member{memberA, memberB} {
			if mem == nil {
				continue
			}
			cctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
			if err := mem.Close(cctx); err != nil {
				fmt.Fprintln(os.Stderr, "close:", err)
			}
			cancel()
		}
	}()
	if errA != nil || errB != nil {
		fmt.Fprintln(os.Stderr, "start:", errA, errB)
		return 1
	}
	for _, mem := range []*cluster.Member{memberA, memberB} {
		if err := mem.WaitMembers(ctx, 2); err != nil {
			fmt.Fprintln(os.Stderr, "topology:", err)
			return 1
		}
	}
	return m.Run()
}

var runs atomic.Int64

// unique makes identities unique to one run of a test (-count=N reuses the
// cluster, and its activations keep their state).
func unique(id string) string { return fmt.Sprintf("%s#%d", id, runs.Add(1)) }

// testCtx is the test's hang guard (hangguard.Context): no wall-clock
// deadline of its own.
func testCtx(t testing.TB) context.Context { return hangguard.Context(t) }

func TestMembersBindLoopback(t *testing.T) {
	for _, mem := range []*cluster.Member{memberA, memberB} {
		if !strings.HasPrefix(mem.Address(), "127.0.0.1:") {
			t.Errorf("member address %q, want 127.0.0.1:port", mem.Address())
		}
	}
}

func TestRequestManyIdentities(t *testing.T) {
	ctx := testCtx(t)
	const n = 60
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("id-%d", i)
			got, err := cluster.Request[sum](ctx, memberA, "add", id, pair{A: []float64{float64(i), 1}, B: []float64{1, float64(i)}})
			if err != nil {
				errs <- fmt.Errorf("%s: %w", id, err)
				return
			}
			if len(got.Sum) != 2 || got.Sum[0] != float64(i+1) || got.Sum[1] != float64(i+1) {
				errs <- fmt.Errorf("%s: got %v", id, got.Sum)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if memberB.Activations() == 0 || memberA.Activations() == 0 {
		t.Errorf("activations A=%d B=%d: want identities on both members", memberA.Activations(), memberB.Activations())
	}
	// Each activation runs its own kernel, named <kind>/<identity>.
	found := false
	for _, mem := range []*cluster.Member{memberA, memberB} {
		for _, k := range mem.Runtime().Kernels() {
			if k == "add/id-0" {
				found = true
			}
		}
	}
	if !found {
		t.Error("no kernel add/id-0 on either member")
	}
}

func TestStatePerIdentity(t *testing.T) {
	ctx := testCtx(t)
	ids := []string{unique("alice"), unique("bob"), unique("carol"), unique("dave"), unique("erin"), unique("frank")}
	for round := 1; round <= 3; round++ {
		for i, id := range ids {
			from := memberA
			if round == 2 {
				from = memberB // both members reach the same activation
			}
			got, err := cluster.Request[total](ctx, from, "sum", id, add{N: i + 1})
			if err != nil {
				t.Fatalf("%s round %d: %v", id, round, err)
			}
			if want := (total{Total: round * (i + 1), Calls: round}); got != want {
				t.Fatalf("%s round %d: got %+v, want %+v", id, round, got, want)
			}
		}
	}
}

func TestSend(t *testing.T) {
	ctx := testCtx(t)
	id := unique("sent")
	for range 5 {
		if err := cluster.Send(ctx, memberA, "sum", id, add{N: 2}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := cluster.Request[total](ctx, memberA, "sum", id, add{N: 0})
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 10 || got.Calls != 6 {
		t.Fatalf("got %+v, want total 10 after 6 calls", got)
	}
}

func TestRemoteExecutionError(t *testing.T) {
	ctx := testCtx(t)
	for i := range 10 { // some identities live on each member
		_, err := cluster.Request[sum](ctx, memberA, "add", fmt.Sprintf("bad-%d", i), pair{A: []float64{1, 2}, B: []float64{1}})
		var re *cluster.RemoteError
		if !errors.As(err, &re) {
			t.Fatalf("got %v (%T), want *RemoteError", err, err)
		}
		if re.Kind != wire.KindExecution || !strings.Contains(re.Message, "add: length mismatch 2 != 1") {
			t.Fatalf("got %+v", re)
		}
		if !errors.Is(err, gpu.ErrExecution) {
			t.Fatalf("errors.Is(%v, gpu.ErrExecution) = false", err)
		}
		if re.MessageID == 0 {
			t.Fatal("no message id")
		}
	}
	// The activation keeps working after a failed message.
	if _, err := cluster.Request[sum](ctx, memberA, "add", "bad-0", pair{A: []float64{1}, B: []float64{1}}); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownKind(t *testing.T) {
	_, err := cluster.Request[sum](testCtx(t), memberA, "nope", "x", pair{})
	if !errors.Is(err, cluster.ErrUnknownKind) {
		t.Fatalf("got %v, want ErrUnknownKind", err)
	}
	if err := cluster.Send(testCtx(t), memberA, "nope", "x", pair{}); !errors.Is(err, cluster.ErrUnknownKind) {
		t.Fatalf("Send: got %v, want ErrUnknownKind", err)
	}
}

func TestDeadlineAndCancel(t *testing.T) {
	// Deadline passes while the handler runs.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := cluster.Request[total](ctx, memberA, "slow", "s1", add{N: 1})
	if !errors.Is(err, cluster.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v after a 100ms deadline", d)
	}

	// Already expired and already cancelled contexts fail at once.
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	if _, err := cluster.Request[sum](expired, memberA, "add", "x", pair{}); !errors.Is(err, cluster.ErrTimeout) {
		t.Fatalf("expired: got %v", err)
	}
	cancelled, cancel3 := context.WithCancel(context.Background())
	cancel3()
	if _, err := cluster.Request[sum](cancelled, memberA, "add", "x", pair{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: got %v", err)
	}

	// Cancelled while waiting: once the handler holds the request (a timer
	// could fire after the handler timed out on a loaded machine).
	cctx, cancel4 := context.WithCancel(context.Background())
	defer cancel4()
	go func() {
		<-heldEntered
		cancel4()
	}()
	if _, err := cluster.Request[total](cctx, memberA, "held", "h1", add{N: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel while waiting: got %v", err)
	}
	heldRelease <- struct{}{} // the held request ends; its reply finds no requester
}

func TestTypeErrors(t *testing.T) {
	ctx := testCtx(t)
	// An unregistered message type fails before anything is sent.
	_, err := cluster.Request[sum](ctx, memberA, "add", "x", unregistered{1})
	if !errors.Is(err, messages.ErrUnregistered) {
		t.Fatalf("unregistered: got %v", err)
	}
	if err := cluster.Send(ctx, memberA, "add", "x", unregistered{1}); !errors.Is(err, messages.ErrUnregistered) {
		t.Fatalf("Send unregistered: got %v", err)
	}
	// A registered type the kind does not take: remote decode error.
	for i := range 6 {
		_, err = cluster.Request[sum](ctx, memberA, "add", fmt.Sprintf("wrong-%d", i), add{N: 1})
		var re *cluster.RemoteError
		if !errors.As(err, &re) || re.Kind != wire.KindDecode || !errors.Is(err, messages.ErrDecode) {
			t.Fatalf("wrong message type: got %v", err)
		}
	}
	// A reply of another type than the caller expects.
	_, err = cluster.Request[total](ctx, memberA, "add", "x", pair{A: []float64{1}, B: []float64{2}})
	if !errors.Is(err, messages.ErrDecode) || !errors.Is(err, actors.ErrWrongMessageType) {
		t.Fatalf("wrong reply type: got %v", err)
	}
}

func TestIdlePassivation(t *testing.T) {
	ctx := testCtx(t)
	ids := []string{unique("p0"), unique("p1"), unique("p2"), unique("p3"), unique("p4"), unique("p5")}
	for _, id := range ids {
		for n := 1; n <= 2; n++ {
			got, err := cluster.Request[total](ctx, memberA, "idle", id, add{N: 5})
			if err != nil {
				t.Fatal(err)
			}
			if got.Calls != n {
				t.Fatalf("%s: got %+v, want call %d", id, got, n)
			}
		}
	}
	// After the idle timeout every activation and its kernel are gone.
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := 0
		for _, mem := range []*cluster.Member{memberA, memberB} {
			for _, k := range mem.Runtime().Kernels() {
				if st, err := mem.Runtime().Status(k); strings.HasPrefix(k, "idle/") && err == nil && !st.State.Terminal() {
					left++
				}
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle kernels still registered", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A new request re-activates the identity with fresh state.
	for _, id := range ids {
		got, err := cluster.Request[total](ctx, memberA, "idle", id, add{N: 7})
		if err != nil {
			t.Fatal(err)
		}
		if want := (total{Total: 7, Calls: 1}); got != want {
			t.Fatalf("%s after passivation: got %+v, want %+v", id, got, want)
		}
	}
}

func TestStartRejectsBadInput(t *testing.T) {
	ctx := testCtx(t)
	agent := ptest.NewInMemAgent()
	if _, err := cluster.Start(ctx, "bad", ptest.NewTestProvider(agent), kinds(), cluster.WithAddress("nonsense")); err == nil {
		t.Fatal("bad address accepted")
	}
	dup := []*cluster.Kind{cluster.NewKind("add", addHandler), cluster.NewKind("add", addHandler)}
	if _, err := cluster.Start(ctx, "bad", ptest.NewTestProvider(agent), dup); err == nil {
		t.Fatal("duplicate kind accepted")
	}
}
