package devcore

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// ErrContextClosed is returned by Do after Close (gpu/cuda re-exports it:
// cuda.ErrContextClosed is this error).
var ErrContextClosed = errors.New("cuda: context closed")

// Worker is a goroutine locked to an OS thread that runs submitted
// functions: the device's thread. It is the mechanics of gpu/cuda's
// Context (the thread its primary context is current on) and the whole
// thread of a backend on a simulated device, separate so it can be tested
// without a device.
type Worker struct {
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

// StartWorker starts the thread and runs setup on it. If setup fails the
// thread exits and its error is returned. teardown runs on the thread when
// the worker is closed.
func StartWorker(setup, teardown func() error) (*Worker, error) {
	w := &Worker{
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

func (w *Worker) run(setup, teardown func() error, ready chan<- error) {
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

// Do runs fn on the thread and returns its error (a panic becomes an
// error); called from inside a Do it runs fn inline. After Close it
// returns ErrContextClosed.
func (w *Worker) Do(fn func() error) error {
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

// Poll, called from inside a Do, runs the Do calls other goroutines are
// waiting to make and returns how many; elsewhere it does nothing.
func (w *Worker) Poll() int {
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

// Close stops the thread after the Do calls already running, runs
// teardown there and returns its error; later calls return nil. It must
// not be called from inside Do.
func (w *Worker) Close() error {
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
