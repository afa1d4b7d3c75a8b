package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/messages"
)

// Tally is the device bench's request: the kernel adds Add to its State
// and answers the sum.
type Tally struct{ Add uint32 }

// TallyReply is the device bench's reply.
type TallyReply struct{ Total uint64 }

// TallyState is the device bench kernel's State (in device memory).
type TallyState struct{ Total uint64 }

func init() {
	messages.MustRegister[Tally]("ringactor.bench.tally")
	messages.MustRegister[TallyReply]("ringactor.bench.tally.reply")
}

const tallyCode = `
__device__ uint32_t bench_tally(const rc_ctx *ctx, const Tally *req, TallyReply *resp, TallyState *st) {
	if (ctx->thread == 0) {
		st->Total += req->Add;
		resp->Total = st->Total;
	}
	return RC_STATUS_OK;
}
`

func tallyFallback() actors.Handler[Tally, TallyReply] {
	var total uint64
	return func(_ context.Context, r Tally) (TallyReply, error) {
		total += uint64(r.Add)
		return TallyReply{Total: total}, nil
	}
}

// DeviceConfig sizes the device measures.
type DeviceConfig struct {
	Kernels     int   // device ring kernels of the many-kernel run
	RTTSamples  int   // sequential round trips per round-trip measure
	Pipelined   []int // busy kernel counts of the pipelined measures
	PerBusyMsgs int   // messages per measure, over the busy kernels
	InFlight    int   // requests in flight per busy kernel
}

// QuickDevice and FullDevice are the device measures' configurations.
var (
	QuickDevice = DeviceConfig{Kernels: 10_000, RTTSamples: 300, Pipelined: []int{1, 16, 1024}, PerBusyMsgs: 3_000, InFlight: 4}
	FullDevice  = DeviceConfig{Kernels: 10_000, RTTSamples: 2_000, Pipelined: []int{1, 16, 1024}, PerBusyMsgs: 20_000, InFlight: 4}
)

// DeviceResult is the device measures' numbers (JSON names are the
// contract of `ringactor bench --json --device=sim`).
type DeviceResult struct {
	Kernels          int     `json:"device_sim_kernels"`
	RTTAloneP50      int64   `json:"device_sim_rtt_p50_alone_ns"`
	RTTOneOfManyP50  int64   `json:"device_sim_rtt_p50_one_of_many_ns"`
	Pipelined1       float64 `json:"device_sim_pipelined_msgs_per_s_1"`
	Pipelined16      float64 `json:"device_sim_pipelined_msgs_per_s_16"`
	Pipelined1024    float64 `json:"device_sim_pipelined_msgs_per_s_1024"`
	HostBytesPerBox  float64 `json:"device_sim_host_bytes_per_mailbox"`
	PinnedBytesPerBx float64 `json:"device_sim_pinned_bytes_per_mailbox"`
	// StateLinkBytes is the State's traffic over the host link per message:
	// 0 by construction (the State slot is device memory from the
	// stream-ordered pool; only the request and the reply cross, once each).
	StateLinkBytes float64 `json:"device_sim_state_link_bytes_per_msg"`
	Grids          int     `json:"device_sim_grids"`
	// BudgetResult is the device budget's measures (RunDeviceBudget).
	*BudgetResult
	// LaneResult is the device lanes' measures (RunDeviceLanes).
	*LaneResult
}

// RunDevice measures device ring kernels on b (a CUDA backend, e.g. the
// simulated device): one busy kernel's round trip alone and among
// cfg.Kernels idle ones, the aggregate rate of 1, 16 and 1024 busy kernels,
// and what each kernel costs in Go heap and pinned memory.
func RunDevice(ctx context.Context, b *cuda.Backend, cfg DeviceConfig, log func(msg string, args ...any)) (*DeviceResult, error) {
	rt, err := actors.NewRuntime(actors.WithBackends(b), actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false))
	if err != nil {
		return nil, err
	}
	defer func() { _ = rt.Close(context.Background()) }()
	src := actors.DeviceSource{Code: tallyCode, Entry: "bench_tally", State: TallyState{}}
	launch := func(i int) (*actors.Kernel[Tally, TallyReply], error) {
		def, err := actors.NewDeviceRingKernel(fmt.Sprintf("bench-tally-%d", i), src, tallyFallback,
			actors.WithCapacity(8), actors.WithOutputCapacity(8), actors.WithOnDeviceCapacity(actors.CapacityError))
		if err != nil {
			return nil, err
		}
		k, err := actors.Launch(ctx, rt, def)
		if err != nil {
			return nil, err
		}
		if err := k.Activate(ctx); err != nil {
			return nil, err
		}
		if k.Placement() == actors.PlacementCPU {
			return nil, errors.New("bench: the device kernel runs on its fallback: no usable device")
		}
		return k, nil
	}
	rtt := func(k *actors.Kernel[Tally, TallyReply]) (int64, error) {
		d := make([]int64, 0, cfg.RTTSamples)
		for range cfg.RTTSamples {
			start := time.Now()
			if _, err := k.Request(ctx, Tally{Add: 1}); err != nil {
				return 0, err
			}
			d = append(d, int64(time.Since(start)))
		}
		slices.Sort(d)
		return d[len(d)/2], nil
	}
	res := &DeviceResult{Kernels: cfg.Kernels}
	ks := make([]*actors.Kernel[Tally, TallyReply], cfg.Kernels)
	if ks[0], err = launch(0); err != nil {
		return nil, err
	}
	log("bench: device round trip, one kernel alone")
	if res.RTTAloneP50, err = rtt(ks[0]); err != nil {
		return nil, err
	}
	log("bench: launching device kernels", "kernels", cfg.Kernels)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var failed atomic.Value
	parallelDo(cfg.Kernels-1, func(i int) {
		k, err := launch(i + 1)
		if err != nil {
			failed.Store(err)
			return
		}
		ks[i+1] = k
	})
	if err, _ := failed.Load().(error); err != nil {
		return nil, err
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	res.HostBytesPerBox = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(cfg.Kernels-1)
	st := b.MailboxStats()
	res.Grids = st.Grids
	if st.Mailboxes > 0 {
		res.PinnedBytesPerBx = float64(st.PinnedBytes) / float64(st.Mailboxes)
	}
	log("bench: device round trip, one kernel among the idle others")
	if res.RTTOneOfManyP50, err = rtt(ks[0]); err != nil {
		return nil, err
	}
	for _, busy := range cfg.Pipelined {
		busy = min(busy, cfg.Kernels)
		log("bench: device pipelined", "busy_kernels", busy)
		rate, err := pipelinedDevice(ctx, ks[:busy], cfg.PerBusyMsgs, cfg.InFlight)
		if err != nil {
			return nil, err
		}
		switch busy {
		case 1:
			res.Pipelined1 = rate
		case 16:
			res.Pipelined16 = rate
		default:
			res.Pipelined1024 = rate
		}
	}
	return res, nil
}

// pipelinedDevice sends total requests spread over ks, each kernel with up
// to inFlight in flight, and returns the aggregate rate.
func pipelinedDevice(ctx context.Context, ks []*actors.Kernel[Tally, TallyReply], total, inFlight int) (float64, error) {
	per := max(1, total/len(ks))
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for _, k := range ks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem := make(chan struct{}, inFlight)
			var inner sync.WaitGroup
			for range per {
				sem <- struct{}{}
				inner.Add(1)
				err := k.RequestAsync(ctx, Tally{Add: 1}, func(_ TallyReply, err error) {
					if err != nil {
						failed.Store(err)
					}
					<-sem
					inner.Done()
				})
				if err != nil {
					failed.Store(err)
					<-sem
					inner.Done()
					break
				}
			}
			inner.Wait()
		}()
	}
	wg.Wait()
	el := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		return 0, err
	}
	return float64(per*len(ks)) / el.Seconds(), nil
}

// parallelDo runs f(i) for i in [0, n) on 32 goroutines.
func parallelDo(n int, f func(i int)) {
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
