package ringrt

import (
	"errors"
	"fmt"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// The device's budget (devcore.Budget) holds every persistent launch of
// the runtime: a program grid claims its blocks when it starts and gives
// them back when it closes; a ring of its own (Launch) claims its one
// block likewise. A launch that does not fit is refused before any driver
// call, so that no persistent block ever waits for residency behind the
// others (on a GPU it would wait forever, and every one-shot kernel after
// it).

// shape is the budget's shape of a persistent launch of fn (inside Do).
func (rt *Runtime) shape(fn driverapi.Function, blocks, threads int, smem uint32) devcore.Shape {
	regs, static := rt.d.FuncResources(fn)
	return devcore.Shape{Blocks: blocks, Threads: threads, Registers: regs, SharedMem: int(smem) + static}
}

// claim holds the persistent launch s named name in the device's budget
// (nil when the device keeps none), or returns the capacity error.
func (rt *Runtime) claim(name string, s devcore.Shape) (*devcore.Claim, error) {
	if rt.d.Budget == nil {
		return nil, nil
	}
	c, err := rt.d.Budget.Claim(name, s)
	if err != nil {
		return nil, rt.capacityErr(err)
	}
	return c, nil
}

// capacityErr wraps a budget refusal as the backend's capacity error.
func (rt *Runtime) capacityErr(err error) error {
	var be *devcore.BudgetError
	if !errors.As(err, &be) {
		return err
	}
	return &gpu.DeviceError{Kind: gpu.DeviceCapacity, Backend: rt.opt.Name, Device: rt.d.Ordinal,
		Reason: "refused by the device's budget", Err: err}
}

// gridShape sizes p's grid of blocks of threads (inside Do): the grid
// blocks a test or WithGridBlocks set, else one block per SM of the
// device's budget (more blocks per SM would only multiply what the grid
// holds of every SM), at most what the budget has room for and, on a
// GPU, what an empty SM holds (cuOccupancyMaxActiveBlocksPerMultiprocessor).
// A grid not one block of which fits is the budget's capacity error.
func (rt *Runtime) gridShape(name string, fn driverapi.Function, threads int, smem uint32) (devcore.Shape, error) {
	d := rt.d
	sms := d.Attrs.SMs
	if d.Budget != nil {
		if lim, _ := d.Budget.Limits(); lim.SMs > 0 {
			sms = lim.SMs
		}
	}
	s := rt.shape(fn, max(1, sms), threads, smem)
	if o, ok := d.API.(occupancyAPI); ok {
		if n, err := o.OccupancyMaxActiveBlocksPerMultiprocessor(fn, threads, smem); err == nil && n == 0 {
			return s, &gpu.DeviceError{Kind: gpu.DeviceCapacity, Backend: rt.opt.Name, Device: d.Ordinal,
				Reason: fmt.Sprintf("%s: a block of %d threads with %d B of shared memory does not fit an SM", name, threads, smem)}
		}
	}
	if rt.opt.GridBlocks > 0 {
		s.Blocks = rt.opt.GridBlocks
		return s, nil // claimed whole or refused
	}
	if d.Budget == nil {
		return s, nil
	}
	n, err := d.Budget.Fit(name, s)
	if err != nil {
		return s, rt.capacityErr(err)
	}
	s.Blocks = n
	return s, nil
}
