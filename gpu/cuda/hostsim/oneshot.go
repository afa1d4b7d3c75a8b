//go:build linux && cgo

package hostsim

/*
#include "hostsim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Elementwise ops of [Elementwise].
const (
	OpAdd       = C.RC_HS_ADD
	OpSub       = C.RC_HS_SUB
	OpMul       = C.RC_HS_MUL
	OpScale     = C.RC_HS_SCALE
	OpReLU      = C.RC_HS_RELU
	OpLeakyReLU = C.RC_HS_LEAKY_RELU
)

// Reduce ops of [Reduce].
const (
	OpSum = C.RC_HS_SUM
	OpMin = C.RC_HS_MIN
	OpMax = C.RC_HS_MAX
)

// Launch1D is a 1-D launch shape.
type Launch1D struct{ Grid, Block int }

var errLaunch = errors.New("hostsim: unknown op or bad launch shape")

func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// Elementwise runs rc_<op>_f32 or rc_<op>_f64 of kernels/oneshot.cu:
// out = a op b (add, sub, mul) or op(a, p) (scale, relu, leaky relu; b
// unused). All slices have the same length.
func Elementwise[T float32 | float64](op int, out, a, b []T, p T, l Launch1D) error {
	n := len(out)
	if len(a) != n || (op <= OpMul && len(b) != n) {
		return fmt.Errorf("hostsim: length mismatch")
	}
	if n == 0 {
		return nil
	}
	var rc C.int
	switch any(p).(type) {
	case float32:
		rc = C.rc_hs_elementwise_f32(C.int(op), (*C.float)(ptr(a)), (*C.float)(ptr(b)), (*C.float)(ptr(out)),
			C.float(p), C.uint64_t(n), C.uint(l.Grid), C.uint(l.Block))
	case float64:
		rc = C.rc_hs_elementwise_f64(C.int(op), (*C.double)(ptr(a)), (*C.double)(ptr(b)), (*C.double)(ptr(out)),
			C.double(p), C.uint64_t(n), C.uint(l.Grid), C.uint(l.Block))
	}
	if rc != 0 {
		return errLaunch
	}
	return nil
}

// Reduce runs the two-pass rc_<op>_<t>_partial kernels: l.Grid blocks of
// l.Block threads (a power of two up to 256), then one block.
func Reduce[T float32 | float64](op int, a []T, l Launch1D) (float64, error) {
	if len(a) == 0 && op != OpSum {
		return 0, fmt.Errorf("hostsim: empty input")
	}
	var res C.double
	var rc C.int
	var zero T
	switch any(zero).(type) {
	case float32:
		rc = C.rc_hs_reduce_f32(C.int(op), (*C.float)(ptr(a)), C.uint64_t(len(a)), C.uint(l.Grid), C.uint(l.Block), &res)
	case float64:
		rc = C.rc_hs_reduce_f64(C.int(op), (*C.double)(ptr(a)), C.uint64_t(len(a)), C.uint(l.Grid), C.uint(l.Block), &res)
	}
	if rc != 0 {
		return 0, errLaunch
	}
	return float64(res), nil
}

// MatMul runs rc_matmul_<t> (16×16 tiles): c[m×n] = a[m×k]·b[k×n].
func MatMul[T float32 | float64](c, a, b []T, m, k, n int) error {
	if len(a) != m*k || len(b) != k*n || len(c) != m*n {
		return fmt.Errorf("hostsim: shape mismatch")
	}
	if m*n == 0 {
		return nil
	}
	var zero T
	switch any(zero).(type) {
	case float32:
		C.rc_hs_matmul_f32((*C.float)(ptr(a)), (*C.float)(ptr(b)), (*C.float)(ptr(c)), C.int(m), C.int(k), C.int(n))
	case float64:
		C.rc_hs_matmul_f64((*C.double)(ptr(a)), (*C.double)(ptr(b)), (*C.double)(ptr(c)), C.int(m), C.int(k), C.int(n))
	}
	return nil
}

// GaussianWeights returns the 2*radius+1 normalised taps exp(-t²/(2σ²)).
func GaussianWeights(radius int, sigma float64) []float64 {
	w := make([]float64, 2*radius+1)
	var sum float64
	for t := -radius; t <= radius; t++ {
		v := math.Exp(-float64(t*t) / (2 * sigma * sigma))
		w[t+radius] = v
		sum += v
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// Blur runs rc_blur_rows_<t> then rc_blur_cols_<t> on an h×w×c image.
func Blur[T float32 | float64](dst, src []T, h, w, c, radius int, sigma float64, l Launch1D) error {
	if len(src) != h*w*c || len(dst) != len(src) || radius < 0 {
		return fmt.Errorf("hostsim: shape mismatch")
	}
	if len(src) == 0 {
		return nil
	}
	wt := GaussianWeights(radius, sigma)
	var zero T
	switch any(zero).(type) {
	case float32:
		C.rc_hs_blur_f32((*C.float)(ptr(src)), (*C.float)(ptr(dst)), (*C.double)(ptr(wt)), C.int(h), C.int(w), C.int(c),
			C.int(radius), C.uint(l.Grid), C.uint(l.Block))
	case float64:
		C.rc_hs_blur_f64((*C.double)(ptr(src)), (*C.double)(ptr(dst)), (*C.double)(ptr(wt)), C.int(h), C.int(w), C.int(c),
			C.int(radius), C.uint(l.Grid), C.uint(l.Block))
	}
	return nil
}

// SmemProbe runs rc_smem_probe of kernels/oneshot.cu over out's len blocks
// of block threads (a power of two up to 1024), each with words 32-bit
// words of dynamic shared memory (host_shim.h's launch_smem): out[b] is
// block b's sum of the words it stored and read back.
func SmemProbe(out []uint32, block, words int) error {
	if len(out) == 0 || words < 0 || words > math.MaxInt32 {
		return errLaunch
	}
	if C.rc_hs_smem_probe((*C.uint)(ptr(out)), C.uint(len(out)), C.uint(block), C.uint(words)) != 0 {
		return errLaunch
	}
	return nil
}
