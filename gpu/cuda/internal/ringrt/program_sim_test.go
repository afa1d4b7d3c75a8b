//go:build linux && cgo

package ringrt

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
	"github.com/ringactor/ringactor/messages"
)

func loadSaxpy(t *testing.T, b *Runtime) *Program {
	t.Helper()
	return loadProgram(t, b, saxpySpec())
}

// loadProgram generates spec's program and loads it on b; the test is
// skipped without a host compiler.
func loadProgram(t testing.TB, b *Runtime, spec ProgramSpec) *Program {
	t.Helper()
	src, err := NewProgramSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := b.Load(ctx, src)
	if errors.Is(err, hostsim.ErrNoHostCompiler) {
		t.Skip("no host compiler:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// saxpyWant is the Go computation of the handler (float32(a*x) rounds the
// product, as the device build without fma does).
func saxpyWant(req saxpyReq, seen uint64) saxpyResp {
	r := saxpyResp{N: req.N, Seen: seen}
	for i := range req.N {
		r.Z[i] = float32(req.A*req.X[i]) + req.Y[i]
	}
	return r
}

// exchangeProgram submits req and returns the reply header and payload.
func exchangeProgram(t *testing.T, k *Kernel, id uint64, payload []byte) (ring.SlotHeader, []byte) {
	t.Helper()
	if ok, err := k.TrySubmit(1, id, payload); !ok || err != nil {
		t.Fatalf("submit: %v, %v", ok, err)
	}
	h, p := ringtest.PollReply(t, k)
	if h.CorrelationID != id {
		t.Fatalf("reply to %d, want %d", h.CorrelationID, id)
	}
	return h, p
}

// TestRingProgramOnSimulatedDevice runs a user's handler as a persistent
// device ring kernel on the simulated device: replies equal the Go
// computation byte for byte, the state persists between messages and is
// zeroed at a relaunch, a bad length and a handler status come back as
// statuses.
func TestRingProgramOnSimulatedDevice(t *testing.T) {
	b, fd := newSimBackend(t, nil)
	p := loadSaxpy(t, b)
	rng := rand.New(rand.NewPCG(1, 2))
	for launch := range 2 {
		k, err := b.Launch(p, Config{Capacity: 8, Threads: 4})
		if err != nil {
			t.Fatal(err)
		}
		k.Activate()
		for i := range 50 {
			req := saxpyReq{N: uint32(rng.IntN(65)), A: rng.Float32()*4 - 2}
			for j := range req.N {
				req.X[j], req.Y[j] = rng.Float32()*100-50, rng.Float32()*100-50
			}
			h, got := exchangeProgram(t, k, uint64(launch*1000+i), messages.FixedBytes(&req))
			want := saxpyWant(req, uint64(i+1)) // the state restarts from zero at each launch
			if h.Status != ring.StatusOK || string(got) != string(messages.FixedBytes(&want)) {
				r, _ := messages.DecodeFixed[saxpyResp](got)
				t.Fatalf("launch %d message %d: status %d, N %d seen %d, want N %d seen %d", launch, i, h.Status, r.N, r.Seen, want.N, want.Seen)
			}
		}
		bad := saxpyReq{N: 65}
		if h, got := exchangeProgram(t, k, 9, messages.FixedBytes(&bad)); h.Status != 7 || len(got) != 0 || h.Flags&ring.FlagError == 0 {
			t.Fatalf("handler status: %+v, %d bytes", h, len(got))
		}
		if h, _ := exchangeProgram(t, k, 10, []byte{1, 2, 3}); h.Status != ring.StatusBadLength {
			t.Fatalf("short message: status %d", h.Status)
		}
		if err := k.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := fd.Sim().Launches("rc_ring_saxpy"); n != 2 {
		t.Fatalf("%d launches", n)
	}
}

// TestRingProgramsRunAtOnce runs several persistent loops of programs at
// the same time (no process-wide shared memory), each with its own state.
func TestRingProgramsRunAtOnce(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	p := loadSaxpy(t, b)
	var ks []*Kernel
	for range 3 {
		k, err := b.Launch(p, Config{Capacity: 4, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		k.Activate()
		ks = append(ks, k)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(ks))
	for n, k := range ks {
		wg.Go(func() {
			for i := range 40 {
				req := saxpyReq{N: 3, A: float32(n), X: [64]float32{1, 2, 3}, Y: [64]float32{float32(i)}}
				if ok, err := k.TrySubmit(1, uint64(i), messages.FixedBytes(&req)); !ok || err != nil {
					errs <- fmt.Errorf("kernel %d: submit %v %v", n, ok, err)
					return
				}
				deadline := hangDeadline(t) // a hang guard, not a bound on speed
				for {
					if h, got, ok := k.TryPoll(); ok {
						want := saxpyWant(req, uint64(i+1))
						if h.Status != 0 || string(got) != string(messages.FixedBytes(&want)) {
							errs <- fmt.Errorf("kernel %d message %d: wrong reply", n, i)
							return
						}
						break
					}
					if time.Now().After(deadline) {
						errs <- fmt.Errorf("kernel %d: no reply", n)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, k := range ks {
		if err := k.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

// TestRingProgramErrors: a source that does not compile is a
// *gpu.CompilationError with the log, the same error again without a new
// compilation; a simulated device without a host compiler refuses the
// program with a typed error; a bad launch config is an argument error.
func TestRingProgramErrors(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	spec := saxpySpec()
	spec.Code = "__device__ uint32_t saxpy(const rc_ctx *ctx, const saxpyReq *req, saxpyResp *resp, saxpyState *st) { return undefined_name; }"
	src, err := NewProgramSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = b.Load(ctx, src)
	var ce *gpu.CompilationError
	if errors.Is(err, hostsim.ErrNoHostCompiler) {
		t.Skip("no host compiler")
	}
	if !errors.As(err, &ce) || !errors.Is(err, gpu.ErrCompilation) || ce.Log == "" {
		t.Fatalf("bad source: %v", err)
	}
	start := time.Now()
	_, err2 := b.Load(ctx, src)
	var ce2 *gpu.CompilationError
	if !errors.As(err2, &ce2) || ce2.Log != ce.Log {
		t.Fatalf("second load: %v", err2)
	}
	t.Logf("compile error (again after %v): %.300s", time.Since(start), ce.Log)

	t.Setenv(hostsim.HostCompilerEnv, "no-such-compiler-ringactor")
	spec = saxpySpec()
	spec.Code += "\n// " + t.Name() + "\n" // a source no earlier test built
	src, err = NewProgramSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Load(ctx, src)
	var de *gpu.DeviceError
	if !errors.Is(err, hostsim.ErrNoHostCompiler) || !errors.As(err, &de) || !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("no host compiler: %v", err)
	}
	t.Setenv(hostsim.HostCompilerEnv, "")
	p := loadSaxpy(t, b)
	for _, cfg := range []Config{{Capacity: 3}, {SlotSize: 4096 + 8}, {Threads: 2048}, {SlotSize: 64}} {
		if _, err := b.Launch(p, cfg); err == nil {
			t.Fatalf("config %+v accepted", cfg)
		}
	}
	if _, err := b.Launch(nil, Config{}); !errors.Is(err, gpu.ErrArgument) {
		t.Fatalf("nil program: %v", err)
	}
}

// bigReq does not fit shared memory with its response: the loop hands the
// handler the slots in mapped memory instead of staging them.
type bigReq struct {
	N uint32
	X [12000]float32
}

type bigResp struct {
	Sum float64
	Y   [12000]float32
}

const bigCode = `
struct big_sum {
	__device__ double operator()(double a, double b) const { return a + b; }
};

__device__ uint32_t big(const rc_ctx *ctx, const bigReq *req, bigResp *resp, rc_no_state *) {
	double acc = 0.0;
	for (uint32_t i = ctx->thread; i < req->N && i < 12000; i += ctx->threads) {
		resp->Y[i] = 2.0f * req->X[i];
		acc += (double)req->X[i];
	}
	const double s = rc_block_reduce(ctx, acc, big_sum());
	if (ctx->thread == 0) {
		resp->Sum = s;
	}
	return RC_STATUS_OK;
}
`

// TestRingProgramLargeMessagesAnyBlock runs a handler whose messages are
// too large to stage (read and written in place in the ring slots) with
// block sizes that are not powers of two, reducing with rc_block_reduce;
// the response is zero-filled beyond what the handler writes, even in a
// reused slot.
func TestRingProgramLargeMessagesAnyBlock(t *testing.T) {
	b, _ := newSimBackend(t, nil)
	src, err := NewProgramSource(ProgramSpec{Name: "big", Code: bigCode, Handler: "big",
		Req: reflect.TypeFor[bigReq](), Resp: reflect.TypeFor[bigResp]()})
	if err != nil {
		t.Fatal(err)
	}
	if src.SharedBytes != loopSmemHeader {
		t.Fatalf("shared bytes %d: a message this large must not be staged", src.SharedBytes)
	}
	p, err := b.Load(context.Background(), src)
	if errors.Is(err, hostsim.ErrNoHostCompiler) {
		t.Skip("no host compiler")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []int{1, 3, 5} {
		k, err := b.Launch(p, Config{Capacity: 2, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		k.Activate()
		for i, n := range []uint32{12000, 7, 12000, 3} { // the 2-slot ring reuses slots
			req := &bigReq{N: n}
			var want bigResp
			for j := range n {
				req.X[j] = float32(j%97) - 40
				want.Y[j] = 2 * req.X[j]
				want.Sum += float64(req.X[j])
			}
			h, got := exchangeProgram(t, k, uint64(i), messages.FixedBytes(req))
			if h.Status != 0 || string(got) != string(messages.FixedBytes(&want)) {
				r, _ := messages.DecodeFixed[bigResp](got)
				t.Fatalf("threads %d message %d (n %d): status %d, sum %v want %v", threads, i, n, h.Status, r.Sum, want.Sum)
			}
		}
		if err := k.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
