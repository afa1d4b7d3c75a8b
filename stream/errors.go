package stream

import (
	"errors"
	"fmt"
)

// Errors of the graph API; each is matched with errors.Is.
var (
	// ErrCycle: an edge would close a cycle (a build-time error of Connect
	// and Start).
	ErrCycle = errors.New("stream: the edge closes a cycle")
	// ErrForeignNode: an edge joins nodes of two different graphs.
	ErrForeignNode = errors.New("stream: the node belongs to another graph")
	// ErrInvalidGraph: a declaration is unusable (an empty or duplicate
	// name, a nil function, a parallelism below 1, an unconnected inlet, a
	// stage factory that panics or returns Funcs without Element).
	ErrInvalidGraph = errors.New("stream: invalid graph")
	// ErrStarted: the graph has started; it can no longer be changed or
	// started again.
	ErrStarted = errors.New("stream: the graph has already started")
	// ErrNotStarted: the graph has not started (or failed to start).
	ErrNotStarted = errors.New("stream: the graph has not started")
	// ErrClosed: the source (or the graph) is drained or stopped and takes
	// no more elements.
	ErrClosed = errors.New("stream: closed")
	// ErrStopped: the graph was stopped while the element was in flight.
	ErrStopped = errors.New("stream: the graph was stopped")
	// ErrPanic: a stage function panicked on the element (or, at Start, a
	// stage's factory or launch panicked).
	ErrPanic = errors.New("stream: the stage panicked")
)

// StageError is the outcome of an element that failed in a stage: the
// stage's function returned an error or panicked on it, or the element's
// packet could not be handled. It is what a graph's error handler receives.
type StageError struct {
	Stage    string // the stage's name
	Instance int    // which parallel instance
	Elements int    // how many elements the error stands for (1 unless a whole packet failed)
	Panic    any    // the panic value, when the function panicked
	Err      error
}

// Error describes the failure.
func (e *StageError) Error() string {
	if e.Elements > 1 {
		return fmt.Sprintf("stream: stage %q[%d]: %d elements: %v", e.Stage, e.Instance, e.Elements, e.Err)
	}
	return fmt.Sprintf("stream: stage %q[%d]: %v", e.Stage, e.Instance, e.Err)
}

// Unwrap returns the cause.
func (e *StageError) Unwrap() error { return e.Err }
