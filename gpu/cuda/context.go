package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Context is a device's primary context bound to one OS thread. It owns a
// goroutine locked to that thread, with the context current on it, and runs
// every function passed to [Context.Do] there, so driver calls that act on
// the current context (modules, streams, memory, launches) always see it.
//
// Each Do is one hand-off to that goroutine and back, which costs an OS
// thread wake-up each way (about 20-40 µs measured on a 2-vCPU VM, see
// BenchmarkWorkerDo), so hot paths batch their driver calls into one Do
// rather than one Do per call. A Do issued from inside a Do runs inline on
// the same thread, with no hand-off. A component that owns the device (a
// ring kernel's polling loop) runs its whole loop inside one Do and calls
// [Context.Poll] from it, so that Do calls of other goroutines are still
// served between its iterations.
type Context struct {
	w       *worker
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
	w, err := startWorker(setup, teardown)
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
func (c *Context) Do(fn func() error) error { return c.w.do(fn) }

// Poll runs the Do calls of other goroutines that are waiting, without
// blocking, and returns how many ran. It must be called from inside a Do (a
// long-running loop on the context's thread); elsewhere it returns 0 and
// runs nothing.
func (c *Context) Poll() int { return c.w.poll() }

// Close stops the thread after the Do calls already running, unbinds and
// releases the primary context, and returns the error of that. It does not
// synchronise outstanding work; do that in a Do first. Further calls return
// nil. Close must not be called from inside Do.
func (c *Context) Close() error { return c.w.close() }

// worker is a goroutine locked to an OS thread that runs submitted
// functions. It is the mechanics of Context, separate so it can be tested
// without a device.
type worker struct {
	reqs chan request
	quit chan struct{}
	done chan struct{}
	tid  int // OS thread id of the worker, for inline nested Do; 0 if unknown

	closeOnce sync.Once
	closeErr  error
}

type request struct {
	fn    func() error
	reply chan error
}

var replyPool = sync.Pool{New: func() any { return make(chan error, 1) }}

// startWorker starts the thread and runs setup on it. If setup fails the
// thread exits and its error is returned. teardown runs on the thread when
// the worker is closed.
func startWorker(setup, teardown func() error) (*worker, error) {
	w := &worker{
		reqs: make(chan request),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	ready := make(chan error, 1)
	go w.run(setup, teardown, ready)
	if err := <-ready; err != nil {
		<-w.done
		return nil, err
	}
	return w, nil
}

func (w *worker) run(setup, teardown func() error, ready chan<- error) {
	// The thread is never unlocked: when this goroutine returns, the
	// runtime terminates the thread with whatever driver state it holds.
	runtime.LockOSThread()
	defer close(w.done)
	w.tid = gettid()
	if setup != nil {
		if err := call(setup); err != nil {
			ready <- err
			return
		}
	}
	ready <- nil
	for {
		select {
		case r := <-w.reqs:
			r.reply <- call(r.fn)
		case <-w.quit:
			if teardown != nil {
				w.closeErr = call(teardown)
			}
			return
		}
	}
}

func (w *worker) do(fn func() error) error {
	if fn == nil {
		return errors.New("cuda: Context.Do with a nil function")
	}
	if w.tid != 0 && gettid() == w.tid {
		// Only the worker goroutine runs on its locked thread: this is a
		// Do from inside a Do.
		return call(fn)
	}
	reply := replyPool.Get().(chan error)
	select {
	case w.reqs <- request{fn: fn, reply: reply}:
	case <-w.quit:
		replyPool.Put(reply)
		return ErrContextClosed
	}
	err := <-reply
	replyPool.Put(reply)
	return err
}

func (w *worker) poll() int {
	if w.tid == 0 || gettid() != w.tid {
		return 0
	}
	n := 0
	for {
		select {
		case r := <-w.reqs:
			r.reply <- call(r.fn)
			n++
		default:
			return n
		}
	}
}

func (w *worker) close() error {
	if w.tid != 0 && gettid() == w.tid {
		return errors.New("cuda: Context.Close called from inside Do")
	}
	first := false
	w.closeOnce.Do(func() {
		first = true
		close(w.quit)
	})
	<-w.done
	if first {
		return w.closeErr
	}
	return nil
}

// call runs fn, turning a panic into an error.
func call(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cuda: function run on the context thread panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return fn()
}
