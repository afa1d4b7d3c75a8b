package sensor

import (
	"context"
	"fmt"
	"math"
	"strconv"

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

// overflowReason is why a row whose value v scales to the infinite res
// (v·scale + offset beyond float64's range) is rejected, or "" when res is
// finite: an overflowing result is a bad row, as an overflowing input is.
func overflowReason(v, scale, offset, res float64) string {
	if !math.IsInf(res, 0) {
		return ""
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return fmt.Sprintf("value %s × scale %s + offset %s overflows float64 (%s)", f(v), f(scale), f(offset), f(res))
}

// rejectOverflow turns the reading r, whose value v scaled to r.V, into a
// rejected row (RejectOverflow, V back to v) when r.V is infinite. It
// reports whether it did.
func rejectOverflow(r *Reading, v float64) bool {
	if !math.IsInf(r.V, 0) {
		return false
	}
	*r = Reading{TS: math.MinInt64, V: v, Line: r.Line, Sensor: r.Sensor, Reject: RejectOverflow}
	return true
}

// rejectedLine is the rejects writer's last line: "rejected N rows" ("1
// row"), or nothing when no row was rejected.
func rejectedLine(n int64) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "rejected 1 row\n"
	}
	return fmt.Sprintf("rejected %d rows\n", n)
}
