package ringrt

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"strings"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/clayout"
	"github.com/ringactor/ringactor/gpu/cuda/kernels"
)

// ProgramSpec describes a device ring kernel written by a user: a CUDA
// C __device__ handler and the Go types of its messages.
//
// The handler is called by every thread of the kernel's block for each
// message:
//
//	__device__ uint32_t Handler(const rc_ctx *ctx, const Req *req, Resp *resp, State *state)
//
// where Req, Resp and State are C structs generated from the Go types
// (named as the Go types, members named as the Go fields; State is
// rc_no_state when the spec has none). It returns RC_STATUS_OK (0) or a
// status of its choice; thread 0's return value counts. resp is zeroed
// before the call; req and resp are in shared memory when together they
// fit RC_LOOP_STAGE_MAX (40 KiB less 64 bytes), else in the ring slots in
// mapped host memory. ctx->scratch holds one double a thread of shared
// memory for rc_block_reduce. state persists between messages and is zeroed at every launch.
type ProgramSpec struct {
	// Name names the program in diagnostics (e.g. the kernel id).
	Name string
	// Code is the CUDA C source of the handler and its helpers. It may use
	// the generated structs, rc_ctx, RC_STATUS_* and the uint*_t types; it
	// needs no #include.
	Code string
	// Handler is the name of the __device__ handler in Code.
	Handler string
	// Req and Resp are the fixed-layout request and response types.
	Req, Resp reflect.Type
	// State is the fixed-layout per-kernel state type, or nil.
	State reflect.Type
	// Types are further fixed-layout struct types Code uses (declared
	// after Req, Resp and State, in this order).
	Types []reflect.Type
}

// ProgramSource is the generated source of a device ring kernel: the
// same program for NVRTC (Device) and for the simulated device's host
// compiler (Host), and the figures its launch needs.
type ProgramSource struct {
	Name        string
	Entry       string   // the __global__ entry of one kernel's own loop: rc_ring_<Handler>
	GridEntry   string   // the __global__ entry of the program's persistent grid of mailboxes: rc_grid_<Handler>
	Device      string   // for NVRTC: the loop template, the structs, the user's code, the entry
	Host        string   // Device after host_shim.h, plus the simulated device's launch function
	Hash        [32]byte // sha256 of Device
	ReqBytes    int
	RespBytes   int
	StateBytes  int    // sizeof the state struct (1 for rc_no_state)
	SharedBytes uint32 // dynamic shared memory of the launch, less the handler's scratch (8 bytes a thread)
	Structs     []clayout.Struct
	UserLine    int // the line of Device where the user's code starts
}

// loopStageMax and loopSmemHeader mirror RC_LOOP_STAGE_MAX and
// RC_LOOP_SMEM_HEADER of ring_loop.cuh (the generated program asserts the
// shared memory figure it is launched with).
const (
	loopSmemHeader = 64
	loopMaxBlock   = 1024
	loopStageMax   = 48*1024 - loopSmemHeader - 8*loopMaxBlock
)

func align16(n int) int { return (n + 15) &^ 15 }

// loopSharedBytes is rc_loop_smem(req, resp).
func loopSharedBytes(req, resp int) uint32 {
	if align16(req)+align16(resp) <= loopStageMax {
		return uint32(loopSmemHeader + align16(req) + align16(resp))
	}
	return loopSmemHeader
}

// NewProgramSource generates the program of spec. A type that is not
// fixed-layout, a name that is not a C identifier (or is reserved: a
// leading _ or rc_), an empty source or handler name, or two types with the
// same C name is a *gpu.ArgumentError (errors.Is gpu.ErrArgument; a layout
// problem also matches clayout.ErrLayout).
func NewProgramSource(spec ProgramSpec) (*ProgramSource, error) {
	bad := func(arg, reason string, err error) error {
		cause := gpu.ErrArgument
		if err != nil {
			cause = fmt.Errorf("%w: %w", gpu.ErrArgument, err)
		}
		return &gpu.ArgumentError{Kernel: spec.Name, Arg: arg, Reason: reason, Err: cause}
	}
	if strings.TrimSpace(spec.Code) == "" {
		return nil, bad("code", "the handler source is empty", nil)
	}
	if strings.ContainsRune(spec.Code, 0) {
		return nil, bad("code", "the handler source contains a NUL byte", nil)
	}
	if !clayout.ValidName(spec.Handler) {
		return nil, bad("handler", fmt.Sprintf("%q is not a C identifier (or is reserved: a leading _ or rc_)", spec.Handler), nil)
	}
	var g clayout.Generator
	add := func(role string, t reflect.Type) (string, error) {
		if t == nil {
			return "", bad(role, "no type", nil)
		}
		s, err := g.Add(t.Name(), t)
		if err != nil {
			return "", bad(role, err.Error(), err)
		}
		return s.Name, nil
	}
	reqName, err := add("request", spec.Req)
	if err != nil {
		return nil, err
	}
	respName, err := add("response", spec.Resp)
	if err != nil {
		return nil, err
	}
	stateName, stateBytes := "rc_no_state", 1
	if spec.State != nil {
		if stateName, err = add("state", spec.State); err != nil {
			return nil, err
		}
		stateBytes = int(spec.State.Size())
	}
	for i, t := range spec.Types {
		if _, err := add(fmt.Sprintf("type %d", i), t); err != nil {
			return nil, err
		}
	}
	p := &ProgramSource{Name: spec.Name, Entry: "rc_ring_" + spec.Handler, GridEntry: "rc_grid_" + spec.Handler, ReqBytes: int(spec.Req.Size()),
		RespBytes: int(spec.Resp.Size()), StateBytes: stateBytes, Structs: g.Structs()}
	p.SharedBytes = loopSharedBytes(p.ReqBytes, p.RespBytes)

	var b strings.Builder
	// Nothing of spec.Name goes into the source: kernels with the same
	// handler and types share one compiled program.
	b.WriteString("// A device ring kernel generated by ringactor (gpu/cuda); the structs mirror the Go types.\n")
	b.WriteString(kernels.RingABI)
	b.WriteString(kernels.RingLoop)
	b.WriteString(kernels.GridLoop)
	b.WriteString("\n// The message types, from Go.\n")
	b.WriteString(g.Source())
	b.WriteString("\n")
	p.UserLine = strings.Count(b.String(), "\n") + 2
	file := spec.Handler
	fmt.Fprintf(&b, "#line 1 %q\n%s\n", file+".cu", spec.Code)
	fmt.Fprintf(&b, `#line 1 %q
static_assert(rc_loop_smem(sizeof(%[2]s), sizeof(%[3]s)) == %[5]d, "the host's shared memory figure differs");
extern "C" __global__ void %[6]s(rc_control_block *cb, rc_ring_header *in, rc_ring_header *out, %[4]s *state) {
	RC_DYNAMIC_SHARED(rc_smem);
	rc_ring_loop_t<%[2]s, %[3]s, %[4]s, %[7]s>(cb, in, out, state, rc_smem);
}
extern "C" __global__ void %[8]s(rc_control_block *gcb, rc_grid_header *table, rc_grid_words *words, unsigned char *slab) {
	RC_DYNAMIC_SHARED(rc_smem);
	rc_grid_loop_t<%[2]s, %[3]s, %[4]s, %[7]s>(gcb, table, words, slab, rc_smem);
}
`, file+".entry.cu", reqName, respName, stateName, p.SharedBytes, p.Entry, spec.Handler, p.GridEntry)
	p.Device = b.String()
	p.Hash = sha256.Sum256([]byte(p.Device))
	// The host build gets the shim in a namespace of its own: a process that
	// links hostsim (or another program) has the same inline functions and
	// lambda types under rc_host, and the dynamic linker would otherwise
	// bind this library's std::thread vtables to the executable's copies.
	p.Host = "#define rc_host rc_host_program\n" + kernels.HostShim + "\n" + p.Device + fmt.Sprintf(`
// The simulated device's launch of this program (gpu/cuda/hostsim).
extern "C" __attribute__((visibility("default"))) int rc_hs_program_launch(unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, size_t smem, const uint64_t *args, int nargs) {
	if (nargs != 4) {
		return -2;
	}
	const bool trapped = rc_host::launch_smem(dim3(gx, gy, gz), dim3(bx, by, bz), smem, [&] {
		%[1]s((rc_control_block *)(uintptr_t)args[0], (rc_ring_header *)(uintptr_t)args[1],
			(rc_ring_header *)(uintptr_t)args[2], (%[2]s *)(uintptr_t)args[3]);
	});
	return trapped ? -5 : 0;
}

extern "C" __attribute__((visibility("default"))) const char *rc_hs_program_entry(void) { return %[3]q; }

// The launch of the program's persistent grid: its blocks run at once.
extern "C" __attribute__((visibility("default"))) int rc_hs_grid_launch(unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, size_t smem, const uint64_t *args, int nargs) {
	if (nargs != 4 || gy != 1 || gz != 1) {
		return -2;
	}
	const bool trapped = rc_host::launch_grid(gx, dim3(bx, by, bz), smem, [&] {
		%[4]s((rc_control_block *)(uintptr_t)args[0], (rc_grid_header *)(uintptr_t)args[1],
			(rc_grid_words *)(uintptr_t)args[2], (unsigned char *)(uintptr_t)args[3]);
	});
	return trapped ? -5 : 0;
}

extern "C" __attribute__((visibility("default"))) const char *rc_hs_grid_entry(void) { return %[5]q; }

// The loads of mapped memory this program's launches made (host_shim.h).
extern "C" __attribute__((visibility("default"))) unsigned long long rc_hs_mapped_reads(void) {
	return rc_host::mapped_reads.load(std::memory_order_relaxed);
}
`, p.Entry, stateName, p.Entry, p.GridEntry, p.GridEntry)
	return p, nil
}
