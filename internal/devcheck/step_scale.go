package devcheck

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/internal/devkernels"
	"github.com/ringactor/ringactor/messages"
)

// scaleStep fills the device's budget and checks that nothing waits.
var scaleStep = Step{
	Name: "scale",
	Checks: "persistent grids up to the device's budget (the next refused at once), an Execute and a one-shot kernel with 100 KiB of dynamic shared memory beside them; " +
		"saturated and sparse mailboxes with a small first table (it grows) under device epochs: sparse ones served, epochs complete, nothing lost or reordered",
	Timeout: 3 * time.Minute,
	run:     runScale,
}

// scaleBesideTimeout bounds the one-shot work beside a full budget: on a
// GPU a kernel that cannot become resident waits forever, so an overrun is
// a failure, not slowness.
const scaleBesideTimeout = time.Minute

func runScale(ctx context.Context, e *Env) error {
	if err := scaleGrids(ctx, e); err != nil {
		return err
	}
	return scaleMailboxes(ctx, e)
}

// scaleOptions are the step's backend options: on the simulated device an
// H200's profile.
func scaleOptions(e *Env, opts ...cuda.BackendOption) []cuda.BackendOption {
	if e.Sim() {
		opts = append(opts, cuda.WithDeviceProfile(cuda.H200Profile()))
	}
	return opts
}

// scaleGrids starts grids of SAXPY of 32, 64, 96… threads a block (a grid
// each) until the budget refuses one, then runs Execute and the shared
// memory probe beside them.
func scaleGrids(ctx context.Context, e *Env) error {
	b, err := e.Backend(scaleOptions(e)...)
	if err != nil {
		return err
	}
	src, err := saxpyProgram()
	if err != nil {
		return err
	}
	p, err := b.LoadRingProgram(ctx, src)
	if err != nil {
		return fmt.Errorf("loading the ring program: %w", err)
	}
	grids := 0
	var refusal error
	for threads := 32; threads <= 1024; threads += 32 {
		e.Progress("grid of %d-thread blocks", threads)
		if err := b.StartRingGrid(p, threads); err != nil {
			if !errors.Is(err, gpu.ErrDeviceCapacity) {
				return fmt.Errorf("grid %d (%d threads): %w", grids+1, threads, err)
			}
			refusal = err
			break
		}
		grids++
	}
	if refusal == nil {
		return fmt.Errorf("%d grids up to 1,024 threads a block, none refused: the budget holds nothing", grids)
	}
	var be *cuda.BudgetError
	if !errors.As(refusal, &be) {
		return fmt.Errorf("the refusal is not the budget's: %w", refusal)
	}
	st, err := b.DeviceBudget()
	if err != nil {
		return err
	}
	e.Set("grids_placed", grids)
	e.Set("budget_blocks", st.Blocks)
	e.Set("refused_limit", be.Limit)
	e.Set("fullest_sm_threads", st.MaxThreadsPerSM)
	e.Set("fullest_sm_registers", st.MaxRegistersPerSM)

	bctx, cancel := context.WithTimeout(ctx, scaleBesideTimeout)
	defer cancel()
	e.Progress("Execute beside %d grids", grids)
	x := make([]float32, 4096)
	for i := range x {
		x[i] = float32(i%5) - 2
	}
	in, err := gpu.NewBuffer(x)
	if err != nil {
		return err
	}
	defer in.Free()
	start := time.Now()
	if err := b.Execute(bctx, relu(), []*gpu.UnifiedBuffer{in}, in, nil); err != nil {
		return fmt.Errorf("an Execute beside %d persistent grids: %w", grids, err)
	}
	got, err := gpu.ToSlice[float32](bctx, in)
	if err != nil || got[0] != 0 || got[3] != 1 {
		return fmt.Errorf("an Execute beside the grids: wrong result (%v)", err)
	}
	e.Set("execute_beside_ms", float64(time.Since(start).Microseconds())/1e3)
	e.Progress("one-shot kernel with 100 KiB of dynamic shared memory beside %d grids", grids)
	start = time.Now()
	if err := b.SharedMemoryProbe(bctx, 100<<10); err != nil {
		return fmt.Errorf("100 KiB shared-memory kernel beside %d grids: %w", grids, err)
	}
	e.Set("smem_100k_beside_ms", float64(time.Since(start).Microseconds())/1e3)
	if e.Sim() {
		return simRaised(b)("beside the full budget")
	}
	return nil
}

// relu is the built-in relu's spec.
func relu() *gpu.KernelSpec {
	for _, s := range cpu.BuiltinKernels() {
		if s.Name == "relu" {
			return s
		}
	}
	panic("devcheck: no built-in relu")
}

// scaleMailboxes opens saturated and sparse mailboxes of one program on a
// grid whose table starts small, keeps the saturated ones fed while the
// sparse ones exchange one message at a time and device epochs run.
func scaleMailboxes(ctx context.Context, e *Env) error {
	saturated, sparse, first := pick(e, 24, 300, 300), pick(e, 8, 100, 100), pick(e, 8, 64, 64)
	b, err := e.Backend(scaleOptions(e, cuda.WithMailboxTableSize(first))...)
	if err != nil {
		return err
	}
	src, err := saxpyProgram()
	if err != nil {
		return err
	}
	p, err := b.LoadRingProgram(ctx, src)
	if err != nil {
		return fmt.Errorf("loading the ring program: %w", err)
	}
	e.Progress("opening %d saturated and %d sparse mailboxes (table of %d first)", saturated, sparse, first)
	boxes := make([]*cuda.RingKernel, saturated+sparse)
	defer func() {
		for _, k := range boxes {
			if k != nil {
				_ = k.Close(ctx)
			}
		}
	}()
	for i := range boxes {
		if boxes[i], err = b.OpenMailbox(p, cuda.RingConfig{}); err != nil {
			return fmt.Errorf("mailbox %d: %w", i, err)
		}
		boxes[i].Activate()
	}
	ms := b.MailboxStats()
	e.Set("mailboxes", ms.Mailboxes)
	e.Set("table_capacity", ms.Capacity)
	if ms.Capacity <= first {
		return fmt.Errorf("the table of %d entries did not grow for %d mailboxes", ms.Capacity, len(boxes))
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, saturated+1)
	var served atomic.Int64
	feedReq := fullSaxpy(3)
	for _, k := range boxes[:saturated] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Feed(ctx, k, messages.FixedBytes(&feedReq), 0, &stop, &served); err != nil {
				errs <- err
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	// The saturated mailboxes are busy before the sparse ones ask.
	for served.Load() < int64(2*saturated) {
		if err := ctx.Err(); err != nil {
			return err
		}
		runtime.Gosched()
	}
	rounds := pick(e, 3, 5, 10)
	var rtts, epochs []time.Duration
	for r := range rounds {
		for i, k := range boxes[saturated:] {
			start := time.Now()
			req := fullSaxpy(r*len(boxes) + i)
			if err := exchangeAll(ctx, k, []devkernels.SaxpyReq{req}, checkSaxpy(req)); err != nil {
				return fmt.Errorf("sparse mailbox %d among %d saturated: %w", i, saturated, err)
			}
			rtts = append(rtts, time.Since(start))
		}
		e.Progress("device epoch %d of %d while %d mailboxes are saturated", r+1, rounds, saturated)
		d, err := b.DeviceEpoch(ctx)
		if err != nil {
			return fmt.Errorf("device epoch among %d saturated mailboxes: %w", saturated, err)
		}
		epochs = append(epochs, d)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		return fmt.Errorf("a saturated mailbox: %w", err)
	}
	e.Set("saturated", saturated)
	e.Set("sparse", sparse)
	e.Set("saturated_served", served.Load())
	e.Set("sparse_rtt_p50_us", quantileUS(rtts, 0.5))
	e.Set("sparse_rtt_max_us", quantileUS(rtts, 1))
	e.Set("epoch_saturated_p50_ms", quantileUS(epochs, 0.5)/1e3)
	e.Set("epoch_saturated_max_ms", quantileUS(epochs, 1)/1e3)
	if e.Sim() {
		return simRaised(b)("saturated mailboxes")
	}
	return nil
}

// checkSaxpy checks one SAXPY reply against req.
func checkSaxpy(req devkernels.SaxpyReq) func(int, ring.SlotHeader, []byte) error {
	return func(_ int, h ring.SlotHeader, payload []byte) error {
		if h.Status != ring.StatusOK {
			return fmt.Errorf("status %d", h.Status)
		}
		r, err := messages.DecodeFixed[devkernels.SaxpyResp](payload)
		if err != nil {
			return err
		}
		if r.N != req.N || r.Z[5] != float32(req.A*req.X[5])+req.Y[5] {
			return fmt.Errorf("wrong reply (N %d)", r.N)
		}
		return nil
	}
}

// Feed keeps k's input ring full of payload until stop is set, then
// drains it (queued, the requests 0 to queued-1 the caller submitted
// already), checking that the replies come back in order, each once, and
// counting them in served. The saturated mailboxes of the scale step and
// of the device bench. When the rings neither take nor give it backs off
// (up to 100 µs), so that with deep rings the feeders' own use of the
// host's cores stays small beside the device's.
func Feed(ctx context.Context, k *cuda.RingKernel, payload []byte, queued uint64, stop *atomic.Bool, served *atomic.Int64) error {
	buf := make([]byte, k.PayloadMax())
	sent, recv := queued, uint64(0)
	w := ring.Waiter{Strategy: ring.WaitStrategy{Spins: 16, Yields: 16, SleepMin: time.Microsecond, SleepMax: 100 * time.Microsecond}, Done: ctx.Done()}
	for {
		progress := false
		for !stop.Load() {
			ok, err := k.TrySubmit(1, sent, payload)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			sent++
			progress = true
		}
		for {
			h, _, ok := k.TryPollInto(buf)
			if !ok {
				break
			}
			if h.CorrelationID != recv {
				return fmt.Errorf("reply %d, want %d: out of order", h.CorrelationID, recv)
			}
			recv++
			served.Add(1)
			progress = true
		}
		if stop.Load() && recv == sent {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%d of %d replies: %w", recv, sent, err)
		}
		if progress {
			w.Reset()
		} else {
			w.Wait(nil, nil)
		}
	}
}
