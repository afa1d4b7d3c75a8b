package devcheck

import (
	"context"
	"errors"
	"fmt"
	"github.com/ringactor/ringactor/internal/devkernels"
	"slices"
	"sync"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// hzAddSource is a source kernel with cuda.SourceKernel's calling
// convention. Its entry has the name of the built-in rc_add_f64, so the
// simulated device, which runs host-compiled kernels by entry name, runs
// it too.
const hzAddSource = `
extern "C" __global__ void rc_add_f64(const double *a, const double *b, double *out, unsigned long long n) {
	unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
	if (i < n) {
		out[i] = a[i] + b[i];
	}
}
`

// hazardsStep runs every operation that could make a synchronising driver
// call beside a live ring under traffic; on a GPU such a call would never
// return (the step is killed at its timeout and the hung call is on the
// stacks), on the simulated device its strict hazard model fails it.
var hazardsStep = Step{
	Name:    "hazards",
	Checks:  "no driver call blocks beside a live ring under traffic: Execute, ExecuteBatch, buffer alloc/free, a source kernel's registration, a second ring, a user kernel's registration, Close",
	Timeout: 60 * time.Second,
	run:     runHazards,
}

func runHazards(ctx context.Context, e *Env) error {
	rt, b, err := e.Runtime()
	if err != nil {
		return err
	}
	raised := func(string) error { return nil }
	if e.Sim() {
		raised = simRaised(b)
	} else {
		e.SimOnly("strict hazard model (a synchronising call fails at once instead of hanging)")
	}
	dev := b.Name()

	e.Progress("launching a live device ring (sum)")
	def, err := actors.NewDeviceKernel[ringmsg.ReduceMsg, ringmsg.ScalarReply]("hz-sum", ringmsg.Sum)
	if err != nil {
		return err
	}
	ring1, err := launch(ctx, rt, def)
	if err != nil {
		return err
	}
	if err := placement(ring1.Placement(), b); err != nil {
		return err
	}
	stop := make(chan struct{})
	var traffic sync.WaitGroup
	var sent int
	var trafficErr error
	traffic.Add(1)
	go func() {
		defer traffic.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				sent = i
				return
			default:
			}
			r := ringmsg.ReduceMsg{N: 2}
			r.X[0], r.X[1] = float32(i%1000), 1
			got, err := ring1.Request(ctx, r)
			if err != nil || got.Value != float64(i%1000+1) {
				trafficErr = fmt.Errorf("ring request %d: %v, %v", i, got.Value, err)
				sent = i
				return
			}
		}
	}()
	stopTraffic := sync.OnceFunc(func() { close(stop); traffic.Wait() })
	defer stopTraffic()

	e.Progress("Execute and ExecuteBatch beside the ring")
	var p actors.ExecProfile
	in, _ := gpu.NewBuffer([]float32{-1, 2, -3})
	out, err := rt.Execute(ctx, "relu", []*gpu.UnifiedBuffer{in}, nil, actors.OnBackend(dev), actors.Profiled(&p))
	if err != nil || p.Backend != dev {
		return fmt.Errorf("execute beside a ring: %v on %q", err, p.Backend)
	}
	if got, err := gpu.ToSlice[float32](ctx, out); err != nil || !slices.Equal(got, []float32{0, 2, 0}) {
		return fmt.Errorf("execute beside a ring: %v, %v", got, err)
	}
	a1, _ := gpu.NewBuffer([]float32{1, 2})
	a2, _ := gpu.NewBuffer([]float32{3, 4})
	outs, err := rt.ExecuteBatch(ctx, "scale", [][]*gpu.UnifiedBuffer{{a1}, {a2}}, actors.WithScalars(2), actors.OnBackend(dev))
	if err != nil || len(outs) != 2 {
		return fmt.Errorf("executeBatch beside a ring: %v", err)
	}
	if got, _ := gpu.ToSlice[float32](ctx, outs[1]); !slices.Equal(got, []float32{6, 8}) {
		return fmt.Errorf("executeBatch beside a ring: %v", got)
	}
	if err := raised("Execute and ExecuteBatch"); err != nil {
		return err
	}

	e.Progress("device buffers: alloc, copy, free beside the ring")
	mem, err := b.Allocator().Alloc(ctx, 4096)
	if err != nil {
		return err
	}
	buf, _ := gpu.NewBuffer([]float64{1, 2, 3})
	if _, err := buf.EnsureOnDevice(ctx, b.Allocator()); err != nil {
		return err
	}
	if err := errors.Join(mem.Free(), buf.Free()); err != nil {
		return err
	}
	if err := raised("buffer alloc/free"); err != nil {
		return err
	}

	e.Progress("registering a source kernel beside the ring")
	epochs := b.EpochStats().Count
	ks, err := cuda.SourceKernel(ctx, b, cuda.SourceSpec{
		Name: "hz_add", Code: hzAddSource, Entry: "rc_add_f64", DTypes: []gpu.DType{gpu.F64}, Inputs: 2, Elementwise: true,
	})
	if err != nil {
		return fmt.Errorf("source kernel: %w", err)
	}
	if err := rt.RegisterKernel(ctx, ks); err != nil {
		return err
	}
	x, _ := gpu.NewBuffer([]float64{1, 2})
	y, _ := gpu.NewBuffer([]float64{10, 20})
	sum, err := rt.Execute(ctx, "hz_add", []*gpu.UnifiedBuffer{x, y}, nil, actors.OnBackend(dev), actors.Profiled(&p))
	if err != nil || p.Backend != dev {
		return fmt.Errorf("source kernel beside a ring: %v on %q", err, p.Backend)
	}
	if got, _ := gpu.ToSlice[float64](ctx, sum); !slices.Equal(got, []float64{11, 22}) {
		return fmt.Errorf("source kernel beside a ring: %v", got)
	}
	if got := b.EpochStats(); got.Count != epochs+1 || got.LastReason != "cuModuleLoadDataEx" {
		return fmt.Errorf("registering a source kernel beside a ring: epochs %d -> %+v, want one module-load epoch", epochs, got)
	}
	if err := raised("RegisterKernel"); err != nil {
		return err
	}

	e.Progress("launching a second device ring beside the first")
	def2, err := actors.NewDeviceKernel[ringmsg.ReduceMsg, ringmsg.ScalarReply]("hz-max", ringmsg.Max)
	if err != nil {
		return err
	}
	ring2, err := launch(ctx, rt, def2)
	if err != nil {
		return err
	}
	r := ringmsg.ReduceMsg{N: 3}
	r.X[0], r.X[1], r.X[2] = 4, 9, -1
	if got, err := ring2.Request(ctx, r); err != nil || got.Value != 9 {
		return fmt.Errorf("second ring: %v, %v", got.Value, err)
	}
	if err := raised("second device ring"); err != nil {
		return err
	}

	e.Progress("registering a user device kernel beside the rings")
	epochs3 := b.EpochStats().Count
	def3, err := saxpyDef("hz-saxpy")
	if err != nil {
		return err
	}
	ring3, err := launch(ctx, rt, def3)
	if err != nil {
		return err
	}
	if err := placement(ring3.Placement(), b); err != nil {
		return err
	}
	if got := b.EpochStats(); got.Count <= epochs3 {
		return fmt.Errorf("registering a user device kernel beside rings made no epoch: %+v", got)
	}
	q := devkernels.SaxpyReq{A: 2, N: 2}
	q.X[0], q.X[1], q.Y[0], q.Y[1] = 1, 2, 10, 20
	if got, err := ring3.Request(ctx, q); err != nil || got.N != 2 || got.Z[0] != 12 || got.Z[1] != 24 {
		return fmt.Errorf("user device kernel: %v, %v", got.Z[:2], err)
	}
	if err := raised("a user device kernel's registration"); err != nil {
		return err
	}

	stopTraffic()
	if trafficErr != nil {
		return trafficErr
	}
	if sent == 0 {
		return errors.New("no traffic went through the first ring")
	}
	st := b.EpochStats()
	e.Set("ring_requests", sent)
	e.Set("epochs", st.Count)
	e.Set("epoch_max_ms", ms(st.Max))

	e.Progress("closing the runtime and backend with the rings live")
	closed := time.Now()
	if err := e.close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	e.Set("close_ms", ms(time.Since(closed)))
	return raised("Runtime.Close")
}

// launch launches def on rt and opens its gate.
func launch[Req, Resp any](ctx context.Context, rt *actors.Runtime, def *actors.KernelDef[Req, Resp]) (*actors.Kernel[Req, Resp], error) {
	k, err := actors.Launch(ctx, rt, def)
	if err != nil {
		return nil, fmt.Errorf("launch %s: %w", def.ID(), err)
	}
	if err := k.Activate(ctx); err != nil {
		return nil, fmt.Errorf("activate %s: %w", def.ID(), err)
	}
	return k, nil
}

// ms is d in milliseconds, rounded to microseconds.
func ms(d time.Duration) float64 { return float64(d.Round(time.Microsecond)) / 1e6 }
