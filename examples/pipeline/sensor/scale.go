package sensor

import (
	"context"

	"github.com/ringactor/ringactor/actors"
)

// newScaleHandler is the scale kernel's handler: v' = v·scale + offset for
// every row, in place. It keeps no state.
func newScaleHandler(cfg Config) actors.Handler[*Batch, *Batch] {
	scale, offset := cfg.Scale, cfg.Offset
	return func(_ context.Context, b *Batch) (*Batch, error) {
		rows := b.Rows
		for i := range rows {
			rows[i].V = scaled(rows[i].V, scale, offset)
		}
		return b, nil
	}
}

// scaled is v·scale + offset, rounded after the product and after the sum
// (the conversion forbids fusing them into one multiply-add), so that every
// platform computes the same bits.
func scaled(v, scale, offset float64) float64 {
	return float64(v*scale) + offset
}
