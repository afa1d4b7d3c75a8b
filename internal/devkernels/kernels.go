// Package devkernels holds the device ring kernels of the device
// scenarios, written once for ringactor selftest (internal/devcheck) and
// for the actors package's tests: SAXPY (stateless), a running histogram
// (State on the device) and a SAXPY that traps on A == 13 (a device
// fault). Each has its message types, its CUDA handler and its Go
// computation of the same bytes. It imports nothing of the actor runtime
// (actors' own tests use it), so a fallback reports a handler's status
// through the error constructor its caller passes (actors.DeviceStatusError).
package devkernels

import (
	"context"

	"github.com/ringactor/ringactor/messages"
)

func init() {
	messages.MustRegister[SaxpyReq]("ringactor.devkernels.saxpy.request")
	messages.MustRegister[SaxpyResp]("ringactor.devkernels.saxpy.response")
	messages.MustRegister[HistReq]("ringactor.devkernels.histogram.request")
	messages.MustRegister[HistResp]("ringactor.devkernels.histogram.response")
}

// StatusError makes a fallback's error for a handler status other than
// RC_STATUS_OK (the device path answers actors.DeviceStatusError).
type StatusError func(status uint32) error

// VecLen is the length of SAXPY's vectors.
const VecLen = 256

// SaxpyReq is SAXPY's request: Z = A·X + Y over the first N elements.
type SaxpyReq struct {
	A float32
	N uint32
	X [VecLen]float32
	Y [VecLen]float32
}

// SaxpyResp is SAXPY's reply.
type SaxpyResp struct {
	N uint32
	Z [VecLen]float32
}

// SaxpyCUDA is SAXPY's device handler (entry "saxpy"); N > 256 answers
// status 1.
const SaxpyCUDA = `
__device__ uint32_t saxpy(const rc_ctx *ctx, const SaxpyReq *req, SaxpyResp *resp, rc_no_state *) {
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

// TrapCUDA is SAXPY that traps (a device fault, sticky for the context on
// a GPU) on A == 13 (entry "trapper"; it includes SaxpyCUDA).
const TrapCUDA = SaxpyCUDA + `
__device__ uint32_t trapper(const rc_ctx *ctx, const SaxpyReq *req, SaxpyResp *resp, rc_no_state *st) {
	if (req->A == 13.0f) {
		__trap();
		return 99;
	}
	return saxpy(ctx, req, resp, st);
}
`

// Saxpy is SAXPY's Go fallback (also TrapCUDA's, but for the trap):
// float32(a*x) rounds the product, as the device (compiled with
// --fmad=false) does.
func Saxpy(statusErr StatusError) func(context.Context, SaxpyReq) (SaxpyResp, error) {
	return func(_ context.Context, r SaxpyReq) (SaxpyResp, error) {
		var out SaxpyResp
		if r.N > VecLen {
			return out, statusErr(1)
		}
		for i := range r.N {
			out.Z[i] = float32(r.A*r.X[i]) + r.Y[i]
		}
		out.N = r.N
		return out, nil
	}
}

// HistBins is the histogram's bin count.
const HistBins = 16

// HistReq is the histogram's request: N values in [0, 1) (others go to
// the first or last bin).
type HistReq struct {
	N      uint32
	Values [64]float32
}

// HistResp is the running histogram after the request.
type HistResp struct {
	Total  uint64
	Counts [HistBins]uint32
}

// HistState is the histogram's State on the device, zeroed at every
// (re)start.
type HistState struct {
	Total  uint64
	Counts [HistBins]uint32
}

// HistCUDA is the histogram's device handler (entry "histogram"); each
// thread owns its bins (no atomics); N > 64 answers status 2.
const HistCUDA = `
__device__ int hist_bin(float v) {
	if (!(v >= 0.0f)) {
		return 0;
	}
	if (v >= 1.0f) {
		return 15;
	}
	return (int)(v * 16.0f);
}

__device__ uint32_t histogram(const rc_ctx *ctx, const HistReq *req, HistResp *resp, HistState *st) {
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

// HistBin is the bin of v, as hist_bin computes it.
func HistBin(v float32) int {
	switch {
	case !(v >= 0):
		return 0
	case v >= 1:
		return HistBins - 1
	}
	return int(v * HistBins)
}

// Histogram is the histogram's Go fallback with a fresh State (call it
// at every (re)start, as the device's State is zeroed).
func Histogram(statusErr StatusError) func(context.Context, HistReq) (HistResp, error) {
	var st HistState
	return func(_ context.Context, r HistReq) (HistResp, error) {
		if r.N > 64 {
			return HistResp{}, statusErr(2)
		}
		for i := range r.N {
			st.Counts[HistBin(r.Values[i])]++
		}
		st.Total += uint64(r.N)
		return HistResp(st), nil
	}
}
