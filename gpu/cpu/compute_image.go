package cpu

import (
	"context"
	"math"
	"sync"
)

// blurScratch recycles GaussianBlur's float64 work buffers.
var blurScratch = sync.Pool{New: func() any { return new([]float64) }}

// GaussianBlur blurs the image src (h rows × w columns × c interleaved
// channels, row-major; c = 1 for a plain h×w image) into dst with a
// separable Gaussian kernel of the given radius: weights
// exp(-t²/(2σ²)) for t in [-radius, radius], normalised to sum 1. Borders
// are clamped (the edge pixel is replicated). Channels are blurred
// independently. Intermediate values are float64; integer types round the
// result half away from zero and saturate to T's range (so uint8 stays in
// 0..255).
//
// It needs h, w ≥ 0, c ≥ 1, len(src) == len(dst) == h*w*c, radius ≥ 0 and a
// finite sigma > 0 (also when radius is 0); a violation returns an error
// wrapping ErrKernelArgs. Radius 0 copies src to dst. dst may alias src: the
// whole intermediate image is kept in a pooled float64 buffer. Rows run in
// parallel; a cancelled ctx returns ctx.Err() and may leave dst partly
// written.
func GaussianBlur[T Number](ctx context.Context, dst, src []T, h, w, c int, radius int, sigma float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if h < 0 || w < 0 || c < 1 {
		return argErr("GaussianBlur", "bad shape h=%d w=%d c=%d", h, w, c)
	}
	wc, ok1 := mulDims(w, c)
	size, ok2 := mulDims(h, wc)
	if !ok1 || !ok2 || len(src) != size || len(dst) != size {
		return argErr("GaussianBlur", "shape %d×%d×%d needs %d elements, got len(src)=%d len(dst)=%d", h, w, c, size, len(src), len(dst))
	}
	if radius < 0 {
		return argErr("GaussianBlur", "radius %d < 0", radius)
	}
	if !(sigma > 0) || math.IsInf(sigma, 1) {
		return argErr("GaussianBlur", "sigma %v must be finite and > 0", sigma)
	}
	if radius > math.MaxInt32 {
		return argErr("GaussianBlur", "radius %d too large", radius)
	}
	if size == 0 {
		return nil
	}
	if radius == 0 {
		copy(dst, src)
		return nil
	}

	nw := 2*radius + 1
	bufp := blurScratch.Get().(*[]float64)
	defer blurScratch.Put(bufp)
	if cap(*bufp) < nw+size {
		*bufp = make([]float64, nw+size)
	}
	buf := (*bufp)[:nw+size]
	weights, tmp := buf[:nw:nw], buf[nw:]
	gaussWeights(weights, radius, sigma)

	// Vertical pass src → tmp, accumulating whole rows (contiguous).
	rowWork := max(1, wc*nw)
	grain := max(1, 64*1024/rowWork)
	err := ParallelFor(ctx, h, grain, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			acc := tmp[y*wc : (y+1)*wc]
			for t, wt := range weights {
				yy := min(max(y+t-radius, 0), h-1)
				srow := src[yy*wc : yy*wc+len(acc)]
				if t == 0 {
					for i := range acc {
						acc[i] = wt * float64(srow[i])
					}
				} else {
					for i := range acc {
						acc[i] += wt * float64(srow[i])
					}
				}
			}
		}
	})
	if err != nil {
		return err
	}

	// Horizontal pass tmp → dst, converting to T.
	cv := newConverter[T]()
	return ParallelFor(ctx, h, grain, func(lo, hi int) {
		for y := lo; y < hi; y++ {
			trow := tmp[y*wc : (y+1)*wc]
			drow := dst[y*wc : (y+1)*wc]
			for x := range w {
				x0 := x - radius
				if x0 >= 0 && x+radius < w {
					seg := trow[x0*c : (x+radius+1)*c]
					for ch := range c {
						var s float64
						for t, wt := range weights {
							s += wt * seg[t*c+ch]
						}
						drow[x*c+ch] = cv.conv(s)
					}
					continue
				}
				for ch := range c {
					var s float64
					for t, wt := range weights {
						xx := min(max(x0+t, 0), w-1)
						s += wt * trow[xx*c+ch]
					}
					drow[x*c+ch] = cv.conv(s)
				}
			}
		}
	})
}

// gaussWeights fills weights (length 2*radius+1) with the normalised
// Gaussian exp(-t²/(2σ²)), t = -radius..radius, exactly symmetric.
func gaussWeights(weights []float64, radius int, sigma float64) {
	inv := -1 / (2 * sigma * sigma)
	var sum float64
	for t := -radius; t <= radius; t++ {
		v := math.Exp(float64(t) * float64(t) * inv)
		weights[t+radius] = v
		sum += v
	}
	for i := range weights {
		weights[i] /= sum
	}
}

// converter turns float64 results into T: a plain conversion for floats,
// round half away from zero and saturation for integers.
type converter[T Number] struct {
	float      bool
	lo, hi     float64 // T's range as float64 (hi may round up, e.g. 2^63)
	minT, maxT T
}

func newConverter[T Number]() converter[T] {
	k, _ := kindOf[T]()
	if k == kindFloat {
		return converter[T]{float: true}
	}
	minT, maxT := intRange[T]()
	return converter[T]{lo: float64(minT), hi: float64(maxT), minT: minT, maxT: maxT}
}

func (cv *converter[T]) conv(s float64) T {
	if cv.float {
		return T(s)
	}
	r := math.Round(s)
	switch {
	case r >= cv.hi:
		return cv.maxT
	case r <= cv.lo:
		return cv.minT
	case r != r: // NaN cannot come from integer input; keep it defined
		return 0
	}
	return T(r)
}
