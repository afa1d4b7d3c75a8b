package supervision

import (
	"errors"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/gpu"
)

// Directive is what a supervisor does with a failure; it is Proto.Actor's own
// directive type so deciders written for Proto.Actor work unchanged.
type Directive = actor.Directive

// The directives, re-exported for convenience.
const (
	Resume   = actor.ResumeDirective   // keep the kernel running; the failed message already has its error
	Restart  = actor.RestartDirective  // restart the kernel actor (fresh kernel-local state), after a backoff
	Stop     = actor.StopDirective     // stop the kernel; queued messages are rejected with an error
	Escalate = actor.EscalateDirective // let the orchestrator's own supervisor decide
)

// Decider maps a failure reason to a directive. The reason is usually a
// *gpu.ExecutionError (a handler failed on one message) or a *gpu.DeviceError.
type Decider func(reason any) Directive

// DefaultDecider restarts a kernel whose handler panicked, stops one whose
// device is gone, and resumes after an error a handler returned: returning an
// error is the handler's way of failing one message cleanly, and that message
// already carries its ExecutionError to the sender.
func DefaultDecider(reason any) Directive {
	err, _ := reason.(error)
	var ee *gpu.ExecutionError
	switch {
	case errors.As(err, &ee) && ee.Panic != nil:
		return Restart
	case errors.Is(err, gpu.ErrDeviceNotAvailable):
		return Stop
	case errors.As(err, &ee):
		return Resume
	}
	return Restart
}

// RestartOnError is a decider that restarts on every failure, panics and
// returned errors alike.
func RestartOnError(any) Directive { return Restart }
