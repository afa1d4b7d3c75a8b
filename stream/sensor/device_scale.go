package sensor

import (
	"context"
	"fmt"
	"sync"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/messages"
)

// ScaleBlockRows is how many values one ScaleBlock carries.
const ScaleBlockRows = 1024

// ScaleBlock is the device scale kernel's message and reply: a fixed-layout
// block of values (the batch's Row values, in order) and their count, with
// the scale parameters. A Batch's values go through the device in blocks
// of ScaleBlockRows.
type ScaleBlock struct {
	N      uint32
	_      uint32
	Scale  float64
	Offset float64
	V      [ScaleBlockRows]float64
}

func init() {
	messages.MustRegister[ScaleBlock]("ringactor.stream.sensor.ScaleBlock")
}

// scaleCUDA is the scale stage's device handler: v·scale + offset, each
// step rounded (NVRTC compiles with --fmad=false), as scaled computes.
const scaleCUDA = `
__device__ uint32_t scale_block(const rc_ctx *ctx, const ScaleBlock *in, ScaleBlock *out, rc_no_state *) {
	const uint32_t n = in->N;
	if (n > 1024) {
		return 1;
	}
	for (uint32_t i = ctx->thread; i < n; i += ctx->threads) {
		out->V[i] = in->V[i] * in->Scale + in->Offset;
	}
	if (ctx->thread == 0) {
		out->N = n;
		out->Scale = in->Scale;
		out->Offset = in->Offset;
	}
	return RC_STATUS_OK;
}
`

// scaleBlockFallback is the device scale kernel's Go fallback.
func scaleBlockFallback() actors.Handler[ScaleBlock, ScaleBlock] {
	return func(_ context.Context, in ScaleBlock) (ScaleBlock, error) {
		if in.N > ScaleBlockRows {
			return ScaleBlock{}, &actors.DeviceStatusError{Kernel: "scale", Status: 1}
		}
		out := ScaleBlock{N: in.N, Scale: in.Scale, Offset: in.Offset}
		for i := range in.N {
			out.V[i] = scaled(in.V[i], in.Scale, in.Offset)
		}
		return out, nil
	}
}

// NewDeviceScaleKernel declares the scale stage's device ring kernel: on a
// runtime with a usable CUDA backend (or the simulated device) it runs as a
// persistent device loop, elsewhere as its Go fallback, with the same
// bits either way.
func NewDeviceScaleKernel(id string, opts ...actors.KernelOption) (*actors.KernelDef[ScaleBlock, ScaleBlock], error) {
	return actors.NewDeviceRingKernel(id, actors.DeviceSource{Code: scaleCUDA, Entry: "scale_block"}, scaleBlockFallback, opts...)
}

// launchDeviceScale launches and activates the device scale kernel.
func launchDeviceScale(ctx context.Context, rt *actors.Runtime, id string) (*actors.Kernel[ScaleBlock, ScaleBlock], error) {
	def, err := NewDeviceScaleKernel(id)
	if err != nil {
		return nil, fmt.Errorf("sensor: declare %s: %w", id, err)
	}
	return launch(ctx, rt, def)
}

// newDeviceScaleHandler is the scale stage's handler with the arithmetic on
// the device kernel dev: it sends the batch's values in blocks, pipelined,
// and writes the scaled values back into the rows, in place. The
// result is the same as newScaleHandler's.
func newDeviceScaleHandler(cfg Config, dev *actors.Kernel[ScaleBlock, ScaleBlock]) actors.Handler[*Batch, *Batch] {
	scale, offset := cfg.Scale, cfg.Offset
	return func(ctx context.Context, b *Batch) (*Batch, error) {
		rows := b.Rows
		blocks := (len(rows) + ScaleBlockRows - 1) / ScaleBlockRows
		if blocks == 0 {
			return b, nil
		}
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			ferr error
		)
		for i := range blocks {
			lo, hi := i*ScaleBlockRows, min((i+1)*ScaleBlockRows, len(rows))
			blk := ScaleBlock{N: uint32(hi - lo), Scale: scale, Offset: offset}
			for j := lo; j < hi; j++ {
				blk.V[j-lo] = rows[j].V
			}
			wg.Add(1)
			err := dev.RequestAsync(ctx, blk, func(out ScaleBlock, err error) {
				defer wg.Done()
				if err == nil && int(out.N) != hi-lo {
					err = fmt.Errorf("sensor: device scale answered %d values for %d", out.N, hi-lo)
				}
				if err != nil {
					mu.Lock()
					ferr = err
					mu.Unlock()
					return
				}
				for j := lo; j < hi; j++ {
					rows[j].V = out.V[j-lo]
				}
			})
			if err != nil {
				wg.Done()
				wg.Wait()
				return nil, fmt.Errorf("sensor: device scale: %w", err)
			}
		}
		wg.Wait()
		if ferr != nil {
			return nil, fmt.Errorf("sensor: device scale: %w", ferr)
		}
		return b, nil
	}
}
