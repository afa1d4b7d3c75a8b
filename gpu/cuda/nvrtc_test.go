package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ringactor/ringactor/gpu"
)

// squareSource follows the calling convention of source kernels: one
// input, the output, one scalar, the count.
const squareSource = `
extern "C" __global__ void rc_test_square(const float *x, float *y, double scale, unsigned long long n) {
	unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
	if (i < n) {
		y[i] = x[i] * x[i] * (float)scale;
	}
}
`

// needNVRTC returns the process's NVRTC, or skips the test when none loads.
func needNVRTC(t *testing.T) *NVRTC {
	t.Helper()
	nv, err := LoadNVRTC()
	if err != nil {
		t.Skipf("NVRTC cannot be loaded, so CUDA C sources cannot be compiled here (install the CUDA toolkit, gpu/cuda/kernels/INSTALL.txt): %v", err)
	}
	return nv
}

func TestCompileValidKernel(t *testing.T) {
	nv := needNVRTC(t)
	major, minor := nv.Version()
	t.Logf("NVRTC %d.%d from %s", major, minor, nv.Path())
	if major < 11 || nv.Path() == "" {
		t.Fatalf("NVRTC %d.%d at %q", major, minor, nv.Path())
	}
	c, err := Compile(context.Background(), Source{Name: "square.cu", Code: squareSource, NameExpressions: []string{"rc_test_square"}})
	if err != nil {
		t.Fatal(err)
	}
	ptx := string(c.PTX)
	for _, re := range []string{`(?m)^\.visible \.entry rc_test_square\(`, `(?m)^\.target\s+sm_70\b`, `(?m)^\.version\s+\d+\.\d+`, `(?m)^\.address_size 64`} {
		if !regexp.MustCompile(re).MatchString(ptx) {
			t.Errorf("PTX does not match %s:\n%s", re, ptx)
		}
	}
	if strings.IndexByte(ptx, 0) >= 0 {
		t.Error("PTX contains a NUL byte")
	}
	if got := c.LoweredNames["rc_test_square"]; got != "rc_test_square" {
		t.Errorf("lowered name of an extern \"C\" entry = %q", got)
	}
	want := []string{"--gpu-architecture=compute_70", "--std=c++17", "--device-as-default-execution-space"}
	if !slices.Equal(c.Options, want) {
		t.Errorf("Options = %q, want %q", c.Options, want)
	}
	if err := checkEntry(c.PTX, "rc_test_square", 1, 1); err != nil {
		t.Error(err)
	}
}

func TestCompileOptions(t *testing.T) {
	for _, tc := range []struct {
		src  Source
		want []string
	}{
		{Source{}, []string{"--gpu-architecture=compute_70", "--std=c++17", "--device-as-default-execution-space"}},
		{Source{Arch: "compute_80", Options: []string{"-DN=4"}}, []string{"--gpu-architecture=compute_80", "--std=c++17", "--device-as-default-execution-space", "-DN=4"}},
		{Source{Arch: "compute_80", Options: []string{"-arch=compute_90", "--std=c++14", "-default-device"}}, []string{"-arch=compute_90", "--std=c++14", "-default-device"}},
		{Source{Options: []string{"--gpu-architecture", "compute_75"}}, []string{"--std=c++17", "--device-as-default-execution-space", "--gpu-architecture", "compute_75"}},
	} {
		if got := tc.src.CompileOptions(); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: CompileOptions() = %q, want %q", tc.src, got, tc.want)
		}
	}
}

// TestCompiledPTXAssembles runs ptxas on NVRTC's PTX for each target GPU,
// for the default architecture and for compute_80.
func TestCompiledPTXAssembles(t *testing.T) {
	needNVRTC(t)
	ptxas, err := exec.LookPath("ptxas")
	if err != nil {
		t.Skip("ptxas not found: install the CUDA toolkit (gpu/cuda/kernels/INSTALL.txt) to assemble the PTX")
	}
	for _, tc := range []struct {
		arch    string
		targets []string
	}{
		{"", []string{"sm_70", "sm_80", "sm_90"}},
		{"compute_80", []string{"sm_80", "sm_90"}},
	} {
		c, err := Compile(context.Background(), Source{Name: "square.cu", Code: squareSource, Arch: tc.arch})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "square.ptx")
		if err := os.WriteFile(file, c.PTX, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, sm := range tc.targets {
			cmd := exec.Command(ptxas, "-arch="+sm, "-o", os.DevNull, file)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("arch %q: %v: %v\n%s", tc.arch, cmd.Args, err, b)
			}
		}
	}
}

func TestCompileSyntaxError(t *testing.T) {
	needNVRTC(t)
	code := "extern \"C\" __global__ void broken(float *y) {\n\ty[0] = 1.0f\n\tint = ;\n}\n"
	c, err := Compile(context.Background(), Source{Name: "broken.cu", Code: code})
	if c != nil || err == nil {
		t.Fatalf("Compile = %v, %v; want a compilation error", c, err)
	}
	var ce *gpu.CompilationError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T %v, want *gpu.CompilationError", err, err)
	}
	if !errors.Is(err, gpu.ErrCompilation) || !errors.Is(err, gpu.ErrCompute) || gpu.IsTransient(err) {
		t.Errorf("%v: not a permanent gpu.ErrCompilation", err)
	}
	if ce.Kernel != "broken.cu" {
		t.Errorf("Kernel = %q", ce.Kernel)
	}
	if !regexp.MustCompile(`broken\.cu\(3\): error`).MatchString(ce.Log) {
		t.Errorf("Log does not report line 3:\n%s", ce.Log)
	}
	var ne *NVRTCError
	if !errors.As(err, &ne) || ne.Code != nvrtcErrorCompilation || ne.Call != "nvrtcCompileProgram" || ne.Message != "NVRTC_ERROR_COMPILATION" {
		t.Errorf("cause = %#v", ne)
	}
	if !strings.Contains(err.Error(), ce.Log) {
		t.Errorf("Error() omits the log: %v", err)
	}
	t.Logf("%v", err)
}

func TestCompileFailuresOtherThanSyntax(t *testing.T) {
	needNVRTC(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		src     Source
		logHas  string
		errCode int
	}{
		{"unknown option", Source{Code: squareSource, Options: []string{"--no-such-option"}}, "--no-such-option", 5},
		{"unknown architecture", Source{Code: squareSource, Arch: "compute_1"}, "--gpu-architecture", 5},
		{"unknown name expression", Source{Code: squareSource, NameExpressions: []string{"no_such_kernel"}}, "no_such_kernel", nvrtcErrorCompilation},
		{"missing header", Source{Code: "#include \"absent.cuh\"\n" + squareSource}, "absent.cuh", nvrtcErrorCompilation},
	} {
		_, err := Compile(ctx, tc.src)
		var ce *gpu.CompilationError
		var ne *NVRTCError
		if !errors.As(err, &ce) || !errors.Is(err, gpu.ErrCompilation) || !errors.As(err, &ne) {
			t.Errorf("%s: %T %v, want *gpu.CompilationError", tc.name, err, err)
			continue
		}
		if ne.Code != tc.errCode || !strings.Contains(ce.Log, tc.logHas) {
			t.Errorf("%s: code %d (want %d), log %q (want %q in it)", tc.name, ne.Code, tc.errCode, ce.Log, tc.logHas)
		}
	}
}

func TestCompileHeadersAndTemplates(t *testing.T) {
	needNVRTC(t)
	src := Source{
		Name:    "tmpl.cu",
		Headers: map[string]string{"op.cuh": "template <typename T> T twice(T v) { return v + v; }\n"},
		Code: `#include "op.cuh"
template <typename T>
__global__ void dbl(const T *x, T *y, unsigned long long n) {
	unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
	if (i < n) y[i] = twice(x[i]);
}
`,
		NameExpressions: []string{"dbl<float>", "dbl<double>"},
	}
	c, err := Compile(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.LoweredNames) != 2 {
		t.Fatalf("LoweredNames = %v", c.LoweredNames)
	}
	for expr, low := range c.LoweredNames {
		if low == expr || !strings.HasPrefix(low, "_Z") {
			t.Errorf("%s lowered to %q, want a mangled name", expr, low)
		}
		if !strings.Contains(string(c.PTX), ".entry "+low+"(") {
			t.Errorf("PTX lacks .entry %s", low)
		}
	}
}

func TestCompileArgumentErrors(t *testing.T) {
	nv := needNVRTC(t)
	for _, src := range []Source{
		{},
		{Code: "  \n"},
		{Code: "__global__ void f() {}\x00"},
		{Code: squareSource, Options: []string{""}},
		{Code: squareSource, Headers: map[string]string{"": "x"}},
		{Code: squareSource, NameExpressions: []string{" "}},
	} {
		_, err := nv.Compile(context.Background(), src)
		var ae *gpu.ArgumentError
		if !errors.As(err, &ae) || !errors.Is(err, gpu.ErrArgument) {
			t.Errorf("%+v: %v, want *gpu.ArgumentError", src, err)
		}
	}
}

func TestCompileContext(t *testing.T) {
	nv := needNVRTC(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := nv.Compile(ctx, Source{Code: squareSource}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled before: %v", err)
	}

	// A caller waiting for another compilation gives up when its context
	// ends (whether it sees that before or while waiting).
	nv.sem <- struct{}{}
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := nv.Compile(ctx, Source{Code: squareSource})
		done <- err
	}()
	cancel()
	err := <-done
	<-nv.sem
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled while waiting: %v", err)
	}
	if !strings.Contains(err.Error(), "source.cu") {
		t.Errorf("error does not name the source: %v", err)
	}
	// The semaphore was not leaked.
	if _, err := nv.Compile(context.Background(), Source{Code: squareSource}); err != nil {
		t.Fatal(err)
	}
}

func TestCompileConcurrently(t *testing.T) {
	needNVRTC(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := Source{Name: fmt.Sprintf("k%d.cu", i), Code: squareSource, Options: []string{fmt.Sprintf("-DK=%d", i)}}
			if i%2 == 1 {
				src.Code += "int broken = ;\n"
			}
			_, errs[i] = Compile(context.Background(), src)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i%2 == 1) != errors.Is(err, gpu.ErrCompilation) {
			t.Errorf("compilation %d: %v", i, err)
		}
	}
}

// TestNVRTCLibrariesEnvironment pins the candidates: CUDA 13's soname first
// (a CUDA 13 machine has no other), then 12, 11.2 and the unversioned link.
func TestNVRTCLibrariesEnvironment(t *testing.T) {
	t.Setenv(NVRTCLibraryEnv, "")
	if got := NVRTCLibraries(); !slices.Equal(got, []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"}) {
		t.Fatalf("NVRTCLibraries() = %q", got)
	}
	t.Setenv(NVRTCLibraryEnv, "/opt/odd/libnvrtc.so")
	if got := NVRTCLibraries(); !slices.Equal(got, []string{"/opt/odd/libnvrtc.so"}) {
		t.Fatalf("NVRTCLibraries() = %q", got)
	}
}

// checkNoNVRTC checks err is the typed error of a missing NVRTC naming each
// of paths.
func checkNoNVRTC(t *testing.T, err error, paths ...string) {
	t.Helper()
	var de *gpu.DeviceError
	if !errors.As(err, &de) || de.Kind != gpu.DeviceUnavailable || de.Backend != BackendName {
		t.Fatalf("%T %v, want a cuda DeviceUnavailable *gpu.DeviceError", err, err)
	}
	if !errors.Is(err, ErrNoNVRTC) || !errors.Is(err, gpu.ErrDeviceNotAvailable) || gpu.IsTransient(err) {
		t.Fatalf("%v: not ErrNoNVRTC and gpu.ErrDeviceNotAvailable", err)
	}
	for _, p := range paths {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%v does not name %s", err, p)
		}
	}
}

func TestNVRTCMissingLibrary(t *testing.T) {
	const missing = "/nonexistent/libnvrtc.so.11.2"
	t.Setenv(NVRTCLibraryEnv, missing)
	l := &nvrtcLoader{candidates: NVRTCLibraries()}
	nv, err := l.load()
	if nv != nil {
		t.Fatalf("loaded %s", nv.Path())
	}
	checkNoNVRTC(t, err, missing)
	if _, again := l.load(); again != err {
		t.Fatalf("second load: %v, want the first error", again)
	}
	t.Logf("%v", err)

	// A library that loads but is not NVRTC lacks the entry points; the
	// next candidate is tried.
	l = &nvrtcLoader{candidates: []string{"libc.so.6", missing}}
	_, err = l.load()
	checkNoNVRTC(t, err, "libc.so.6", "nvrtcGetErrorString", missing)
}

// TestNVRTCEnvironmentProcessWide runs the process-wide loader in a
// subprocess whose RINGACTOR_NVRTC_LIBRARY names a missing file: Compile
// and SourceKernel report the typed error, and a source kernel with a CPU
// fallback is registered CPU-only.
func TestNVRTCEnvironmentProcessWide(t *testing.T) {
	const missing = "/nonexistent/libnvrtc.so"
	cmd := exec.Command(os.Args[0], "-test.run=^TestNVRTCHelperProcess$", "-test.v")
	// GORACE: the race detector otherwise sleeps a second at exit.
	cmd.Env = append(os.Environ(), "RINGACTOR_NVRTC_TEST_HELPER=1", NVRTCLibraryEnv+"="+missing, "GORACE=atexit_sleep_ms=0")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestNVRTCHelperProcess") {
		t.Fatalf("subprocess: %v\n%s", err, out)
	}
}

// TestNVRTCHelperProcess is the subprocess of
// TestNVRTCEnvironmentProcessWide; it does nothing in a normal run.
func TestNVRTCHelperProcess(t *testing.T) {
	if os.Getenv("RINGACTOR_NVRTC_TEST_HELPER") != "1" {
		return
	}
	missing := os.Getenv(NVRTCLibraryEnv)
	_, err := Compile(context.Background(), Source{Code: squareSource})
	checkNoNVRTC(t, err, missing)
	if _, err2 := LoadNVRTC(); err2 != err {
		t.Errorf("LoadNVRTC: %v, want the same error", err2)
	}
	spec := squareSpec()
	if _, err := SourceKernel(context.Background(), NewBackend(), spec); err == nil {
		t.Error("SourceKernel without NVRTC or fallback succeeded")
	} else {
		checkNoNVRTC(t, err, missing)
	}
	spec.CPU = squareCPU
	ks, err := SourceKernel(context.Background(), NewBackend(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if ks.CPU == nil || len(ks.Device) != 0 || !strings.Contains(ks.Description, "NVRTC not available") {
		t.Errorf("fallback spec: CPU %v, Device %v, Description %q", ks.CPU != nil, ks.Device, ks.Description)
	}
	if err := ks.Validate(); err != nil {
		t.Error(err)
	}
}
