//go:build linux && cgo

package hostsim

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ringactor/ringactor/gpu/cpu"
	"github.com/ringactor/ringactor/gpu/ring"
)

func launch(t *testing.T, cfg Config) *Kernel {
	t.Helper()
	k, err := Launch(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// popWait pops one reply, waiting up to 5 s.
func popWait(t *testing.T, r *ring.SlotRing) (ring.SlotHeader, []byte) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if h, p, ok := r.TryPop(); ok {
			return h, p
		}
		if time.Now().After(deadline) {
			t.Fatal("no reply within 5s")
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func pushWait[T any](t *testing.T, r *ring.SlotRing, typ uint32, corr uint64, m *T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !TryPush(r, typ, corr, m) {
		if time.Now().After(deadline) {
			t.Fatal("input ring stayed full for 5s")
		}
		time.Sleep(20 * time.Microsecond)
	}
}

func decode[T any](t *testing.T, h ring.SlotHeader, p []byte) T {
	t.Helper()
	if h.Flags != ring.FlagReply || h.Status != ring.StatusOK {
		t.Fatalf("reply flags %d status %d", h.Flags, h.Status)
	}
	v, err := Decode[T](p)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func randF32(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64() * 10)
	}
	return s
}

func closeF32(a, b float64) bool { return math.Abs(a-b) <= 1e-5*math.Max(1, math.Abs(b)) }

func checkVec(t *testing.T, name string, got []float32, want []float32) {
	t.Helper()
	for i := range want {
		if !closeF32(float64(got[i]), float64(want[i])) {
			t.Fatalf("%s[%d] = %v, want %v", name, i, got[i], want[i])
		}
	}
}

// TestHandlers sends one message per handler, for several sizes and block
// sizes, and compares each reply with the CPU kernels of gpu/cpu.
func TestHandlers(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, threads := range []int{1, 4, 8} {
		k := launch(t, Config{Capacity: 8, Threads: threads})
		k.Control().Open()
		in, out := k.Input(), k.Output()
		var corr uint64
		for _, n := range []int{0, 1, 7, 64, VecMax} {
			a, b := randF32(rng, n), randF32(rng, n)
			want := make([]float32, n)
			var vm VecMsg
			vm.N = uint32(n)
			copy(vm.A[:], a)
			copy(vm.B[:], b)
			for typ, ref := range map[uint32]func(context.Context, []float32, []float32, []float32) error{
				MsgAdd: cpu.Add[float32], MsgMul: cpu.Mul[float32],
			} {
				corr++
				pushWait(t, in, typ, corr, &vm)
				h, p := popWait(t, out)
				if h.CorrelationID != corr || h.TypeID != typ {
					t.Fatalf("reply corr %d type %d, want %d %d", h.CorrelationID, h.TypeID, corr, typ)
				}
				r := decode[VecReply](t, h, p)
				if err := ref(ctx, want, a, b); err != nil {
					t.Fatal(err)
				}
				if int(r.N) != n {
					t.Fatalf("n = %d", r.N)
				}
				checkVec(t, "vec", r.Y[:n], want)
			}

			const param = 0.37
			um := UnaryMsg{N: uint32(n), Param: param}
			copy(um.X[:], a)
			for _, typ := range []uint32{MsgScale, MsgReLU, MsgLeakyReLU} {
				corr++
				pushWait(t, in, typ, corr, &um)
				h, p := popWait(t, out)
				r := decode[VecReply](t, h, p)
				var err error
				switch typ {
				case MsgScale:
					err = cpu.Scale(ctx, want, a, float32(param))
				case MsgReLU:
					err = cpu.ReLU(ctx, want, a)
				default:
					err = cpu.LeakyReLU(ctx, want, a, float32(param))
				}
				if err != nil {
					t.Fatal(err)
				}
				checkVec(t, "unary", r.Y[:n], want)
			}

			rm := ReduceMsg{N: uint32(n)}
			copy(rm.X[:], a)
			for typ, ref := range map[uint32]func(context.Context, []float32) (float32, error){
				MsgSum: cpu.Sum[float32], MsgMin: cpu.Min[float32], MsgMax: cpu.Max[float32],
			} {
				corr++
				pushWait(t, in, typ, corr, &rm)
				h, p := popWait(t, out)
				w, err := ref(ctx, a)
				if n == 0 && typ != MsgSum {
					if err == nil || h.Status != ring.StatusBadArgs || h.Flags != ring.FlagReply|ring.FlagError {
						t.Fatalf("empty min/max: status %d flags %d, cpu err %v", h.Status, h.Flags, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				r := decode[ScalarReply](t, h, p)
				if !closeF32(r.Value, float64(w)) {
					t.Fatalf("reduce type %d n %d = %v, want %v", typ, n, r.Value, w)
				}
			}
		}

		// SpMV with a random CSR matrix.
		for _, rows := range []int{0, 1, 17, SpMVMaxRows} {
			cols := 1 + rng.IntN(SpMVMaxCols)
			var m SpMVMsg
			m.Rows, m.Cols = uint32(rows), uint32(cols)
			var vals []float32
			var colIdx []int32
			rowPtr := []int32{0}
			for i := 0; i < rows; i++ {
				for j := rng.IntN(SpMVMaxNNZ/SpMVMaxRows + 1); j > 0; j-- {
					vals = append(vals, float32(rng.NormFloat64()))
					colIdx = append(colIdx, int32(rng.IntN(cols)))
				}
				rowPtr = append(rowPtr, int32(len(vals)))
			}
			x := randF32(rng, cols)
			m.NNZ = uint32(len(vals))
			copy(m.RowPtr[:], rowPtr)
			copy(m.ColIdx[:], colIdx)
			copy(m.Values[:], vals)
			copy(m.X[:], x)
			corr++
			pushWait(t, in, MsgSpMV, corr, &m)
			h, p := popWait(t, out)
			r := decode[SpMVReply](t, h, p)
			y := make([]float32, rows)
			if err := cpu.SpMV(ctx, y, vals, colIdx, rowPtr, x); err != nil {
				t.Fatal(err)
			}
			if int(r.Rows) != rows {
				t.Fatalf("rows = %d", r.Rows)
			}
			checkVec(t, "spmv", r.Y[:rows], y)
		}

		st := k.Control().Snapshot()
		if st.Processed != corr || st.Errors != 2 { // empty min and max
			t.Fatalf("processed %d errors %d, want %d and 2", st.Processed, st.Errors, corr)
		}
		if st.LatencyMax == 0 || st.LastActivity.IsZero() {
			t.Fatalf("latency/heartbeat not recorded: %+v", st)
		}
		k.Terminate(ring.TerminateDrain)
		if ack := k.Wait(); ack != ring.Terminated {
			t.Fatalf("ack = %d", ack)
		}
	}
}

// TestErrors: unknown type, wrong length and malformed arguments are
// answered with the error flag and counted; the loop keeps going.
func TestErrors(t *testing.T) {
	k := launch(t, Config{Capacity: 4})
	k.Control().Open()
	in, out := k.Input(), k.Output()
	cases := []struct {
		typ     uint32
		payload []byte
		status  uint32
	}{
		{99, nil, ring.StatusUnknownType},
		{MsgAdd, make([]byte, 16), ring.StatusBadLength},
		{MsgSum, make([]byte, 8), ring.StatusBadLength},
	}
	for i, c := range cases {
		if !in.TryPushRaw(ring.SlotHeader{TypeID: c.typ, CorrelationID: uint64(i)}, c.payload) {
			t.Fatal("ring full")
		}
		h, p := popWait(t, out)
		if h.Status != c.status || h.Flags != ring.FlagReply|ring.FlagError || len(p) != 0 || h.CorrelationID != uint64(i) {
			t.Fatalf("case %d: %+v", i, h)
		}
	}
	bad := VecMsg{N: VecMax + 1}
	pushWait(t, in, MsgAdd, 10, &bad)
	if h, _ := popWait(t, out); h.Status != ring.StatusBadArgs {
		t.Fatalf("n too large: %+v", h)
	}
	sp := SpMVMsg{Rows: 1, Cols: 2, NNZ: 1}
	sp.RowPtr[1] = 1
	sp.ColIdx[0] = 2 // out of range
	pushWait(t, in, MsgSpMV, 11, &sp)
	if h, _ := popWait(t, out); h.Status != ring.StatusBadArgs {
		t.Fatalf("bad column: %+v", h)
	}
}
