//go:build linux && cgo

package actors_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/messages"
)

// SaxpyReq and SaxpyResp are fixed-layout messages (arrays, not slices):
// their C structs, with the same names and fields, are generated for the
// CUDA handler.
type SaxpyReq struct {
	A    float32
	N    uint32
	X, Y [256]float32
}

type SaxpyResp struct {
	N uint32
	Z [256]float32
}

// saxpyCUDA is the device handler: every thread of the block takes every
// threads-th element.
const saxpyCUDA = `
__device__ uint32_t saxpy(const rc_ctx *ctx, const SaxpyReq *req, SaxpyResp *resp, rc_no_state *) {
	if (req->N > 256) {
		return 1; // the requester gets an ExecutionError wrapping DeviceStatusError{Status: 1}
	}
	for (uint32_t i = ctx->thread; i < req->N; i += ctx->threads) {
		resp->Z[i] = req->A * req->X[i] + req->Y[i];
	}
	if (ctx->thread == 0) {
		resp->N = req->N;
	}
	return RC_STATUS_OK;
}
`

// saxpyFallback computes the same bytes in Go (float32(a*x) rounds the
// product, as the device compiled without fma does).
func saxpyFallback() actors.Handler[SaxpyReq, SaxpyResp] {
	return func(_ context.Context, r SaxpyReq) (SaxpyResp, error) {
		var out SaxpyResp
		if r.N > 256 {
			return out, &actors.DeviceStatusError{Kernel: "saxpy", Status: 1}
		}
		for i := range r.N {
			out.Z[i] = float32(r.A*r.X[i]) + r.Y[i]
		}
		out.N = r.N
		return out, nil
	}
}

// A stateless device ring kernel written by the user: SAXPY on a fixed
// vector, as a persistent CUDA loop. This runtime has the simulated device
// (the same generated program, built for the host); on a runtime with a
// GPU it runs there, on one without any device its Go fallback answers.
func ExampleNewDeviceRingKernel() {
	messages.MustRegister[SaxpyReq]("example.saxpy.request")
	messages.MustRegister[SaxpyResp]("example.saxpy.response")
	ctx := context.Background()
	sim := simdevice.NewBackend(64 << 20)
	defer func() {
		if err := sim.Close(); err != nil {
			log.Fatal(err)
		}
	}()
	rt, err := actors.NewRuntime(actors.WithBackends(sim), actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := rt.Close(ctx); err != nil {
			log.Fatal(err)
		}
	}()

	def, err := actors.NewDeviceRingKernel("saxpy", actors.DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, saxpyFallback)
	if err != nil {
		log.Fatal(err)
	}
	k, err := actors.Launch(ctx, rt, def) // compiled and loaded when registered, launched here
	if err != nil {
		log.Fatal(err)
	}
	if err := k.Activate(ctx); err != nil {
		log.Fatal(err)
	}
	req := SaxpyReq{A: 2, N: 4, X: [256]float32{1, 2, 3, 4}, Y: [256]float32{10, 20, 30, 40}}
	r, err := k.Request(ctx, req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(k.Placement(), r.Z[:r.N])
	// Output: cuda:sim [12 24 36 48]
}

// HistReq adds values in [0, 1) to a running histogram; HistState is the
// kernel's State, zeroed at every (re)start; HistResp is the histogram
// after the message.
type HistReq struct {
	N      uint32
	Values [64]float32
}

type HistState struct {
	Total  uint64
	Counts [4]uint32
}

type HistResp HistState

const histCUDA = `
__device__ uint32_t histogram(const rc_ctx *ctx, const HistReq *req, HistResp *resp, HistState *st) {
	if (req->N > 64) {
		return 1;
	}
	// Thread t owns bins t, t+threads, …: no two threads write one counter.
	for (uint32_t b = ctx->thread; b < 4; b += ctx->threads) {
		for (uint32_t i = 0; i < req->N; i++) {
			const float v = req->Values[i];
			const uint32_t bin = v >= 0.0f && v < 1.0f ? (uint32_t)(v * 4.0f) : 3u;
			st->Counts[b] += bin == b;
		}
		resp->Counts[b] = st->Counts[b];
	}
	if (ctx->thread == 0) {
		st->Total += req->N;
		resp->Total = st->Total;
	}
	return RC_STATUS_OK;
}
`

// A stateful device ring kernel: a running histogram whose counters live
// in the kernel's device State between messages.
func ExampleNewDeviceRingKernel_histogram() {
	messages.MustRegister[HistReq]("example.histogram.request")
	messages.MustRegister[HistResp]("example.histogram.response")
	ctx := context.Background()
	sim := simdevice.NewBackend(64 << 20)
	defer func() {
		if err := sim.Close(); err != nil {
			log.Fatal(err)
		}
	}()
	rt, err := actors.NewRuntime(actors.WithBackends(sim), actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := rt.Close(ctx); err != nil {
			log.Fatal(err)
		}
	}()

	fallback := func() actors.Handler[HistReq, HistResp] {
		var st HistState // fresh at every (re)start, like the device State
		return func(_ context.Context, r HistReq) (HistResp, error) {
			if r.N > 64 {
				return HistResp{}, &actors.DeviceStatusError{Kernel: "histogram", Status: 1}
			}
			for _, v := range r.Values[:r.N] {
				bin := 3
				if v >= 0 && v < 1 {
					bin = int(v * 4)
				}
				st.Counts[bin]++
			}
			st.Total += uint64(r.N)
			return HistResp(st), nil
		}
	}
	def, err := actors.NewDeviceRingKernel("histogram",
		actors.DeviceSource{Code: histCUDA, Entry: "histogram", State: HistState{}}, fallback)
	if err != nil {
		log.Fatal(err)
	}
	k, err := actors.Launch(ctx, rt, def)
	if err != nil {
		log.Fatal(err)
	}
	if err := k.Activate(ctx); err != nil {
		log.Fatal(err)
	}
	for _, values := range [][]float32{{0.1, 0.6, 0.7}, {0.3, 0.99}} {
		req := HistReq{N: uint32(len(values))}
		copy(req.Values[:], values)
		r, err := k.Request(ctx, req)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(k.Placement(), r.Total, r.Counts)
	}
	// Output:
	// cuda:sim 3 [1 0 2 0]
	// cuda:sim 5 [1 1 2 1]
}
