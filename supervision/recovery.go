package supervision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ringactor/ringactor/gpu"
)

// Action is what the orchestrator does after a failed execution.
type Action uint8

// Recovery actions.
const (
	// Fail returns the error: bad arguments, a compilation error, a kernel
	// that failed on its data — trying again gives the same result.
	Fail Action = iota
	// Retry runs the same work on the same backend after a backoff: the
	// error said it was transient.
	Retry
	// Fallback runs the work on the CPU: the device failed or is gone.
	Fallback
	// Split halves the batch and runs each half: the device ran out of memory.
	Split
)

// String names the action.
func (a Action) String() string {
	if names := [...]string{"fail", "retry", "fallback", "split"}; int(a) < len(names) {
		return names[a]
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// Recovery is the orchestrator's recovery policy.
type Recovery struct {
	// Enabled turns recovery on; off, every error is returned as it is.
	Enabled bool
	// Retries is how many times transient errors are retried (default 3).
	Retries int
	// Backoff spaces the retries.
	Backoff Backoff
	// Fallback runs work on the CPU when a device fails.
	Fallback bool
	// SplitOnOOM halves batches that do not fit in device memory.
	SplitOnOOM bool
}

// DefaultRecovery retries transient errors 3 times (1, 2, 4 ms), falls back
// to the CPU on device failures and splits batches on out-of-memory.
func DefaultRecovery() Recovery {
	return Recovery{
		Enabled: true, Retries: 3, Fallback: true, SplitOnOOM: true,
		Backoff: Backoff{Initial: time.Millisecond, Max: 100 * time.Millisecond, Multiplier: 2},
	}
}

// Classify picks the action for err on a device backend (onDevice) after
// attempt retries of the same work.
func (r Recovery) Classify(err error, onDevice bool, attempt int) Action {
	if !r.Enabled || err == nil {
		return Fail
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return Fail
	case errors.Is(err, gpu.ErrCompilation), errors.Is(err, gpu.ErrArgument), errors.Is(err, gpu.ErrExecution):
		return Fail
	case gpu.IsTransient(err):
		if attempt < r.Retries {
			return Retry
		}
		if onDevice && r.Fallback {
			return Fallback
		}
		return Fail
	case errors.Is(err, gpu.ErrOutOfMemory):
		if r.SplitOnOOM {
			return Split
		}
		if onDevice && r.Fallback {
			return Fallback
		}
		return Fail
	case errors.Is(err, gpu.ErrDevice):
		if onDevice && r.Fallback {
			return Fallback
		}
	}
	return Fail
}

// Wait sleeps the backoff before retry attempt n (n ≥ 1), or returns the
// context's error if it ends first.
func (r Recovery) Wait(ctx context.Context, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(r.Backoff.Delay(n))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
