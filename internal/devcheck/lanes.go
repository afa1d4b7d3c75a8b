package devcheck

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/messages"
)

// LaneHop is the device lane bench's message: each kernel of a chain
// adds 1 to Hops.
type LaneHop struct {
	Seq  uint64
	Src  uint32
	Hops uint32
}

const laneHopCode = `
__device__ uint32_t bench_hop(const rc_ctx *ctx, const LaneHop *req, LaneHop *resp, rc_no_state *) {
	if (ctx->thread == 0) {
		*resp = *req;
		resp->Hops = req->Hops + 1;
	}
	return RC_STATUS_OK;
}
`

// LaneConfig sizes the device lane measures.
type LaneConfig struct {
	Chain      int // kernels of the chain
	RTTSamples int // sequential round trips through the chain, per kind of edge
	ChainMsgs  int // pipelined messages through the chain, per kind of edge
	InFlight   int // messages in flight at the head while pipelined
	FanIn      int // upstreams of the fan-in
	FanInMsgs  int // messages per upstream of the fan-in
}

// QuickLanes and FullLanes are the lane measures' configurations.
var (
	QuickLanes = LaneConfig{Chain: 4, RTTSamples: 300, ChainMsgs: 3_000, InFlight: 8, FanIn: 8, FanInMsgs: 10_000}
	FullLanes  = LaneConfig{Chain: 4, RTTSamples: 2_000, ChainMsgs: 20_000, InFlight: 8, FanIn: 8, FanInMsgs: 10_000}
)

// LaneResult is the device lane measures (JSON names are the contract of
// `ringactor bench --json --device=sim`; on device 0 the same measures
// carry the real claim). A hop is one kernel of the
// chain: a round trip's p50 divided by the chain's length, the same for
// both kinds of edge.
type LaneResult struct {
	LaneHopP50               int64   `json:"device_sim_lane_hop_ns"`
	HostRelayHopP50          int64   `json:"device_sim_host_relay_hop_ns"`
	LaneChainRate            float64 `json:"device_sim_lane_chain_msgs_per_s"`
	HostRelayChainRate       float64 `json:"device_sim_host_relay_chain_msgs_per_s"`
	FanInRate                float64 `json:"device_sim_lane_fanin_msgs_per_s"`
	FanInMessages            int     `json:"device_sim_lane_fanin_messages"`
	FanInOutOfOrderOrMissing int     `json:"device_sim_lane_fanin_errors"`
}

// RunLanes measures device lanes on b (a CUDA backend: device 0 or the
// simulated device; `ringactor bench --device` and the selftest's lanes
// step run it): a chain of
// cfg.Chain mailboxes joined by device lanes against the same chain
// relayed by the host (one goroutine that polls each kernel's output ring
// and submits to the next: the best case of a host relay), round trip and
// pipelined, and a fan-in of cfg.FanIn upstreams into one downstream
// (every message once, in order per upstream).
func RunLanes(ctx context.Context, b *cuda.Backend, cfg LaneConfig, log func(msg string, args ...any)) (*LaneResult, error) {
	res := &LaneResult{}
	for _, lanes := range []bool{true, false} {
		src, err := cuda.NewRingProgramSource(cuda.RingProgramSpec{Name: fmt.Sprintf("bench_hop_%v", lanes),
			Code: fmt.Sprintf("// lanes %v\n%s", lanes, laneHopCode), Handler: "bench_hop",
			Req: reflect.TypeFor[LaneHop](), Resp: reflect.TypeFor[LaneHop]()})
		if err != nil {
			return nil, err
		}
		p, err := b.LoadRingProgram(ctx, src)
		if err != nil {
			return nil, err
		}
		log("bench: a chain of device ring kernels", "kernels", cfg.Chain, "device_lanes", lanes)
		ks := make([]*cuda.RingKernel, cfg.Chain)
		for i := range ks {
			if ks[i], err = b.OpenMailbox(p, cuda.RingConfig{Capacity: 16}); err != nil {
				return nil, err
			}
		}
		if lanes {
			for i := 0; i+1 < len(ks); i++ {
				if _, err := b.LinkMailboxes(ks[i], ks[i+1], cuda.RingLaneConfig{Stage: uint32(i + 1)}); err != nil {
					return nil, err
				}
			}
		}
		for _, k := range ks {
			k.Activate()
		}
		ch := &hopChain{ks: ks, lanes: lanes}
		hop, rate, err := ch.measure(ctx, cfg)
		err = errors.Join(err, closeKernels(ks))
		if err != nil {
			return nil, err
		}
		if lanes {
			res.LaneHopP50, res.LaneChainRate = hop, rate
		} else {
			res.HostRelayHopP50, res.HostRelayChainRate = hop, rate
		}
	}
	log("bench: a fan-in of device lanes", "upstreams", cfg.FanIn, "messages", cfg.FanIn*cfg.FanInMsgs)
	if err := fanIn(ctx, b, cfg, res); err != nil {
		return nil, err
	}
	return res, nil
}

func closeKernels(ks []*cuda.RingKernel) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var errs []error
	for _, k := range ks {
		k.Terminate(ring.TerminateDrain)
	}
	for _, k := range ks {
		errs = append(errs, k.Close(ctx))
	}
	return errors.Join(errs...)
}

// hopChain drives a chain: with lanes the host submits to the head and
// polls the tail; without, it relays every reply to the next kernel.
type hopChain struct {
	ks    []*cuda.RingKernel
	lanes bool
	buf   [64]byte
}

// step moves what is ready one round; it returns the tail's replies.
func (c *hopChain) step(got func(LaneHop)) error {
	last := len(c.ks) - 1
	for i, k := range c.ks {
		if c.lanes && i != last {
			continue
		}
		for {
			h, n, ok := k.TryPollInto(c.buf[:])
			if !ok {
				break
			}
			if h.Status != ring.StatusOK {
				return fmt.Errorf("bench: a chain kernel answered status %d", h.Status)
			}
			if i == last {
				m, err := messages.DecodeFixed[LaneHop](c.buf[:n])
				if err != nil {
					return err
				}
				got(m)
				continue
			}
			for {
				ok, err := c.ks[i+1].TrySubmit(1, h.CorrelationID, c.buf[:n])
				if err != nil {
					return err
				}
				if ok {
					break
				}
			}
		}
	}
	return nil
}

// measure returns the chain's per-hop round-trip p50 and its pipelined rate.
func (c *hopChain) measure(ctx context.Context, cfg LaneConfig) (int64, float64, error) {
	d := make([]int64, 0, cfg.RTTSamples)
	var seq uint64
	for range cfg.RTTSamples {
		start := time.Now()
		m := LaneHop{Seq: seq}
		if ok, err := c.ks[0].TrySubmit(1, seq, messages.FixedBytes(&m)); !ok || err != nil {
			return 0, 0, errors.Join(err, errors.New("bench: the chain's head refused a message"))
		}
		seq++
		done := false
		for !done {
			if err := ctx.Err(); err != nil {
				return 0, 0, err
			}
			if err := c.step(func(r LaneHop) { done = r.Hops == uint32(len(c.ks)) }); err != nil {
				return 0, 0, err
			}
		}
		d = append(d, int64(time.Since(start)))
	}
	slices.Sort(d)
	hop := d[len(d)/2] / int64(len(c.ks))
	start := time.Now()
	sent, got := 0, 0
	for got < cfg.ChainMsgs {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		for sent < cfg.ChainMsgs && sent-got < cfg.InFlight {
			m := LaneHop{Seq: seq}
			ok, err := c.ks[0].TrySubmit(1, seq, messages.FixedBytes(&m))
			if err != nil {
				return 0, 0, err
			}
			if !ok {
				break
			}
			seq++
			sent++
		}
		if err := c.step(func(LaneHop) { got++ }); err != nil {
			return 0, 0, err
		}
	}
	return hop, float64(cfg.ChainMsgs) / time.Since(start).Seconds(), nil
}

// fanIn runs cfg.FanIn upstreams into one downstream and checks each
// message arrives once, in order per upstream.
func fanIn(ctx context.Context, b *cuda.Backend, cfg LaneConfig, res *LaneResult) error {
	src, err := cuda.NewRingProgramSource(cuda.RingProgramSpec{Name: "bench_hop_fanin", Code: "// fan-in\n" + laneHopCode,
		Handler: "bench_hop", Req: reflect.TypeFor[LaneHop](), Resp: reflect.TypeFor[LaneHop]()})
	if err != nil {
		return err
	}
	p, err := b.LoadRingProgram(ctx, src)
	if err != nil {
		return err
	}
	ks := make([]*cuda.RingKernel, cfg.FanIn+1)
	for i := range ks {
		if ks[i], err = b.OpenMailbox(p, cuda.RingConfig{Capacity: 16}); err != nil {
			return err
		}
	}
	down := ks[cfg.FanIn]
	for _, u := range ks[:cfg.FanIn] {
		if _, err := b.LinkMailboxes(u, down, cuda.RingLaneConfig{Stage: 1}); err != nil {
			return errors.Join(err, closeKernels(ks))
		}
	}
	for _, k := range ks {
		k.Activate()
	}
	next := make([]uint64, cfg.FanIn)
	sent := make([]int, cfg.FanIn)
	total := cfg.FanIn * cfg.FanInMsgs
	var buf [64]byte
	start := time.Now()
	got := 0
	for got < total {
		if err := ctx.Err(); err != nil {
			return errors.Join(err, closeKernels(ks))
		}
		for s, u := range ks[:cfg.FanIn] {
			for sent[s] < cfg.FanInMsgs {
				m := LaneHop{Seq: uint64(sent[s]), Src: uint32(s)}
				ok, err := u.TrySubmit(1, uint64(s)<<32|uint64(sent[s]), messages.FixedBytes(&m))
				if err != nil {
					return errors.Join(err, closeKernels(ks))
				}
				if !ok {
					break
				}
				sent[s]++
			}
		}
		for {
			h, n, ok := down.TryPollInto(buf[:])
			if !ok {
				break
			}
			got++
			m, err := messages.DecodeFixed[LaneHop](buf[:n])
			if err != nil || h.Status != ring.StatusOK || int(m.Src) >= cfg.FanIn || m.Seq != next[m.Src] || m.Hops != 2 {
				res.FanInOutOfOrderOrMissing++
				continue
			}
			next[m.Src]++
		}
	}
	res.FanInRate = float64(total) / time.Since(start).Seconds()
	res.FanInMessages = got
	return closeKernels(ks)
}
