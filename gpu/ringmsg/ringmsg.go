// Package ringmsg holds the fixed-layout messages of the built-in device
// ring handlers (handlers.cuh, whose C structs are generated from these
// Go types) and their CPU
// implementations, which compute the same results. A device ring kernel
// (actors.NewDeviceKernel) takes one of these request types and answers
// with its reply type, on the GPU where there is one and on the CPU
// otherwise. The C structs are generated from the Go layouts (each offset
// asserted at compile time in the generated program), so a message is copied into a ring slot as it
// is.
package ringmsg

import (
	"fmt"
	"math"
	"reflect"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/messages"
)

// Limits of the fixed payloads.
const (
	VecMax      = 256 // elements of a vector message
	SpMVMaxRows = 64
	SpMVMaxCols = 128
	SpMVMaxNNZ  = 256
)

// Op is a built-in device ring handler; its value is the slot type id
// (RC_MSG_*).
type Op uint32

// The built-in handlers.
const (
	Add       Op = 1 // VecMsg → VecReply: a + b
	Mul       Op = 2 // VecMsg → VecReply: a * b
	Scale     Op = 3 // UnaryMsg → VecReply: param * x
	ReLU      Op = 4 // UnaryMsg → VecReply: x < 0 ? 0 : x (NaN passes through)
	LeakyReLU Op = 5 // UnaryMsg → VecReply: x > 0 ? x : param * x
	Sum       Op = 6 // ReduceMsg → ScalarReply: the float32 sum (accumulated in float64)
	Min       Op = 7 // ReduceMsg → ScalarReply (NaN if any is NaN; n ≥ 1)
	Max       Op = 8 // ReduceMsg → ScalarReply (NaN if any is NaN; n ≥ 1)
	SpMV      Op = 9 // SpMVMsg → SpMVReply: y = A x, A in CSR
)

// Reply statuses of the device ring protocol (RC_STATUS_*).
const (
	StatusOK          uint32 = 0
	StatusUnknownType uint32 = 1
	StatusBadLength   uint32 = 2
	StatusBadArgs     uint32 = 3
)

// VecMsg is rc_vec_msg: two vectors of N float32.
type VecMsg struct {
	N        uint32
	Reserved uint32
	A        [VecMax]float32
	B        [VecMax]float32
}

// UnaryMsg is rc_unary_msg: a vector and a parameter (scale factor or
// leaky-relu slope).
type UnaryMsg struct {
	N     uint32
	Param float32
	X     [VecMax]float32
}

// ReduceMsg is rc_reduce_msg: the vector to reduce.
type ReduceMsg struct {
	N        uint32
	Reserved uint32
	X        [VecMax]float32
}

// SpMVMsg is rc_spmv_msg: a CSR matrix and the vector it multiplies.
type SpMVMsg struct {
	Rows, Cols, NNZ, Reserved uint32
	RowPtr                    [SpMVMaxRows + 1]int32
	ColIdx                    [SpMVMaxNNZ]int32
	Values                    [SpMVMaxNNZ]float32
	X                         [SpMVMaxCols]float32
}

// VecReply is rc_vec_reply.
type VecReply struct {
	N        uint32
	Reserved uint32
	Y        [VecMax]float32
}

// ScalarReply is rc_scalar_reply.
type ScalarReply struct {
	N        uint32
	Reserved uint32
	Value    float64
}

// SpMVReply is rc_spmv_reply.
type SpMVReply struct {
	Rows     uint32
	Reserved uint32
	Y        [SpMVMaxRows]float32
}

func init() {
	messages.MustRegister[VecMsg]("ringactor.ringmsg.VecMsg")
	messages.MustRegister[UnaryMsg]("ringactor.ringmsg.UnaryMsg")
	messages.MustRegister[ReduceMsg]("ringactor.ringmsg.ReduceMsg")
	messages.MustRegister[SpMVMsg]("ringactor.ringmsg.SpMVMsg")
	messages.MustRegister[VecReply]("ringactor.ringmsg.VecReply")
	messages.MustRegister[ScalarReply]("ringactor.ringmsg.ScalarReply")
	messages.MustRegister[SpMVReply]("ringactor.ringmsg.SpMVReply")
}

var names = map[Op]string{Add: "add", Mul: "multiply", Scale: "scale", ReLU: "relu", LeakyReLU: "leaky_relu",
	Sum: "sum", Min: "min", Max: "max", SpMV: "spmv"}

// String returns the handler's name.
func (o Op) String() string {
	if n, ok := names[o]; ok {
		return n
	}
	return fmt.Sprintf("op(%d)", uint32(o))
}

// TypeID returns the slot type id of the op's messages.
func (o Op) TypeID() uint32 { return uint32(o) }

// Types returns the request and reply types of o; ok is false for an
// unknown op.
func (o Op) Types() (req, resp reflect.Type, ok bool) {
	switch o {
	case Add, Mul:
		return reflect.TypeFor[VecMsg](), reflect.TypeFor[VecReply](), true
	case Scale, ReLU, LeakyReLU:
		return reflect.TypeFor[UnaryMsg](), reflect.TypeFor[VecReply](), true
	case Sum, Min, Max:
		return reflect.TypeFor[ReduceMsg](), reflect.TypeFor[ScalarReply](), true
	case SpMV:
		return reflect.TypeFor[SpMVMsg](), reflect.TypeFor[SpMVReply](), true
	}
	return nil, nil, false
}

// StatusError turns a reply status that is not StatusOK into the error the
// CPU implementation gives for the same request: a *gpu.ArgumentError
// (errors.Is gpu.ErrArgument).
func StatusError(o Op, status uint32) error {
	reason := map[uint32]string{
		StatusUnknownType: "the device has no handler for this message type",
		StatusBadLength:   "the message does not match its type's size or does not fit a ring slot",
		StatusBadArgs:     "the message's sizes or indices are out of range",
	}[status]
	if reason == "" {
		reason = fmt.Sprintf("device status %d", status)
	}
	return &gpu.ArgumentError{Kernel: o.String(), Arg: "message", Reason: reason, Err: gpu.ErrArgument}
}

// Handler returns the CPU implementation of o for the request and reply
// types Req and Resp; an error when o is unknown or does not take Req and
// answer Resp.
func Handler[Req, Resp any](o Op) (func(Req) (Resp, error), error) {
	req, resp, ok := o.Types()
	if !ok {
		return nil, fmt.Errorf("ringmsg: unknown op %d: %w", uint32(o), gpu.ErrArgument)
	}
	if req != reflect.TypeFor[Req]() || resp != reflect.TypeFor[Resp]() {
		return nil, fmt.Errorf("ringmsg: %v takes %v and answers %v, not %v and %v: %w",
			o, req, resp, reflect.TypeFor[Req](), reflect.TypeFor[Resp](), gpu.ErrArgument)
	}
	var f any
	switch o {
	case Add, Mul:
		f = func(m VecMsg) (VecReply, error) { return vec(o, m) }
	case Scale, ReLU, LeakyReLU:
		f = func(m UnaryMsg) (VecReply, error) { return unary(o, m) }
	case Sum, Min, Max:
		f = func(m ReduceMsg) (ScalarReply, error) { return reduce(o, m) }
	case SpMV:
		f = func(m SpMVMsg) (SpMVReply, error) { return spmv(m) }
	}
	return f.(func(Req) (Resp, error)), nil
}

func badArgs(o Op) error { return StatusError(o, StatusBadArgs) }

func vec(o Op, m VecMsg) (VecReply, error) {
	var r VecReply
	if m.N > VecMax {
		return r, badArgs(o)
	}
	for i := range m.N {
		if o == Add {
			r.Y[i] = m.A[i] + m.B[i]
		} else {
			r.Y[i] = m.A[i] * m.B[i]
		}
	}
	r.N = m.N
	return r, nil
}

func unary(o Op, m UnaryMsg) (VecReply, error) {
	var r VecReply
	if m.N > VecMax {
		return r, badArgs(o)
	}
	p := m.Param
	for i := range m.N {
		x := m.X[i]
		switch o {
		case Scale:
			r.Y[i] = p * x
		case ReLU:
			if x < 0 {
				x = 0
			}
			r.Y[i] = x
		default:
			if !(x > 0) {
				x = p * x
			}
			r.Y[i] = x
		}
	}
	r.N = m.N
	return r, nil
}

func reduce(o Op, m ReduceMsg) (ScalarReply, error) {
	var r ScalarReply
	if m.N > VecMax || (m.N == 0 && o != Sum) {
		return r, badArgs(o)
	}
	var v float64
	switch o {
	case Sum:
		for i := range m.N {
			v += float64(m.X[i])
		}
		v = float64(float32(v))
	case Min, Max:
		v = float64(m.X[0])
		for i := range m.N {
			x := float64(m.X[i])
			switch {
			case math.IsNaN(v):
			case math.IsNaN(x):
				v = x
			case o == Min && x < v, o == Max && x > v:
				v = x
			}
		}
	}
	r.N, r.Value = m.N, v
	return r, nil
}

func spmv(m SpMVMsg) (SpMVReply, error) {
	var r SpMVReply
	if m.Rows > SpMVMaxRows || m.Cols > SpMVMaxCols || m.NNZ > SpMVMaxNNZ ||
		m.RowPtr[0] != 0 || m.RowPtr[m.Rows] != int32(m.NNZ) {
		return r, badArgs(SpMV)
	}
	for i := uint32(1); i <= m.Rows; i++ {
		if m.RowPtr[i] < m.RowPtr[i-1] {
			return r, badArgs(SpMV)
		}
	}
	for j := range m.NNZ {
		if c := m.ColIdx[j]; c < 0 || uint32(c) >= m.Cols {
			return r, badArgs(SpMV)
		}
	}
	for i := range m.Rows {
		var acc float64
		for j := m.RowPtr[i]; j < m.RowPtr[i+1]; j++ {
			acc += float64(m.Values[j]) * float64(m.X[m.ColIdx[j]])
		}
		r.Y[i] = float32(acc)
	}
	r.Rows = m.Rows
	return r, nil
}
