package sensor

import (
	"context"
	"fmt"
	"sync"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/stream"
)

// deviceScaleHeld bounds how many readings the device scale stage holds
// before it sends them to the device (it also sends at the end of every
// packet, before a watermark passes and at drain).
const deviceScaleHeld = 4 * ScaleBlockRows

// DeviceScaleStage returns a ScaleStage whose arithmetic runs on dev, the
// device scale kernel (NewDeviceScaleKernel, launched and activated): the
// stage collects the readings of a packet, sends their values to dev in
// ScaleBlocks (pipelined), writes the scaled values back and emits the
// readings in order. Rejected rows pass through untouched. The output is
// the same as DefaultScaleStage's, bit for bit. A failure of the device
// kernel fails the packet's flush, which ends a RunGraph run.
func DeviceScaleStage(dev *actors.Kernel[ScaleBlock, ScaleBlock]) ScaleStage {
	return func(g *stream.Graph, cfg Config) *stream.Stage[Reading, Reading] {
		scale, offset := cfg.Scale, cfg.Offset
		return stream.NewStage(g, "scale", func() stream.Funcs[Reading, Reading] {
			var held []Reading
			send := func(c *stream.Context, out *stream.Emitter[Reading]) error {
				if len(held) == 0 {
					return nil
				}
				if err := scaleReadingsOnDevice(c.Context(), dev, held, scale, offset); err != nil {
					return err
				}
				for _, r := range held {
					out.Emit(r)
				}
				clear(held)
				held = held[:0]
				return nil
			}
			return stream.Funcs[Reading, Reading]{
				Element: func(c *stream.Context, r Reading, out *stream.Emitter[Reading]) error {
					held = append(held, r)
					if len(held) >= deviceScaleHeld {
						return send(c, out)
					}
					return nil
				},
				Flush:     send,
				Watermark: func(c *stream.Context, _ int64, out *stream.Emitter[Reading]) error { return send(c, out) },
				Drain:     send,
			}
		})
	}
}

// scaleReadingsOnDevice scales the accepted readings of rs in place on dev,
// ScaleBlockRows values a request, every block in flight at once.
func scaleReadingsOnDevice(ctx context.Context, dev *actors.Kernel[ScaleBlock, ScaleBlock], rs []Reading, scale, offset float64) error {
	idx := make([]int, 0, len(rs))
	for i := range rs {
		if rs[i].Reject == 0 {
			idx = append(idx, i)
		}
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		ferr error
	)
	for lo := 0; lo < len(idx); lo += ScaleBlockRows {
		part := idx[lo:min(lo+ScaleBlockRows, len(idx))]
		blk := ScaleBlock{N: uint32(len(part)), Scale: scale, Offset: offset}
		for j, i := range part {
			blk.V[j] = rs[i].V
		}
		wg.Add(1)
		err := dev.RequestAsync(ctx, blk, func(out ScaleBlock, err error) {
			defer wg.Done()
			if err == nil && int(out.N) != len(part) {
				err = fmt.Errorf("device scale answered %d values for %d", out.N, len(part))
			}
			if err != nil {
				mu.Lock()
				ferr = err
				mu.Unlock()
				return
			}
			for j, i := range part {
				rs[i].V = out.V[j]
				rejectOverflow(&rs[i], blk.V[j])
			}
		})
		if err != nil {
			wg.Done()
			wg.Wait()
			return fmt.Errorf("sensor: device scale: %w", err)
		}
	}
	wg.Wait()
	if ferr != nil {
		return fmt.Errorf("sensor: device scale: %w", ferr)
	}
	return nil
}
