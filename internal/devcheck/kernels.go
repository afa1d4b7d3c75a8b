package devcheck

import (
	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/devkernels"
)

// The users' device ring kernels the steps run (internal/devkernels, which
// the actors package's tests share): SAXPY (stateless), a running
// histogram (State on the device) and a SAXPY that traps on A == 13 (a
// device fault).

const (
	saxpyCUDA = devkernels.SaxpyCUDA
	trapCUDA  = devkernels.TrapCUDA
	histCUDA  = devkernels.HistCUDA
)

// statusErr is a fallback's error for a handler status of kernel id.
func statusErr(id string) devkernels.StatusError {
	return func(s uint32) error { return &actors.DeviceStatusError{Kernel: id, Status: s} }
}

// saxpyFallback is SAXPY in Go.
func saxpyFallback(id string) func() actors.Handler[devkernels.SaxpyReq, devkernels.SaxpyResp] {
	return func() actors.Handler[devkernels.SaxpyReq, devkernels.SaxpyResp] {
		return devkernels.Saxpy(statusErr(id))
	}
}

// saxpyDef declares SAXPY as a device ring kernel.
func saxpyDef(id string, opts ...actors.KernelOption) (*actors.KernelDef[devkernels.SaxpyReq, devkernels.SaxpyResp], error) {
	return actors.NewDeviceRingKernel(id, actors.DeviceSource{Code: saxpyCUDA, Entry: "saxpy"}, saxpyFallback(id), opts...)
}

// histFallback is the histogram in Go, with a fresh State at every
// (re)start.
func histFallback(id string) func() actors.Handler[devkernels.HistReq, devkernels.HistResp] {
	return func() actors.Handler[devkernels.HistReq, devkernels.HistResp] {
		return devkernels.Histogram(statusErr(id))
	}
}
