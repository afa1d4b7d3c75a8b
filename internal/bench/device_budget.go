package bench

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/internal/devcheck"
	"github.com/ringactor/ringactor/messages"
)

// The device budget's measures: how many programs of 256-thread blocks
// the budget places, how a sparse mailbox is served among saturated ones,
// what an epoch costs during saturation, and how long rings stay parked
// while a new program registers.

// saturatedDepth is the ring capacity of a saturated mailbox.
const saturatedDepth = 2048

// BackendFactory opens a fresh CUDA backend with opts (the simulated
// device, or device 0).
type BackendFactory func(opts ...cuda.BackendOption) (*cuda.Backend, error)

// BudgetConfig sizes the budget measures.
type BudgetConfig struct {
	Programs   int // most programs of 256-thread blocks tried
	GridBlocks int // blocks of the saturation measures' grid
	Saturated  int // saturated mailboxes (at least 4 × GridBlocks)
	RTTSamples int // sparse round trips
	Epochs     int // device epochs during saturation
}

// QuickBudget and FullBudget are the budget measures' configurations.
var (
	QuickBudget = BudgetConfig{Programs: 12, GridBlocks: 4, Saturated: 16, RTTSamples: 50, Epochs: 5}
	FullBudget  = BudgetConfig{Programs: 40, GridBlocks: 4, Saturated: 32, RTTSamples: 300, Epochs: 20}
)

// BudgetResult is the budget measures' numbers (JSON names are the
// contract of `ringactor bench --json --device=sim`).
type BudgetResult struct {
	ProgramsFit256         int     `json:"device_sim_programs_fit_256"`
	RTTQuietAmongSaturated int64   `json:"device_sim_rtt_p50_quiet_among_saturated_ns"`
	RTTQuietAlone          int64   `json:"device_sim_rtt_p50_quiet_alone_ns"`
	SaturatedMailboxes     int     `json:"device_sim_saturated_mailboxes"`
	EpochMsSaturated       float64 `json:"device_sim_epoch_ms_saturated"`
	RegisterMsBesideRings  float64 `json:"device_sim_register_ms_beside_rings"`
}

// tallySource is the tally kernel as a ring program named name (a
// comment makes each name's source, and so its program, its own).
func tallySource(name string) (*cuda.RingProgramSource, error) {
	return cuda.NewRingProgramSource(cuda.RingProgramSpec{Name: name, Code: "// " + name + "\n" + tallyCode, Handler: "bench_tally",
		Req: reflect.TypeFor[Tally](), Resp: reflect.TypeFor[TallyReply](), State: reflect.TypeFor[TallyState]()})
}

// RunDeviceBudget measures the device budget on backends from open.
func RunDeviceBudget(ctx context.Context, open BackendFactory, cfg BudgetConfig, log func(msg string, args ...any)) (*BudgetResult, error) {
	res := &BudgetResult{}
	log("bench: programs of 256-thread blocks until the budget refuses one")
	n, err := programsFit(ctx, open, cfg.Programs)
	if err != nil {
		return nil, err
	}
	res.ProgramsFit256 = n
	log("bench: a sparse mailbox among saturated ones", "saturated", cfg.Saturated, "grid_blocks", cfg.GridBlocks)
	if err := saturation(ctx, open, cfg, res); err != nil {
		return nil, err
	}
	return res, nil
}

// programsFit starts grids of distinct programs of 256-thread blocks until
// the budget refuses one (at most most).
func programsFit(ctx context.Context, open BackendFactory, most int) (int, error) {
	b, err := open()
	if err != nil {
		return 0, err
	}
	defer b.Close()
	for i := range most {
		src, err := tallySource(fmt.Sprintf("bench_fit_%d", i))
		if err != nil {
			return 0, err
		}
		p, err := b.LoadRingProgram(ctx, src)
		if err != nil {
			return 0, err
		}
		if err := b.StartRingGrid(p, 256); err != nil {
			if errors.Is(err, gpu.ErrDeviceCapacity) {
				return i, nil
			}
			return 0, err
		}
	}
	return most, nil
}

// saturation measures a quiet mailbox's round trip alone and among
// cfg.Saturated mailboxes whose rings the feeders keep full, epochs during
// the saturation, and a program registered beside the running rings.
func saturation(ctx context.Context, open BackendFactory, cfg BudgetConfig, res *BudgetResult) error {
	// Deep rings (2,048 slots) stay saturated between the feeders' visits.
	b, err := open(cuda.WithGridBlocks(cfg.GridBlocks), cuda.WithMailboxPinnedMax(16<<20))
	if err != nil {
		return err
	}
	defer b.Close()
	src, err := tallySource("bench_saturation")
	if err != nil {
		return err
	}
	p, err := b.LoadRingProgram(ctx, src)
	if err != nil {
		return err
	}
	quiet, err := b.OpenMailbox(p, cuda.RingConfig{})
	if err != nil {
		return err
	}
	defer quiet.Close(ctx)
	quiet.Activate()
	if res.RTTQuietAlone, err = quietRTT(ctx, quiet, cfg.RTTSamples); err != nil {
		return err
	}
	// The saturated mailboxes' rings are filled before their gates open
	// and not fed while the quiet one is timed: no host goroutine competes
	// with the device for the host's cores. Each still has work at the end
	// (its processed count below its ring), or the measure is refused.
	boxes := make([]*cuda.RingKernel, cfg.Saturated)
	queued := make([]uint64, cfg.Saturated)
	feedReq := Tally{Add: 1}
	payload := messages.FixedBytes(&feedReq)
	for i := range boxes {
		if boxes[i], err = b.OpenMailbox(p, cuda.RingConfig{Capacity: saturatedDepth}); err != nil {
			return err
		}
		defer boxes[i].Close(ctx)
		for ; ; queued[i]++ {
			ok, err := boxes[i].TrySubmit(1, queued[i], payload)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
		}
	}
	for _, k := range boxes {
		k.Activate()
	}
	res.SaturatedMailboxes = cfg.Saturated
	if res.RTTQuietAmongSaturated, err = quietRTT(ctx, quiet, cfg.RTTSamples); err != nil {
		return err
	}
	for i, k := range boxes {
		if n := k.Control().Processed.Load(); n >= saturatedDepth {
			return fmt.Errorf("saturated mailbox %d ran dry (%d messages handled) while the quiet one was timed: raise the ring depth", i, n)
		}
	}
	// Then kept saturated by feeders while device epochs run.
	var stop atomic.Bool
	var served atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for i, k := range boxes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := devcheck.Feed(ctx, k, payload, queued[i], &stop, &served); err != nil {
				failed.Store(err)
			}
		}()
	}
	stopAll := func() error {
		stop.Store(true)
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			return err
		}
		return nil
	}
	defer stopAll()
	var epochs []time.Duration
	for range cfg.Epochs {
		d, err := b.DeviceEpoch(ctx)
		if err != nil {
			return fmt.Errorf("device epoch during saturation: %w", err)
		}
		epochs = append(epochs, d)
	}
	slices.Sort(epochs)
	res.EpochMsSaturated = float64(epochs[len(epochs)/2].Microseconds()) / 1e3
	// A new program registered while the rings run: its module load is
	// the one call that parks them (the compilation runs before).
	reg, err := tallySource("bench_registered")
	if err != nil {
		return err
	}
	before := b.EpochStats()
	if _, err := b.LoadRingProgram(ctx, reg); err != nil {
		return err
	}
	after := b.EpochStats()
	if after.Count > before.Count {
		res.RegisterMsBesideRings = float64((after.Total - before.Total).Microseconds()) / 1e3
	}
	return stopAll()
}

// quietRTT is the p50 of n sequential exchanges with k.
func quietRTT(ctx context.Context, k *cuda.RingKernel, n int) (int64, error) {
	req := Tally{Add: 1}
	payload := messages.FixedBytes(&req)
	buf := make([]byte, k.PayloadMax())
	d := make([]int64, 0, n)
	for i := range n {
		start := time.Now()
		for {
			ok, err := k.TrySubmit(1, uint64(i), payload)
			if err != nil {
				return 0, err
			}
			if ok {
				break
			}
			runtime.Gosched()
		}
		for {
			h, _, ok := k.TryPollInto(buf)
			if ok {
				if h.CorrelationID != uint64(i) {
					return 0, fmt.Errorf("reply %d, want %d", h.CorrelationID, i)
				}
				break
			}
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			runtime.Gosched()
		}
		d = append(d, int64(time.Since(start)))
	}
	slices.Sort(d)
	return d[len(d)/2], nil
}
