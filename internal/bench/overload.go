package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/messages"
)

// Kinds of the overload benchmark (OverloadConfig.Kind).
const (
	// OverloadCPU is a cluster.NewKind kind whose handler works
	// OverloadConfig.Work per request (a sleep, or a spin with Spin).
	OverloadCPU = "cpu"
	// OverloadStateful is the same handler as a cluster.NewStatefulKind
	// kind: a running total per identity.
	OverloadStateful = "stateful"
	// OverloadDevice is a cluster.NewDeviceKind kind on the backend of
	// OverloadConfig.Backend (the simulated device in the command's
	// --kind=device): its CUDA handler loops DeviceIters times per
	// request.
	OverloadDevice = "device"
)

// OverloadReq and OverloadResp are the messages of the overload
// benchmark's kinds (C structs of the device kind's handler too).
type OverloadReq struct {
	Add   uint32
	Iters uint32
}

// OverloadResp is the reply: the identity's running total (the CPU kind
// answers Add).
type OverloadResp struct{ Total uint64 }

// overloadState is the device kind's State and the stateful kind's.
type overloadState struct{ Total uint64 }

func init() {
	messages.MustRegister[OverloadReq]("ringactor.bench.OverloadReq")
	messages.MustRegister[OverloadResp]("ringactor.bench.OverloadResp")
}

// overloadCUDA is the device kind's handler: thread 0 adds req->Add to the
// State after a loop of req->Iters steps (its cost).
const overloadCUDA = `
__device__ uint32_t overload(const rc_ctx *ctx, const OverloadReq *req, OverloadResp *resp, overloadState *st) {
	if (ctx->thread == 0) {
		uint64_t acc = 0;
		for (uint32_t i = 0; i < req->Iters; i++) {
			acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
		}
		st->Total += req->Add + (acc == 42 ? 1 : 0);
		resp->Total = st->Total;
	}
	return RC_STATUS_OK;
}
`

// OverloadConfig sizes the overload benchmark: a closed-loop run measures
// the capacity of Identities identities of one kind, then an open-loop
// run offers Factor times that for Overload, then a closed-loop run
// measures how soon the member serves at its capacity again.
type OverloadConfig struct {
	Kind        string        // OverloadCPU, OverloadStateful or OverloadDevice
	Identities  int           // identities the requests spread over
	Capacity    int           // ring capacity of each identity's kernel (actors.WithCapacity)
	Work        time.Duration // CPU and stateful kinds: the handler's work per request
	Spin        bool          // the work is a busy loop (CPU time) rather than a sleep
	DeviceIters uint32        // device kind: the handler's loop steps per request
	// Backend is the device kind's backend (the simulated device's in
	// the command); nil for the CPU kinds.
	Backend       gpu.Backend
	InFlight      int           // requesters per identity of the closed-loop runs
	Measure       time.Duration // closed-loop run that measures the capacity
	Overload      time.Duration // open-loop run at Factor × the capacity
	Factor        float64       // offered rate over the capacity
	Deadline      time.Duration // each request's deadline
	Margin        time.Duration // how late after its deadline an outcome may come
	RecoveryLimit time.Duration // how long the recovery run may take at most
	// Progress, if set, is told what the run does.
	Progress func(msg string, args ...any)
}

// DefaultOverload is the configuration of `ringactor bench overload`.
var DefaultOverload = OverloadConfig{
	Kind: OverloadCPU, Identities: 4, Capacity: 128, Work: time.Millisecond, DeviceIters: 20000,
	InFlight: 8, Measure: 5 * time.Second, Overload: time.Minute, Factor: 2,
	Deadline: 5 * time.Second, Margin: time.Second, RecoveryLimit: 30 * time.Second,
}

// OverloadResult is what the overload benchmark measures.
type OverloadResult struct {
	Kind        string  `json:"kind"`
	Identities  int     `json:"identities"`
	RingCap     int     `json:"ring_capacity"`
	CapacityPS  float64 `json:"capacity_per_s"` // closed loop, requests answered per second
	OfferedPS   float64 `json:"offered_per_s"`  // open loop, requests sent per second
	DurationS   float64 `json:"overload_s"`
	Sent        int64   `json:"sent"`
	Accepted    int64   `json:"accepted"` // answered with a reply
	AcceptedPS  float64 `json:"accepted_per_s"`
	Refused     int64   `json:"refused_overloaded"` // cluster.ErrOverloaded
	TimedOut    int64   `json:"timed_out"`          // cluster.ErrTimeout
	Unavailable int64   `json:"unavailable"`        // cluster.ErrMemberUnavailable
	Other       int64   `json:"other_errors"`       // anything else (none expected)
	// OtherSample is one of the other errors, if any.
	OtherSample string `json:"other_error_sample,omitempty"`
	// Late counts outcomes that came more than Margin after their
	// deadline; Missing requests with no outcome when the run ended.
	Late    int64 `json:"late"`
	Missing int64 `json:"missing"`
	// MaxWaitMS is the longest any request waited for its outcome.
	MaxWaitMS float64 `json:"max_wait_ms"`
	// Accepted requests' latencies, from their sending to their reply.
	AcceptedP50MS float64 `json:"accepted_p50_ms"`
	AcceptedP99MS float64 `json:"accepted_p99_ms"`
	// P99BoundMS is the documented bound of an accepted request's wait:
	// each identity holds at most 3 × its ring capacity + one batch of 64
	// requests, served at capacity/identities per second, plus Margin.
	P99BoundMS float64 `json:"accepted_p99_bound_ms"`
	// RefusalP99MS is the 99th percentile of a refusal's wait.
	RefusalP99MS float64 `json:"refused_p99_ms"`
	// Requests sent and without an outcome yet, at most at any time of
	// the open-loop run (sampled).
	MaxInFlight int64 `json:"max_in_flight"`
	// InFlightBound is what the members' bounds allow in flight: the
	// identities' holdings (3 × capacity + 64 each) and the refusals
	// and replies in transit at the offered rate over Margin.
	InFlightBound int64 `json:"in_flight_bound"`
	// Memory of this process (both members and the load): Go heap in
	// use before the overload and at most during it (sampled), resident
	// memory before and at most during it (VmRSS sampled; VmHWM is the
	// process's peak since it started).
	HeapBeforeMB   float64 `json:"heap_inuse_before_mb"`
	HeapPeakMB     float64 `json:"heap_inuse_peak_mb"`
	RSSBeforeMB    float64 `json:"rss_before_mb"`
	RSSPeakMB      float64 `json:"rss_peak_mb"`
	VmHWMMB        float64 `json:"vm_hwm_mb"`
	RecoveryS      float64 `json:"recovery_s"` // from the overload's end to a window at ≥ 90% of the capacity
	Recovered      bool    `json:"recovered"`
	RecoveredPS    float64 `json:"recovered_per_s"` // the rate of that window
	AfterwardsOK   bool    `json:"afterwards_ok"`   // a request to every identity answered after the recovery run
	GoMaxProcs     int     `json:"gomaxprocs"`
	LoadAvg        string  `json:"loadavg,omitempty"` // /proc/loadavg at the start
	MemberInThisOS string  `json:"member"`            // where the hosting member runs
}

// RunOverload starts a member hosting the configured kind and a member
// hosting nothing, both in this process (joined over loopback, so every
// request crosses the network path), and runs the overload benchmark
// from the second against the first.
func RunOverload(ctx context.Context, cfg OverloadConfig) (OverloadResult, error) {
	res := OverloadResult{Kind: cfg.Kind, Identities: cfg.Identities, RingCap: cfg.Capacity, GoMaxProcs: runtime.GOMAXPROCS(0),
		MemberInThisOS: "in this process, joined over loopback by a second member that sends the load"}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		res.LoadAvg = strings.TrimSpace(string(b))
	}
	if cfg.Identities < 1 || cfg.InFlight < 1 || cfg.Factor <= 0 || cfg.Deadline <= 0 || cfg.Measure <= 0 || cfg.Overload <= 0 {
		return res, fmt.Errorf("bench: overload: identities, in-flight, factor, deadline and durations must be positive")
	}
	kind, ropts, err := overloadKind(cfg)
	if err != nil {
		return res, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	name := fmt.Sprintf("ringactor-overload-%d", os.Getpid())
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	host, err := cluster.Start(sctx, name, cluster.Peers(nil), []*cluster.Kind{kind.Kind()},
		cluster.WithLogger(actors.DiscardLogger()), cluster.WithRuntimeOptions(ropts...))
	if err != nil {
		return res, fmt.Errorf("bench: overload: hosting member: %w", err)
	}
	closeAll := []*cluster.Member{host}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		for _, m := range slices.Backward(closeAll) {
			_ = m.Close(cctx)
		}
	}()
	client, err := cluster.Start(sctx, name, cluster.Peers([]string{host.Address()}), nil, cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		return res, fmt.Errorf("bench: overload: requesting member: %w", err)
	}
	closeAll = append(closeAll, client)
	for _, m := range closeAll {
		if err := m.WaitMembers(sctx, 2); err != nil {
			return res, fmt.Errorf("bench: overload: %w", err)
		}
	}
	ids := make([]string, cfg.Identities)
	for i := range ids {
		ids[i] = fmt.Sprintf("id-%d", i)
	}
	msg := OverloadReq{Add: 1, Iters: cfg.DeviceIters}
	call := func(ctx context.Context, id string) error {
		ctx, cancel := context.WithTimeout(ctx, cfg.Deadline)
		defer cancel()
		_, err := kind.Ref(client, id).Request(ctx, msg)
		return err
	}
	for _, id := range ids { // activation and connections
		if err := call(ctx, id); err != nil {
			return res, fmt.Errorf("bench: overload: warm-up: %w", err)
		}
	}
	progress("overload: measuring the capacity (closed loop)", "kind", cfg.Kind, "identities", cfg.Identities,
		"in_flight", cfg.Identities*cfg.InFlight, "for", cfg.Measure)
	answered, elapsed, _ := closedLoop(ctx, cfg, ids, call, cfg.Measure, 0)
	if answered == 0 {
		return res, errors.New("bench: overload: the closed-loop run answered nothing")
	}
	res.CapacityPS = float64(answered) / elapsed.Seconds()
	perID := res.CapacityPS / float64(cfg.Identities)
	held := float64(3*cfg.Capacity + 64)
	res.P99BoundMS = (held/perID + cfg.Margin.Seconds()) * 1e3
	rate := res.CapacityPS * cfg.Factor
	res.InFlightBound = int64(held*float64(cfg.Identities) + rate*cfg.Margin.Seconds())
	runtime.GC()
	res.HeapBeforeMB = heapInuseMB()
	res.RSSBeforeMB, _ = procStatusMB("VmRSS")
	progress("overload: offering open loop", "capacity_per_s", int(res.CapacityPS), "offered_per_s", int(rate), "for", cfg.Overload)
	if err := openLoop(ctx, cfg, ids, call, rate, &res); err != nil {
		return res, err
	}
	progress("overload: measuring the recovery (closed loop)")
	res.RecoveryS, res.RecoveredPS, res.Recovered = recovery(ctx, cfg, ids, call, res.CapacityPS)
	res.AfterwardsOK = true
	for _, id := range ids {
		if err := call(ctx, id); err != nil {
			res.AfterwardsOK = false
		}
	}
	res.VmHWMMB, _ = procStatusMB("VmHWM")
	return res, ctx.Err()
}

// overloadKind declares the configured kind and the runtime options of
// the member that hosts it.
func overloadKind(cfg OverloadConfig) (*cluster.KindOf[OverloadReq, OverloadResp], []actors.Option, error) {
	opts := []actors.KernelOption{actors.WithCapacity(cfg.Capacity)}
	work := func() {
		switch {
		case cfg.Work <= 0:
		case cfg.Spin:
			for start := time.Now(); time.Since(start) < cfg.Work; {
			}
		default:
			time.Sleep(cfg.Work)
		}
	}
	switch cfg.Kind {
	case OverloadCPU:
		return cluster.Define("bench-overload-cpu", func() actors.Handler[OverloadReq, OverloadResp] {
			return func(_ context.Context, r OverloadReq) (OverloadResp, error) {
				work()
				return OverloadResp{Total: uint64(r.Add)}, nil
			}
		}, opts...), nil, nil
	case OverloadStateful:
		return cluster.DefineStateful("bench-overload-stateful", func(_ string, state []byte) (cluster.Stateful[OverloadReq, OverloadResp], error) {
			s := &overloadStateful{work: work}
			if len(state) == 8 {
				s.total = binary.LittleEndian.Uint64(state)
			}
			return s, nil
		}, opts...), nil, nil
	case OverloadDevice:
		if cfg.Backend == nil {
			return nil, nil, errors.New("bench: overload: the device kind needs a backend")
		}
		k, err := cluster.DefineDevice("bench-overload-device", actors.DeviceSource{Code: overloadCUDA, Entry: "overload", State: overloadState{}},
			func() actors.Handler[OverloadReq, OverloadResp] {
				var total uint64
				return func(_ context.Context, r OverloadReq) (OverloadResp, error) {
					total += uint64(r.Add)
					return OverloadResp{Total: total}, nil
				}
			}, opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("bench: overload: %w", err)
		}
		return k, []actors.Option{actors.WithBackends(cfg.Backend)}, nil
	}
	return nil, nil, fmt.Errorf("bench: overload: unknown kind %q (want %s, %s or %s)", cfg.Kind, OverloadCPU, OverloadStateful, OverloadDevice)
}

// overloadStateful is the stateful kind's handler: a running total, handed
// over as 8 little-endian bytes.
type overloadStateful struct {
	work  func()
	total uint64
}

// Handle implements cluster.Stateful.
func (s *overloadStateful) Handle(_ context.Context, r OverloadReq) (OverloadResp, error) {
	s.work()
	s.total += uint64(r.Add)
	return OverloadResp{Total: s.total}, nil
}

// Passivate implements cluster.Stateful.
func (s *overloadStateful) Passivate() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, s.total), nil
}

// closedLoop runs InFlight requesters per identity for d (or until stop
// answers have come, when stop > 0) and returns how many requests were
// answered and how long it ran. A requester whose request is refused or
// fails pauses a millisecond before the next (a refused request is not
// retried at once).
func closedLoop(ctx context.Context, cfg OverloadConfig, ids []string, call func(context.Context, string) error, d time.Duration, stop int64) (int64, time.Duration, int64) {
	var ok, failed atomic.Int64
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for _, id := range ids {
		for range cfg.InFlight {
			wg.Go(func() {
				for lctx.Err() == nil {
					if err := call(lctx, id); err != nil {
						if lctx.Err() != nil {
							return
						}
						failed.Add(1)
						t := time.NewTimer(time.Millisecond)
						select {
						case <-t.C:
						case <-lctx.Done():
							t.Stop()
						}
						continue
					}
					if ok.Add(1) == stop {
						cancel()
					}
				}
			})
		}
	}
	<-lctx.Done()
	elapsed := time.Since(start)
	wg.Wait()
	return ok.Load(), elapsed, failed.Load()
}

// openLoop sends requests at rate per second for cfg.Overload, each in a
// goroutine of its own whatever the outcomes of the others, waits for
// every outcome and fills res's counts.
func openLoop(ctx context.Context, cfg OverloadConfig, ids []string, call func(context.Context, string) error, rate float64, res *OverloadResult) error {
	var (
		mu        sync.Mutex
		accepted  []time.Duration
		refusals  []time.Duration
		maxWait   time.Duration
		sent      atomic.Int64
		outcomes  atomic.Int64
		refused   atomic.Int64
		timedOut  atomic.Int64
		unavail   atomic.Int64
		other     atomic.Int64
		late      atomic.Int64
		otherText atomic.Value
		wg        sync.WaitGroup
	)
	lateAfter := cfg.Deadline + cfg.Margin
	// The sampler: heap, RSS and requests in flight.
	sampleDone := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-sampleDone:
				return
			case <-t.C:
			}
			if n := sent.Load() - outcomes.Load(); n > res.MaxInFlight {
				res.MaxInFlight = n
			}
			res.HeapPeakMB = max(res.HeapPeakMB, heapInuseMB())
			if rss, err := procStatusMB("VmRSS"); err == nil {
				res.RSSPeakMB = max(res.RSSPeakMB, rss)
			}
		}
	}()
	interval := time.Duration(float64(time.Second) / rate)
	start := time.Now()
	end := start.Add(cfg.Overload)
	tick := time.NewTicker(max(interval, time.Millisecond))
	defer tick.Stop()
	var issued int64
	for now := start; now.Before(end) && ctx.Err() == nil; now = <-tick.C {
		due := int64(now.Sub(start).Seconds() * rate)
		for ; issued < due; issued++ {
			id := ids[issued%int64(len(ids))]
			sent.Add(1)
			wg.Go(func() {
				t0 := time.Now()
				err := call(ctx, id)
				wait := time.Since(t0)
				outcomes.Add(1)
				if wait > lateAfter {
					late.Add(1)
				}
				switch {
				case err == nil:
					mu.Lock()
					accepted = append(accepted, wait)
					maxWait = max(maxWait, wait)
					mu.Unlock()
					return
				case errors.Is(err, cluster.ErrOverloaded):
					refused.Add(1)
					mu.Lock()
					refusals = append(refusals, wait)
					maxWait = max(maxWait, wait)
					mu.Unlock()
					return
				case errors.Is(err, cluster.ErrTimeout):
					timedOut.Add(1)
				case errors.Is(err, cluster.ErrMemberUnavailable):
					unavail.Add(1)
				default:
					other.Add(1)
					otherText.CompareAndSwap(nil, err.Error())
				}
				mu.Lock()
				maxWait = max(maxWait, wait)
				mu.Unlock()
			})
		}
	}
	overload := time.Since(start)
	wg.Wait()
	close(sampleDone)
	<-sampled
	res.DurationS = overload.Seconds()
	res.Sent = sent.Load()
	res.OfferedPS = float64(res.Sent) / overload.Seconds()
	res.Accepted = int64(len(accepted))
	res.AcceptedPS = float64(res.Accepted) / overload.Seconds()
	res.Refused, res.TimedOut, res.Unavailable, res.Other = refused.Load(), timedOut.Load(), unavail.Load(), other.Load()
	if s, ok := otherText.Load().(string); ok {
		res.OtherSample = s
	}
	res.Late = late.Load()
	res.Missing = res.Sent - outcomes.Load()
	res.MaxWaitMS = ms(maxWait)
	if len(accepted) > 0 {
		res.AcceptedP50MS, res.AcceptedP99MS = ms(time.Duration(percentile(accepted, 50))), ms(time.Duration(percentile(accepted, 99)))
	}
	if len(refusals) > 0 {
		res.RefusalP99MS = ms(time.Duration(percentile(refusals, 99)))
	}
	return ctx.Err()
}

// recovery runs the closed loop in windows of 250 ms from the end of the
// overload until one answers at 90% of capacity (per second) or more, and
// returns when that window ended, its rate and whether one did within
// cfg.RecoveryLimit.
func recovery(ctx context.Context, cfg OverloadConfig, ids []string, call func(context.Context, string) error, capacity float64) (float64, float64, bool) {
	const window = 250 * time.Millisecond
	start := time.Now()
	var best float64
	for time.Since(start) < cfg.RecoveryLimit && ctx.Err() == nil {
		n, elapsed, _ := closedLoop(ctx, cfg, ids, call, window, 0)
		r := float64(n) / elapsed.Seconds()
		best = max(best, r)
		if r >= 0.9*capacity {
			return time.Since(start).Seconds(), r, true
		}
	}
	return time.Since(start).Seconds(), best, false
}

// heapInuseMB returns the Go heap in use, in MiB.
func heapInuseMB() float64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapInuse) / (1 << 20)
}

// procStatusMB returns the field (VmRSS, VmHWM) of /proc/self/status in
// MiB.
func procStatusMB(field string) (float64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			return 0, err
		}
		return kb / 1024, nil
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// ms converts d to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / 1e6 }
