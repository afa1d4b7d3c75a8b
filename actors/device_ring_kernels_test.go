package actors

import (
	"github.com/ringactor/ringactor/internal/devkernels"
)

// Two device ring kernels used by the tests, shared with ringactor
// selftest (internal/devkernels): SAXPY on a fixed vector (stateless) and
// a running histogram (stateful), each with its CUDA handler and its Go
// fallback computing the same bytes; and SAXPY that traps on A == 13.

const (
	vecLen    = devkernels.VecLen
	saxpyCUDA = devkernels.SaxpyCUDA
	histCUDA  = devkernels.HistCUDA
	trapCUDA  = devkernels.TrapCUDA
)

type (
	saxpyReq  = devkernels.SaxpyReq
	saxpyResp = devkernels.SaxpyResp
	histReq   = devkernels.HistReq
	histResp  = devkernels.HistResp
	histState = devkernels.HistState
)

// statusErr is a fallback's error for a handler status of kernel id.
func statusErr(id string) devkernels.StatusError {
	return func(s uint32) error { return &DeviceStatusError{Kernel: id, Status: s} }
}

// newSaxpyFallback is the Go fallback of saxpy.
func newSaxpyFallback(id string) func() Handler[saxpyReq, saxpyResp] {
	return func() Handler[saxpyReq, saxpyResp] { return devkernels.Saxpy(statusErr(id)) }
}

// newHistFallback is the Go fallback of histogram: a fresh State at every
// (re)start, as the device's is zeroed.
func newHistFallback(id string) func() Handler[histReq, histResp] {
	return func() Handler[histReq, histResp] { return devkernels.Histogram(statusErr(id)) }
}
