package ringmsg

import (
	"errors"
	"math"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

func TestHandlersCPU(t *testing.T) {
	nan := float32(math.NaN())
	add, err := Handler[VecMsg, VecReply](Add)
	if err != nil {
		t.Fatal(err)
	}
	v := VecMsg{N: 3}
	copy(v.A[:], []float32{1, 2, 3})
	copy(v.B[:], []float32{10, 20, 30})
	if r, err := add(v); err != nil || r.N != 3 || r.Y[2] != 33 || r.Y[3] != 0 {
		t.Fatalf("add: %v %v", r.Y[:4], err)
	}
	relu, _ := Handler[UnaryMsg, VecReply](ReLU)
	u := UnaryMsg{N: 4}
	copy(u.X[:], []float32{-1, float32(math.Copysign(0, -1)), nan, 2})
	r, _ := relu(u)
	if r.Y[0] != 0 || !math.Signbit(float64(r.Y[1])) || !math.IsNaN(float64(r.Y[2])) || r.Y[3] != 2 {
		t.Fatalf("relu: %v (-0 and NaN pass through)", r.Y[:4])
	}
	leaky, _ := Handler[UnaryMsg, VecReply](LeakyReLU)
	u.Param = 0.5
	if r, _ := leaky(u); r.Y[0] != -0.5 || !math.IsNaN(float64(r.Y[2])) || r.Y[3] != 2 {
		t.Fatalf("leaky relu: %v", r.Y[:4])
	}
	red := ReduceMsg{N: 3}
	copy(red.X[:], []float32{1, nan, -5})
	for op, want := range map[Op]float64{Min: math.NaN(), Max: math.NaN()} {
		h, _ := Handler[ReduceMsg, ScalarReply](op)
		if r, _ := h(red); math.IsNaN(want) != math.IsNaN(r.Value) {
			t.Errorf("%v with a NaN: %v", op, r.Value)
		}
	}
	red.X[1] = 7
	minH, _ := Handler[ReduceMsg, ScalarReply](Min)
	maxH, _ := Handler[ReduceMsg, ScalarReply](Max)
	sumH, _ := Handler[ReduceMsg, ScalarReply](Sum)
	if a, _ := minH(red); a.Value != -5 {
		t.Errorf("min %v", a.Value)
	}
	if a, _ := maxH(red); a.Value != 7 {
		t.Errorf("max %v", a.Value)
	}
	if a, _ := sumH(red); a.Value != 3 {
		t.Errorf("sum %v", a.Value)
	}
	if _, err := minH(ReduceMsg{}); !errors.Is(err, gpu.ErrArgument) {
		t.Errorf("min of nothing: %v", err)
	}
	if a, err := sumH(ReduceMsg{}); err != nil || a.Value != 0 {
		t.Errorf("sum of nothing: %v %v", a.Value, err)
	}
	var ae *gpu.ArgumentError
	if _, err := add(VecMsg{N: VecMax + 1}); !errors.As(err, &ae) || ae.Kernel != "add" {
		t.Errorf("n > VecMax: %v", err)
	}
	if _, err := Handler[VecMsg, VecReply](Sum); !errors.Is(err, gpu.ErrArgument) {
		t.Errorf("sum with vector types: %v", err)
	}
	if Op(42).String() != "op(42)" || SpMV.String() != "spmv" {
		t.Error("names")
	}
}

func TestSpMVChecks(t *testing.T) {
	h, _ := Handler[SpMVMsg, SpMVReply](SpMV)
	good := SpMVMsg{Rows: 2, Cols: 2, NNZ: 2}
	copy(good.RowPtr[:], []int32{0, 1, 2})
	copy(good.ColIdx[:], []int32{1, 0})
	copy(good.Values[:], []float32{3, 4})
	copy(good.X[:], []float32{1, 2})
	if r, err := h(good); err != nil || r.Y[0] != 6 || r.Y[1] != 4 || r.Rows != 2 {
		t.Fatalf("spmv: %v %v", r.Y[:2], err)
	}
	bad := []func(m *SpMVMsg){
		func(m *SpMVMsg) { m.Rows = SpMVMaxRows + 1 },
		func(m *SpMVMsg) { m.RowPtr[0] = 1 },
		func(m *SpMVMsg) { m.NNZ = 1 },
		func(m *SpMVMsg) { m.RowPtr[1] = 3 },
		func(m *SpMVMsg) { m.ColIdx[0] = 2 },
		func(m *SpMVMsg) { m.ColIdx[1] = -1 },
	}
	for i, f := range bad {
		m := good
		f(&m)
		if _, err := h(m); !errors.Is(err, gpu.ErrArgument) {
			t.Errorf("malformed CSR %d: %v", i, err)
		}
	}
}
