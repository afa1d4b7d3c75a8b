package compute

import (
	"context"
	"fmt"

	"github.com/ringactor/ringactor/gpu"
)

// Pipeline is a sequence of compute kernels: each stage's output is the next
// stage's first input. Intermediate buffers stay where the kernels ran (on a
// device, they are never copied back to the host) and return to the pool
// as soon as the next stage has consumed them.
type Pipeline struct {
	orc    *Orchestrator
	stages []stage
}

type stage struct {
	kernel string
	extra  []*gpu.UnifiedBuffer
	opts   []ExecOption
}

// NewPipeline starts an empty pipeline.
func (orc *Orchestrator) NewPipeline() *Pipeline { return &Pipeline{orc: orc} }

// Then adds a stage: kernel runs on the previous stage's output followed by
// extra inputs (e.g. the bias of an add).
func (p *Pipeline) Then(kernel string, extra []*gpu.UnifiedBuffer, opts ...ExecOption) *Pipeline {
	p.stages = append(p.stages, stage{kernel: kernel, extra: extra, opts: opts})
	return p
}

// Len is the number of stages.
func (p *Pipeline) Len() int { return len(p.stages) }

// Run runs the stages in order on inputs (the first stage's inputs) and
// returns the last stage's output.
func (p *Pipeline) Run(ctx context.Context, inputs ...*gpu.UnifiedBuffer) (*gpu.UnifiedBuffer, error) {
	if len(p.stages) == 0 {
		return nil, &gpu.ArgumentError{Kernel: "pipeline", Arg: "stages", Reason: "no stages", Err: gpu.ErrArgument}
	}
	var prev *gpu.UnifiedBuffer
	var where ExecProfile
	for i, s := range p.stages {
		in := inputs
		if i > 0 {
			in = append([]*gpu.UnifiedBuffer{prev}, s.extra...)
		} else if len(s.extra) > 0 {
			in = append(append([]*gpu.UnifiedBuffer{}, inputs...), s.extra...)
		}
		// Later stages prefer the backend the previous one ran on, so that
		// intermediates stay in its memory.
		opts := append([]ExecOption{preferBackend(where.Backend), Profiled(&where)}, s.opts...)
		out, err := p.orc.Execute(ctx, s.kernel, in, nil, opts...)
		if i > 0 {
			_ = prev.Free() // intermediate: back to the pool
		}
		if err != nil {
			return nil, fmt.Errorf("pipeline stage %d (%s): %w", i, s.kernel, err)
		}
		prev = out
	}
	return prev, nil
}
