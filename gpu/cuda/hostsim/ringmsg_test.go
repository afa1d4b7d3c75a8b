//go:build linux && cgo

package hostsim

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// TestRingmsgTypeIDs: gpu/ringmsg's ops are the slot type ids of
// ring_abi.h (its message types are this package's payload types, whose
// layouts layout_test.go compares with the C structs).
func TestRingmsgTypeIDs(t *testing.T) {
	for op, id := range map[ringmsg.Op]uint32{ringmsg.Add: MsgAdd, ringmsg.Mul: MsgMul, ringmsg.Scale: MsgScale, ringmsg.ReLU: MsgReLU,
		ringmsg.LeakyReLU: MsgLeakyReLU, ringmsg.Sum: MsgSum, ringmsg.Min: MsgMin, ringmsg.Max: MsgMax, ringmsg.SpMV: MsgSpMV} {
		if op.TypeID() != id {
			t.Errorf("%v: type id %d, ring_abi.h %d", op, op.TypeID(), id)
		}
	}
}

// deviceReply runs one message through the host-compiled ring kernel.
func deviceReply[Req, Resp any](t *testing.T, k *Kernel, op ringmsg.Op, m Req) (Resp, uint32) {
	t.Helper()
	pushWait(t, k.Input(), op.TypeID(), 1, &m)
	h, p := popWait(t, k.Output())
	if h.Status != ring.StatusOK {
		var zero Resp
		return zero, h.Status
	}
	return decode[Resp](t, h, p), ring.StatusOK
}

// TestRingmsgMatchesDevice: ringmsg's CPU handlers give what the device
// handlers (compiled for the host) give, bad arguments included.
func TestRingmsgMatchesDevice(t *testing.T) {
	k := launch(t, Config{})
	k.Control().Open()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []uint32{0, 1, 7, 200, ringmsg.VecMax} {
		var v ringmsg.VecMsg
		var u ringmsg.UnaryMsg
		var r ringmsg.ReduceMsg
		v.N, u.N, r.N, u.Param = n, n, n, 0.25
		for i := range n {
			v.A[i], v.B[i] = rng.Float32()*4-2, rng.Float32()*4-2
			u.X[i], r.X[i] = v.A[i], v.B[i]
		}
		if n > 3 {
			u.X[1], r.X[2] = float32(math.NaN()), float32(math.Inf(-1))
		}
		for _, op := range []ringmsg.Op{ringmsg.Add, ringmsg.Mul} {
			cpu, _ := ringmsg.Handler[ringmsg.VecMsg, ringmsg.VecReply](op)
			want, err := cpu(v)
			got, st := deviceReply[ringmsg.VecMsg, ringmsg.VecReply](t, k, op, v)
			if err != nil || st != ring.StatusOK || !sameF32(got.Y[:], want.Y[:]) || got.N != want.N {
				t.Errorf("%v n=%d: device %v/%d, cpu %v", op, n, got.Y[:n], st, err)
			}
		}
		for _, op := range []ringmsg.Op{ringmsg.Scale, ringmsg.ReLU, ringmsg.LeakyReLU} {
			cpu, _ := ringmsg.Handler[ringmsg.UnaryMsg, ringmsg.VecReply](op)
			want, err := cpu(u)
			got, st := deviceReply[ringmsg.UnaryMsg, ringmsg.VecReply](t, k, op, u)
			if err != nil || st != ring.StatusOK || !sameF32(got.Y[:], want.Y[:]) {
				t.Errorf("%v n=%d: device %v/%d, cpu %v", op, n, got.Y[:n], st, err)
			}
		}
		for _, op := range []ringmsg.Op{ringmsg.Sum, ringmsg.Min, ringmsg.Max} {
			cpu, _ := ringmsg.Handler[ringmsg.ReduceMsg, ringmsg.ScalarReply](op)
			want, err := cpu(r)
			got, st := deviceReply[ringmsg.ReduceMsg, ringmsg.ScalarReply](t, k, op, r)
			if (err != nil) != (st != ring.StatusOK) {
				t.Errorf("%v n=%d: device status %d, cpu error %v", op, n, st, err)
				continue
			}
			if err != nil {
				if !errors.Is(err, gpu.ErrArgument) || !errors.Is(ringmsg.StatusError(op, st), gpu.ErrArgument) {
					t.Errorf("%v n=%d: %v", op, n, err)
				}
				continue
			}
			if !(got.Value == want.Value || math.IsNaN(got.Value) && math.IsNaN(want.Value) ||
				math.Abs(got.Value-want.Value) <= 1e-5*math.Max(1, math.Abs(want.Value))) {
				t.Errorf("%v n=%d: device %v, cpu %v", op, n, got.Value, want.Value)
			}
		}
	}
	// SpMV: a small matrix, and a malformed one.
	var s ringmsg.SpMVMsg
	s.Rows, s.Cols, s.NNZ = 3, 4, 5
	copy(s.RowPtr[:], []int32{0, 2, 2, 5})
	copy(s.ColIdx[:], []int32{0, 3, 1, 2, 3})
	copy(s.Values[:], []float32{1, 2, 3, 4, 5})
	copy(s.X[:], []float32{1, 10, 100, 1000})
	cpu, _ := ringmsg.Handler[ringmsg.SpMVMsg, ringmsg.SpMVReply](ringmsg.SpMV)
	want, err := cpu(s)
	got, st := deviceReply[ringmsg.SpMVMsg, ringmsg.SpMVReply](t, k, ringmsg.SpMV, s)
	if err != nil || st != ring.StatusOK || got != want || want.Y[0] != 2001 || want.Y[2] != 5430 {
		t.Errorf("spmv: device %v/%d, cpu %v/%v", got.Y[:3], st, want.Y[:3], err)
	}
	s.ColIdx[4] = 9 // out of range
	if _, err := cpu(s); !errors.Is(err, gpu.ErrArgument) {
		t.Errorf("malformed CSR on the CPU: %v", err)
	}
	if _, st := deviceReply[ringmsg.SpMVMsg, ringmsg.SpMVReply](t, k, ringmsg.SpMV, s); st != ring.StatusBadArgs {
		t.Errorf("malformed CSR on the device: status %d", st)
	}
	var big ringmsg.VecMsg
	big.N = ringmsg.VecMax + 1
	add, _ := ringmsg.Handler[ringmsg.VecMsg, ringmsg.VecReply](ringmsg.Add)
	if _, err := add(big); !errors.Is(err, gpu.ErrArgument) {
		t.Errorf("n > VecMax on the CPU: %v", err)
	}
	if _, st := deviceReply[ringmsg.VecMsg, ringmsg.VecReply](t, k, ringmsg.Add, big); st != ring.StatusBadArgs {
		t.Errorf("n > VecMax on the device: status %d", st)
	}
	if _, err := ringmsg.Handler[ringmsg.VecMsg, ringmsg.ScalarReply](ringmsg.Add); !errors.Is(err, gpu.ErrArgument) {
		t.Errorf("wrong reply type accepted: %v", err)
	}
}

// sameF32 compares element by element, NaN equal to NaN.
func sameF32(a, b []float32) bool {
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}
