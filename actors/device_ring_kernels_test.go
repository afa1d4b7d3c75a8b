package actors

import (
	"context"

	"github.com/ringactor/ringactor/messages"
)

func init() {
	messages.MustRegister[saxpyReq]("test.device.saxpy.request")
	messages.MustRegister[saxpyResp]("test.device.saxpy.response")
	messages.MustRegister[histReq]("test.device.histogram.request")
	messages.MustRegister[histResp]("test.device.histogram.response")
}

// Two device ring kernels used by the tests: SAXPY on a fixed vector
// (stateless) and a running histogram (stateful), each with its CUDA
// handler and its Go fallback computing the same bytes.

const vecLen = 256

type saxpyReq struct {
	A float32
	N uint32
	X [vecLen]float32
	Y [vecLen]float32
}

type saxpyResp struct {
	N uint32
	Z [vecLen]float32
}

const saxpyCUDA = `
__device__ uint32_t saxpy(const rc_ctx *ctx, const saxpyReq *req, saxpyResp *resp, rc_no_state *) {
	if (req->N > 256) {
		return 1;
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

// newSaxpyFallback is the Go fallback of saxpy; float32(a*x) rounds the
// product as the device (no fma) does.
func newSaxpyFallback(id string) func() Handler[saxpyReq, saxpyResp] {
	return func() Handler[saxpyReq, saxpyResp] {
		return func(_ context.Context, r saxpyReq) (saxpyResp, error) {
			var out saxpyResp
			if r.N > vecLen {
				return out, &DeviceStatusError{Kernel: id, Status: 1}
			}
			for i := range r.N {
				out.Z[i] = float32(r.A*r.X[i]) + r.Y[i]
			}
			out.N = r.N
			return out, nil
		}
	}
}

const histBins = 16

type histReq struct {
	N      uint32
	Values [64]float32 // in [0, 1); others go to the first or last bin
}

type histResp struct {
	Total  uint64
	Counts [histBins]uint32
}

type histState struct {
	Total  uint64
	Counts [histBins]uint32
}

// histCUDA gives each thread its own bins (no atomics): thread t counts
// the values of bins t, t+threads, … and adds them to the state.
const histCUDA = `
__device__ int hist_bin(float v) {
	if (!(v >= 0.0f)) {
		return 0;
	}
	if (v >= 1.0f) {
		return 15;
	}
	return (int)(v * 16.0f);
}

__device__ uint32_t histogram(const rc_ctx *ctx, const histReq *req, histResp *resp, histState *st) {
	if (req->N > 64) {
		return 2;
	}
	for (uint32_t b = ctx->thread; b < 16; b += ctx->threads) {
		uint32_t c = 0;
		for (uint32_t i = 0; i < req->N; i++) {
			c += hist_bin(req->Values[i]) == (int)b;
		}
		st->Counts[b] += c;
		resp->Counts[b] = st->Counts[b];
	}
	if (ctx->thread == 0) {
		st->Total += req->N;
		resp->Total = st->Total;
	}
	return RC_STATUS_OK;
}
`

func histBin(v float32) int {
	switch {
	case !(v >= 0):
		return 0
	case v >= 1:
		return histBins - 1
	}
	return int(v * histBins)
}

// newHistFallback is the Go fallback of histogram: the state lives in the
// closure, fresh at every (re)start as the device's is zeroed.
func newHistFallback(id string) func() Handler[histReq, histResp] {
	return func() Handler[histReq, histResp] {
		var st histState
		return func(_ context.Context, r histReq) (histResp, error) {
			if r.N > 64 {
				return histResp{}, &DeviceStatusError{Kernel: id, Status: 2}
			}
			for i := range r.N {
				st.Counts[histBin(r.Values[i])]++
			}
			st.Total += uint64(r.N)
			return histResp(st), nil
		}
	}
}
