//go:build linux && cgo

package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/messages"
)

type tallyReq struct{ Add uint32 }
type tallyResp struct{ Total uint64 }
type tallyState struct{ Total uint64 }

func init() {
	messages.MustRegister[tallyReq]("actors.test.tally.request")
	messages.MustRegister[tallyResp]("actors.test.tally.response")
}

const tallyCUDA = `
__device__ uint32_t tally(const rc_ctx *ctx, const tallyReq *req, tallyResp *resp, tallyState *st) {
	if (ctx->thread == 0) {
		st->Total += req->Add;
		resp->Total = st->Total;
	}
	return RC_STATUS_OK;
}
`

func tallyFallback() Handler[tallyReq, tallyResp] {
	var total uint64
	return func(_ context.Context, r tallyReq) (tallyResp, error) {
		total += uint64(r.Add)
		return tallyResp{Total: total}, nil
	}
}

// manyKernels is how many device ring kernels TestManyDeviceKernels runs
// on one simulated device: 10,000, or 1,000 under the race detector.
func manyKernels() int {
	if raceEnabled {
		return 1000
	}
	return 10000
}

// parallel runs f(i) for i in [0, n) on 32 goroutines.
func parallel(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// TestManyDeviceKernels runs manyKernels() device ring kernels on one
// simulated device (H100-sized limits: one grid per program, so one grid
// serves them all): every kernel is placed on the device, every request
// gets exactly one outcome, in order per kernel, with each kernel's own
// device State; the program's grid was started once.
func TestManyDeviceKernels(t *testing.T) {
	n := manyKernels()
	sim := simdevice.NewBackend(256<<20, cuda.WithArenaBytes(64<<20))
	t.Cleanup(func() {
		if err := sim.Close(); err != nil {
			t.Errorf("closing the simulated backend: %v", err)
		}
	})
	rt := newTestRuntime(t, WithBackends(sim))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ks := make([]*Kernel[tallyReq, tallyResp], n)
	errs := make(chan error, n)
	parallel(n, func(i int) {
		def, err := NewDeviceRingKernel(fmt.Sprintf("tally-%d", i), DeviceSource{Code: tallyCUDA, Entry: "tally", State: tallyState{}},
			tallyFallback, WithCapacity(4), WithOutputCapacity(4))
		if err == nil {
			ks[i], err = Launch(ctx, rt, def)
		}
		if err == nil {
			err = ks[i].Activate(ctx)
		}
		if err == nil && ks[i].Placement() != "cuda:sim" {
			err = fmt.Errorf("kernel %d placed on %q", i, ks[i].Placement())
		}
		if err != nil {
			errs <- err
		}
	})
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if s := sim.MailboxStats(); s.Grids != 1 || s.Mailboxes != n {
		t.Fatalf("mailbox stats %+v: want one grid of %d mailboxes", s, n)
	}
	const perKernel = 3
	totals := make([][]uint64, n)
	var outcomes atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	parallel(n, func(i int) {
		var mu sync.Mutex
		for m := range perKernel {
			wg.Add(1)
			err := ks[i].RequestAsync(ctx, tallyReq{Add: uint32(m + 1)}, func(r tallyResp, err error) {
				defer wg.Done()
				outcomes.Add(1)
				if err != nil {
					failed.Store(fmt.Errorf("kernel %d message %d: %w", i, m, err))
					return
				}
				mu.Lock()
				totals[i] = append(totals[i], r.Total)
				mu.Unlock()
			})
			if err != nil {
				wg.Done()
				failed.Store(err)
			}
		}
	})
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	if got := outcomes.Load(); got != int64(n*perKernel) {
		t.Fatalf("%d outcomes for %d requests", got, n*perKernel)
	}
	for i, tt := range totals {
		if len(tt) != perKernel || tt[0] != 1 || tt[1] != 3 || tt[2] != 6 {
			t.Fatalf("kernel %d: totals %v, want [1 3 6] (in order, its own State)", i, tt)
		}
	}
	parallel(n, func(i int) {
		if err := ks[i].Terminate(ctx); err != nil && !errors.Is(err, ErrTerminated) {
			failed.Store(err)
		}
	})
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	if s := sim.MailboxStats(); s.Mailboxes != 0 {
		t.Fatalf("after terminating every kernel: %+v", s)
	}
}

// TestDeviceCapacityOption: with the table full, a kernel with
// WithOnDeviceCapacity(CapacityError) fails Launch with
// gpu.ErrDeviceCapacity at once; the default places it on its fallback.
func TestDeviceCapacityOption(t *testing.T) {
	sim := simdevice.NewBackend(64<<20, cuda.WithMailboxes(64))
	t.Cleanup(func() { _ = sim.Close() })
	rt := newTestRuntime(t, WithBackends(sim))
	ctx := testCtx(t)
	src := DeviceSource{Code: tallyCUDA, Entry: "tally", State: tallyState{}}
	for i := range 64 {
		def, err := NewDeviceRingKernel(fmt.Sprintf("cap-%d", i), src, tallyFallback, WithCapacity(4))
		if err != nil {
			t.Fatal(err)
		}
		if k := mustLaunch(t, rt, def, true); k.Placement() != "cuda:sim" {
			t.Fatalf("kernel %d placed on %q", i, k.Placement())
		}
	}
	def, err := NewDeviceRingKernel("cap-error", src, tallyFallback, WithCapacity(4), WithOnDeviceCapacity(CapacityError))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Launch(ctx, rt, def); !errors.Is(err, gpu.ErrDeviceCapacity) || !errors.Is(err, gpu.ErrDevice) {
		t.Fatalf("Launch past the table: %v", err)
	}
	def, err = NewDeviceRingKernel("cap-fallback", src, tallyFallback, WithCapacity(4))
	if err != nil {
		t.Fatal(err)
	}
	k := mustLaunch(t, rt, def, true)
	if k.Placement() != PlacementCPU {
		t.Fatalf("placement %q past the table, want the fallback", k.Placement())
	}
	if r, err := k.Request(ctx, tallyReq{Add: 5}); err != nil || r.Total != 5 {
		t.Fatalf("fallback: %v, %v", r, err)
	}
}
