package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/demo"
	"github.com/ringactor/ringactor/internal/demo/demomsg"
	"github.com/ringactor/ringactor/telemetry"
)

// init gives the demo's message types their stable type ids.
func init() { demo.Register() }

// Kernel ids of the demo.
const (
	vectorAddID = "vector_add"
	runningSum  = "running_sum"
	scaleID     = "scale"
	squareSumID = "square_sum"
)

// Help text of the demo command.
const (
	demoSynopsis    = "[-n messages] [-v]"
	demoDescription = `Launch four ring kernels in one runtime on the CPU backend, send them work
and print the results and each kernel's telemetry:

  vector_add   stateless, AddRequest{A, B} -> AddReply{Sum}; a Send then
               Receive, a Request, a failing Request (length mismatch), and
               -n Requests and -n pipelined Sends for a throughput line
  running_sum  stateful (its factory holds the sum), Value -> Sum; receives
               1..10 and ends at 55
  scale        Vector -> Vector (each element x2), routed kernel-to-kernel
               into square_sum
  square_sum   Vector -> Scalar (sum of squares); a Request of [1 2 3]
               through scale is answered by square_sum with 56

Then every kernel is terminated (draining its ring) and the runtime closed.
`
)

// demoCommand is the "demo" subcommand.
var demoCommand = command{
	name:    "demo",
	summary: "launch ring kernels, send them work, print results and telemetry",
	run:     runDemoCommand,
}

// runDemoCommand parses the demo's flags and runs it.
func runDemoCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", demoSynopsis, demoDescription, stderr)
	n := fs.Int("n", 1000, "`messages` vector_add receives in each throughput measurement (at least 1)")
	verbose := fs.Bool("v", false, "log at debug level (runtime and Proto.Actor included)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *n < 1 {
		return usageError(fs, "-n must be at least 1, got %d", *n)
	}
	log := fs.newLogger(*verbose)
	if err := runDemo(ctx, stdout, *n, actors.WithLogger(log)); err != nil {
		return failure(stderr, "demo", err)
	}
	return exitOK
}

// runDemo runs the demo in a runtime of its own made with opts, writing what
// it does to w; n is the number of vector_add messages in each throughput
// measurement. It terminates every kernel and closes the runtime before it
// returns, even on failure.
func runDemo(ctx context.Context, w io.Writer, n int, opts ...actors.Option) (err error) {
	if n < 1 {
		return fmt.Errorf("demo: n = %d, want at least 1", n)
	}
	rt, err := actors.NewRuntime(opts...)
	if err != nil {
		return fmt.Errorf("demo: start runtime: %w", err)
	}
	defer func() {
		// Close even when ctx is cancelled (an interrupt): kernels drain
		// what they hold, bounded by a deadline of its own.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if cerr := rt.Close(cctx); cerr != nil {
			err = errors.Join(err, fmt.Errorf("demo: close runtime: %w", cerr))
		}
	}()

	fmt.Fprintln(w, "ringactor demo: one runtime, four ring kernels on the CPU backend")
	add, err := demoVectorAdd(ctx, w, rt, n)
	if err != nil {
		return err
	}
	sum, err := demoRunningSum(ctx, w, rt)
	if err != nil {
		return err
	}
	scale, square, err := demoChain(ctx, w, rt)
	if err != nil {
		return err
	}

	fmt.Fprintln(w, "\ntelemetry")
	stats := []telemetry.KernelStats{add.Telemetry(), sum.Telemetry(), scale.Telemetry(), square.Telemetry()}
	if err := printTelemetry(w, stats); err != nil {
		return err
	}

	// Head of the chain first, so that what it forwards is drained by its
	// downstream kernel.
	terminate := []interface {
		ID() string
		Terminate(context.Context) error
	}{add, sum, scale, square}
	for _, k := range terminate {
		if err := k.Terminate(ctx); err != nil {
			return fmt.Errorf("demo: terminate %s: %w", k.ID(), err)
		}
	}
	fmt.Fprintf(w, "\nterminated %s, %s, %s, %s; closing the runtime\n", add.ID(), sum.ID(), scale.ID(), square.ID())
	return nil
}

// launchActive launches def in rt and opens its gate.
func launchActive[Req, Resp any](ctx context.Context, rt *actors.Runtime, def *actors.KernelDef[Req, Resp]) (*actors.Kernel[Req, Resp], error) {
	k, err := actors.Launch(ctx, rt, def)
	if err != nil {
		return nil, fmt.Errorf("demo: launch %s: %w", def.ID(), err)
	}
	if err := k.Activate(ctx); err != nil {
		return nil, fmt.Errorf("demo: activate %s: %w", def.ID(), err)
	}
	return k, nil
}

// demoVectorAdd launches vector_add, shows a Send+Receive, a Request and a
// failing Request, then measures n sequential Requests and n pipelined
// Sends.
func demoVectorAdd(ctx context.Context, w io.Writer, rt *actors.Runtime, n int) (*actors.Kernel[demomsg.AddRequest, demomsg.AddReply], error) {
	k, err := launchActive(ctx, rt, actors.NewStatelessKernel(vectorAddID, demomsg.Add))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "\n%s (stateless: AddRequest -> AddReply)\n", vectorAddID)

	req := demomsg.AddRequest{A: []float64{1, 2, 3}, B: []float64{4, 5, 6}}
	if _, err := k.Send(ctx, req); err != nil {
		return nil, fmt.Errorf("demo: send to %s: %w", vectorAddID, err)
	}
	resp, err := k.Receive(ctx)
	if err != nil {
		return nil, fmt.Errorf("demo: receive from %s: %w", vectorAddID, err)
	}
	fmt.Fprintf(w, "  Send    %v + %v, Receive -> %v\n", req.A, req.B, resp.Sum)

	req = demomsg.AddRequest{A: []float64{10, 20, 30, 40}, B: []float64{0.5, 1.5, 2.5, 3.5}}
	resp, err = actors.Request[demomsg.AddReply](ctx, rt, vectorAddID, req)
	if err != nil {
		return nil, fmt.Errorf("demo: request to %s: %w", vectorAddID, err)
	}
	fmt.Fprintf(w, "  Request %v + %v -> %v\n", req.A, req.B, resp.Sum)

	req = demomsg.AddRequest{A: []float64{1, 2}, B: []float64{3}}
	_, err = k.Request(ctx, req)
	switch {
	case err == nil:
		return nil, fmt.Errorf("demo: %s accepted vectors of different lengths", vectorAddID)
	case ctx.Err() != nil:
		return nil, err
	}
	fmt.Fprintf(w, "  Request %v + %v -> error: %v\n", req.A, req.B, err)

	if err := vectorAddThroughput(ctx, w, k, n); err != nil {
		return nil, err
	}
	return k, nil
}

// addOperands returns the i-th throughput message: A[j] = i, B[j] = j, so
// Sum[0] is i.
func addOperands(i int) demomsg.AddRequest {
	const width = 16
	a, b := make([]float64, width), make([]float64, width)
	for j := range a {
		a[j], b[j] = float64(i), float64(j)
	}
	return demomsg.AddRequest{A: a, B: b}
}

// vectorAddThroughput times n sequential Requests, then n Sends with a
// concurrent reader of the receive stream, and checks every reply.
func vectorAddThroughput(ctx context.Context, w io.Writer, k *actors.Kernel[demomsg.AddRequest, demomsg.AddReply], n int) error {
	msgs := make([]demomsg.AddRequest, n)
	for i := range msgs {
		msgs[i] = addOperands(i)
	}
	want := float64(n) * float64(n-1) / 2 // sum of Sum[0] over all replies

	start := time.Now()
	got := 0.0
	for i, m := range msgs {
		r, err := k.Request(ctx, m)
		if err != nil {
			return fmt.Errorf("demo: request %d to %s: %w", i, vectorAddID, err)
		}
		got += r.Sum[0]
	}
	seq := time.Since(start)
	if got != want {
		return fmt.Errorf("demo: %s sequential checksum %v, want %v", vectorAddID, got, want)
	}

	// The kernel holds at most its output capacity of unread replies, so
	// a reader drains the receive stream while the sender sends.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg      sync.WaitGroup
		recvSum float64
		recvErr error
	)
	start = time.Now()
	wg.Go(func() {
		for range n {
			r, err := k.Receive(rctx)
			if err != nil {
				recvErr = err
				return
			}
			recvSum += r.Sum[0]
		}
	})
	var sendErr error
	for i, m := range msgs {
		if _, err := k.Send(ctx, m); err != nil {
			sendErr = fmt.Errorf("demo: send %d to %s: %w", i, vectorAddID, err)
			cancel()
			break
		}
	}
	wg.Wait()
	piped := time.Since(start)
	if sendErr != nil {
		return sendErr
	}
	if recvErr != nil {
		return fmt.Errorf("demo: receive from %s: %w", vectorAddID, recvErr)
	}
	if recvSum != want {
		return fmt.Errorf("demo: %s pipelined checksum %v, want %v", vectorAddID, recvSum, want)
	}
	fmt.Fprintf(w, "  throughput, %d messages of 16-element vectors (checksums ok):\n", n)
	const line = "    %-22s %10s %12s msg/s\n"
	fmt.Fprintf(w, line, "sequential Request", seq.Round(time.Microsecond), count(rate(n, seq)))
	fmt.Fprintf(w, line, "pipelined Send+Receive", piped.Round(time.Microsecond), count(rate(n, piped)))
	return nil
}

// rate is n messages over d in messages per second.
func rate(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// newRunningSum is running_sum's factory: each (re)start of the kernel gets
// a handler with a fresh total.
func newRunningSum() actors.Handler[demomsg.Value, demomsg.Sum] {
	var s demomsg.Sum
	return func(_ context.Context, v demomsg.Value) (demomsg.Sum, error) {
		s.Total += v.V
		s.Count++
		return s, nil
	}
}

// demoRunningSum launches the stateful running_sum, sends it 1..10 and
// receives the running sums.
func demoRunningSum(ctx context.Context, w io.Writer, rt *actors.Runtime) (*actors.Kernel[demomsg.Value, demomsg.Sum], error) {
	k, err := launchActive(ctx, rt, actors.NewKernel(runningSum, newRunningSum))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "\n%s (stateful: Value -> Sum)\n", runningSum)
	for i := 1; i <= 10; i++ {
		if _, err := k.Send(ctx, demomsg.Value{V: float64(i)}); err != nil {
			return nil, fmt.Errorf("demo: send to %s: %w", runningSum, err)
		}
	}
	var last demomsg.Sum
	fmt.Fprint(w, "  Send 1..10, Receive ->")
	for range 10 {
		if last, err = k.Receive(ctx); err != nil {
			return nil, fmt.Errorf("demo: receive from %s: %w", runningSum, err)
		}
		fmt.Fprintf(w, " %g", last.Total)
	}
	fmt.Fprintf(w, "\n  final running sum: %g after %d values\n", last.Total, last.Count)
	return k, nil
}

// scaleVector is scale's handler: every element times two.
func scaleVector(_ context.Context, v demomsg.Vector) (demomsg.Vector, error) {
	out := make([]float64, len(v.X))
	for i, x := range v.X {
		out[i] = 2 * x
	}
	return demomsg.Vector{X: out}, nil
}

// sumOfSquares is square_sum's handler.
func sumOfSquares(_ context.Context, v demomsg.Vector) (demomsg.Scalar, error) {
	s := 0.0
	for _, x := range v.X {
		s += x * x
	}
	return demomsg.Scalar{V: s}, nil
}

// demoChain launches square_sum, then scale routed into it, sends a Request
// through the chain and a few Sends whose results it receives from the tail.
func demoChain(ctx context.Context, w io.Writer, rt *actors.Runtime) (*actors.Kernel[demomsg.Vector, demomsg.Vector], *actors.Kernel[demomsg.Vector, demomsg.Scalar], error) {
	tail, err := launchActive(ctx, rt, actors.NewStatelessKernel(squareSumID, sumOfSquares))
	if err != nil {
		return nil, nil, err
	}
	head, err := launchActive(ctx, rt, actors.NewStatelessKernel(scaleID, scaleVector, actors.WithDownstream(squareSumID)))
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(w, "\n%s -> %s (kernel-to-kernel chain: Vector -> x2 -> sum of squares)\n", scaleID, squareSumID)

	v := demomsg.Vector{X: []float64{1, 2, 3}}
	s, err := actors.Request[demomsg.Scalar](ctx, rt, scaleID, v)
	if err != nil {
		return nil, nil, fmt.Errorf("demo: request through %s: %w", scaleID, err)
	}
	fmt.Fprintf(w, "  Request %v to %s -> %s replies %g\n", v.X, scaleID, squareSumID, s.V)

	sends := []demomsg.Vector{{X: []float64{1, 1}}, {X: []float64{0.5, 1.5}}, {X: []float64{3, 4}}}
	for _, v := range sends {
		if _, err := head.Send(ctx, v); err != nil {
			return nil, nil, fmt.Errorf("demo: send to %s: %w", scaleID, err)
		}
	}
	for _, v := range sends {
		s, err := tail.Receive(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("demo: receive from %s: %w", squareSumID, err)
		}
		fmt.Fprintf(w, "  Send    %v to %s, Receive from %s -> %g\n", v.X, scaleID, squareSumID, s.V)
	}
	return head, tail, nil
}

// printTelemetry writes one aligned row of counters and latencies per kernel.
func printTelemetry(w io.Writer, stats []telemetry.KernelStats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  kernel\tbackend\tstate\tprocessed\terrors\tdropped\trestarts\tlatency min\tlatency avg\tlatency max")
	for _, s := range stats {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%d\t%d\t%v\t%v\t%v\n",
			s.Kernel, s.Backend, s.State, s.Processed, s.Errors, s.Dropped, s.Restarts,
			s.LatencyMin, s.LatencyAvg, s.LatencyMax)
	}
	return tw.Flush()
}
