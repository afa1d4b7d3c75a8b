package ringrt

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/clayout"
	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// The test program: SAXPY over a fixed vector, with a counter as state.
type saxpyReq struct {
	N uint32
	A float32
	X [64]float32
	Y [64]float32
}

type saxpyResp struct {
	N    uint32
	Seen uint64
	Z    [64]float32
}

type saxpyState struct{ Calls uint64 }

const saxpyCode = `
__device__ uint32_t saxpy(const rc_ctx *ctx, const saxpyReq *req, saxpyResp *resp, saxpyState *st) {
	if (req->N > 64) {
		return 7; // a status of the handler's own
	}
	for (uint32_t i = ctx->thread; i < req->N; i += ctx->threads) {
		resp->Z[i] = req->A * req->X[i] + req->Y[i];
	}
	__syncthreads(); // every thread read st->Calls before thread 0 bumps it
	if (ctx->thread == 0) {
		resp->N = req->N;
		resp->Seen = ++st->Calls;
	}
	return RC_STATUS_OK;
}
`

func saxpySpec() ProgramSpec {
	return ProgramSpec{Name: "saxpy", Code: saxpyCode, Handler: "saxpy",
		Req: reflect.TypeFor[saxpyReq](), Resp: reflect.TypeFor[saxpyResp](), State: reflect.TypeFor[saxpyState]()}
}

// TestRingProgramSourceCompiles compiles a generated program with NVRTC
// (--fmad=false; sizes asserted), assembles the PTX with ptxas for sm_70,
// sm_80 and sm_90, and compiles the host build with g++ (offsets asserted
// too).
func TestRingProgramSourceCompiles(t *testing.T) {
	src, err := NewProgramSource(saxpySpec())
	if err != nil {
		t.Fatal(err)
	}
	if src.Entry != "rc_ring_saxpy" || src.SharedBytes != uint32(64+align16(src.ReqBytes)+align16(src.RespBytes)) {
		t.Fatalf("entry %q, shared %d", src.Entry, src.SharedBytes)
	}
	t.Run("nvrtc+ptxas", func(t *testing.T) {
		ptx, err := CompileForTest(context.Background(), "saxpy.cu", src.Device, driverapi.NVRTCTarget{}) // --fmad=false
		if errors.Is(err, driverapi.ErrNoNVRTC) {
			t.Skip("NVRTC not available:", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(ptx), ".entry rc_ring_saxpy(") || !strings.Contains(string(ptx), ".entry rc_grid_saxpy(") ||
			!strings.Contains(string(ptx), "ld.acquire.sys") || !strings.Contains(string(ptx), "atom.global.cas") {
			t.Fatalf("PTX lacks the entry or the system-scope acquire:\n%.2000s", ptx)
		}
		if strings.Contains(string(ptx), "fma.rn") {
			t.Fatal("--fmad=false still produced an fma")
		}
		ptxas, err := exec.LookPath("ptxas")
		if err != nil {
			t.Skip("ptxas not found")
		}
		f := filepath.Join(t.TempDir(), "saxpy.ptx")
		if err := os.WriteFile(f, ptx, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, arch := range []string{"sm_70", "sm_80", "sm_90"} {
			if out, err := exec.Command(ptxas, "-arch="+arch, "-o", os.DevNull, f).CombinedOutput(); err != nil {
				t.Errorf("ptxas %s: %v\n%s", arch, err, out)
			}
		}
	})
	t.Run("g++", func(t *testing.T) {
		gxx, err := exec.LookPath("g++")
		if err != nil {
			t.Skip("g++ not found")
		}
		f := filepath.Join(t.TempDir(), "saxpy.cc")
		if err := os.WriteFile(f, []byte(src.Host), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(gxx, "-std=c++20", "-fsyntax-only", "-x", "c++", f).CombinedOutput(); err != nil {
			t.Fatalf("g++: %v\n%s", err, out)
		}
	})
}

// TestRingProgramSourceErrors checks that bad specs are typed errors.
func TestRingProgramSourceErrors(t *testing.T) {
	type withSlice struct{ X []float32 }
	for name, mod := range map[string]func(*ProgramSpec){
		"empty code":    func(s *ProgramSpec) { s.Code = " \n" },
		"NUL":           func(s *ProgramSpec) { s.Code += "\x00" },
		"handler name":  func(s *ProgramSpec) { s.Handler = "not valid" },
		"reserved name": func(s *ProgramSpec) { s.Handler = "rc_loop" },
		"no request":    func(s *ProgramSpec) { s.Req = nil },
		"slice":         func(s *ProgramSpec) { s.Resp = reflect.TypeFor[withSlice]() },
		"scalar state":  func(s *ProgramSpec) { s.State = reflect.TypeFor[float64]() },
	} {
		spec := saxpySpec()
		mod(&spec)
		_, err := NewProgramSource(spec)
		var ae *gpu.ArgumentError
		if !errors.As(err, &ae) || !errors.Is(err, gpu.ErrArgument) {
			t.Errorf("%s: %v, want a *gpu.ArgumentError", name, err)
		}
		if name == "slice" && !errors.Is(err, clayout.ErrLayout) {
			t.Errorf("%s: %v does not match clayout.ErrLayout", name, err)
		}
	}
}

// TestBuiltinRingProgramsAssemble compiles each built-in handler of
// gpu/ringmsg as its device ring program with NVRTC and assembles it with
// ptxas for sm_70, sm_80 and sm_90.
func TestBuiltinRingProgramsAssemble(t *testing.T) {
	ptxas, err := exec.LookPath("ptxas")
	if err != nil {
		t.Skip("ptxas not found")
	}
	dir := t.TempDir()
	for _, op := range []ringmsg.Op{ringmsg.Add, ringmsg.Mul, ringmsg.Scale, ringmsg.ReLU, ringmsg.LeakyReLU,
		ringmsg.Sum, ringmsg.Min, ringmsg.Max, ringmsg.SpMV} {
		req, resp, _ := op.Types()
		spec := ProgramSpec{Name: op.String(), Code: ringmsg.DeviceCode, Handler: op.DeviceEntry(), Req: req, Resp: resp}
		for _, v := range ringmsg.DeviceTypes {
			spec.Types = append(spec.Types, reflect.TypeOf(v))
		}
		src, err := NewProgramSource(spec)
		if err != nil {
			t.Fatal(err)
		}
		ptx, err := compileProgram(context.Background(), CompileForTest, src, driverapi.NVRTCTarget{})
		if errors.Is(err, driverapi.ErrNoNVRTC) {
			t.Skip("NVRTC not available:", err)
		}
		if err != nil {
			t.Fatalf("%v: %v", op, err)
		}
		f := filepath.Join(dir, op.String()+".ptx")
		if err := os.WriteFile(f, ptx, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, arch := range []string{"sm_70", "sm_80", "sm_90"} {
			if out, err := exec.Command(ptxas, "-arch="+arch, "-o", os.DevNull, f).CombinedOutput(); err != nil {
				t.Errorf("%v: ptxas %s: %v\n%s", op, arch, err, out)
			}
		}
	}
}
