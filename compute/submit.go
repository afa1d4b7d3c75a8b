package compute

import (
	"context"
	"sync"

	"github.com/ringactor/ringactor/gpu"
)

// JobState is where a submitted execution stands.
type JobState uint8

// Job states.
const (
	JobPending JobState = iota
	JobCompleted
	JobFailed
)

// String names the state.
func (s JobState) String() string { return [...]string{"pending", "completed", "failed"}[s] }

// Job is a submitted execution: poll it, or wait for it.
type Job struct {
	done   chan struct{}
	cancel context.CancelFunc
	once   sync.Once
	out    *gpu.UnifiedBuffer
	err    error
}

// Submit starts an execution in the background and returns its job. The
// job runs under ctx; Cancel cancels it.
func (orc *Orchestrator) Submit(ctx context.Context, kernel string, inputs []*gpu.UnifiedBuffer, outShape gpu.Shape, opts ...ExecOption) *Job {
	ctx, cancel := context.WithCancel(ctx)
	j := &Job{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer cancel()
		j.out, j.err = orc.Execute(ctx, kernel, inputs, outShape, opts...)
		close(j.done)
	}()
	return j
}

// Poll reports the job's state without waiting.
func (j *Job) Poll() JobState {
	select {
	case <-j.done:
		if j.err != nil {
			return JobFailed
		}
		return JobCompleted
	default:
		return JobPending
	}
}

// Wait waits for the job's result, or for ctx to end (the job goes on).
func (j *Job) Wait(ctx context.Context) (*gpu.UnifiedBuffer, error) {
	select {
	case <-j.done:
		return j.out, j.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Done is closed when the job has finished.
func (j *Job) Done() <-chan struct{} { return j.done }

// Cancel cancels the job's execution; it then fails with context.Canceled
// unless it had finished.
func (j *Job) Cancel() { j.once.Do(j.cancel) }
