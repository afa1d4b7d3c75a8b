package cuda

import (
	"errors"

	"github.com/ringactor/ringactor/gpu/cuda/internal/devcore"
)

// Context is a device's primary context bound to one OS thread. It owns a
// goroutine locked to that thread, with the context current on it, and runs
// every function passed to [Context.Do] there, so driver calls that act on
// the current context (modules, streams, memory, launches) always see it.
//
// Each Do is one hand-off to that goroutine and back, which costs an OS
// thread wake-up each way (about 20-40 µs measured on a 2-vCPU VM, see
// BenchmarkWorkerDo in gpu/cuda/internal/devcore, whose Worker is the
// thread), so hot paths batch their driver calls into one Do
// rather than one Do per call. A Do issued from inside a Do runs inline on
// the same thread, with no hand-off. A component that owns the device (a
// ring kernel's polling loop) runs its whole loop inside one Do and calls
// [Context.Poll] from it, so that Do calls of other goroutines are still
// served between its iterations.
type Context struct {
	w       *devcore.Worker
	drv     *Driver
	dev     Device
	ordinal int
	handle  CtxHandle
}

// NewContext loads the driver (as [Load] does), starts the context's
// thread, and retains and makes current device ordinal's primary context
// on it. Errors are *gpu.DeviceError: DeviceUnavailable without a driver or
// device, otherwise of the driver error's kind.
func NewContext(ordinal int) (*Context, error) { return processLoader().newContext(ordinal) }

func (l *loader) newContext(ordinal int) (*Context, error) {
	drv, err := l.initialized()
	if err != nil {
		return nil, err
	}
	c := &Context{drv: drv, ordinal: ordinal}
	setup := func() error {
		dev, err := drv.DeviceGet(ordinal)
		if err != nil {
			return err
		}
		h, err := drv.DevicePrimaryCtxRetain(dev)
		if err != nil {
			return err
		}
		if err := drv.CtxSetCurrent(h); err != nil {
			_ = drv.DevicePrimaryCtxRelease(dev)
			return err
		}
		c.dev, c.handle = dev, h
		return nil
	}
	teardown := func() error {
		err := drv.CtxSetCurrent(CtxHandle{})
		return errors.Join(err, drv.DevicePrimaryCtxRelease(c.dev))
	}
	w, err := devcore.StartWorker(setup, teardown)
	if err != nil {
		var de *DriverError
		if errors.As(err, &de) {
			return nil, de.DeviceError(ordinal)
		}
		return nil, err
	}
	c.w = w
	return c, nil
}

// Driver returns the loaded driver, for calls inside Do.
func (c *Context) Driver() *Driver { return c.drv }

// Device returns the device handle.
func (c *Context) Device() Device { return c.dev }

// Ordinal returns the device ordinal the context was created for.
func (c *Context) Ordinal() int { return c.ordinal }

// Handle returns the primary context handle.
func (c *Context) Handle() CtxHandle { return c.handle }

// Do runs fn on the context's OS thread and returns its error. A panic in
// fn is recovered and returned as an error. After Close, Do returns
// [ErrContextClosed] without running fn. fn must not block on other Do
// calls of the same Context made from other goroutines.
func (c *Context) Do(fn func() error) error { return c.w.Do(fn) }

// Poll runs the Do calls of other goroutines that are waiting, without
// blocking, and returns how many ran. It must be called from inside a Do (a
// long-running loop on the context's thread); elsewhere it returns 0 and
// runs nothing.
func (c *Context) Poll() int { return c.w.Poll() }

// Close stops the thread after the Do calls already running, unbinds and
// releases the primary context, and returns the error of that. It does not
// synchronise outstanding work; do that in a Do first. Further calls return
// nil. Close must not be called from inside Do.
func (c *Context) Close() error { return c.w.Close() }
