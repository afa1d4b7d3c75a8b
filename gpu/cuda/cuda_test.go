package cuda

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv("RINGACTOR_CUDA_TEST_HELPER") == "probe" {
		// Subprocess of TestProbeHonoursEnvironment: report what the
		// process-wide loader does with this process's environment.
		r := Probe()
		fmt.Printf("loaded=%v\nerr=%v\nnotavailable=%v\n", r.LibraryLoaded, r.Err, errors.Is(r.Err, gpu.ErrDeviceNotAvailable))
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func TestProbeMissingLibrary(t *testing.T) {
	const path = "/nonexistent/libcuda.so.1"
	r := newLoader(path).probe()
	if r.LibraryLoaded || r.LibraryPath != "" || len(r.Devices) != 0 {
		t.Fatalf("probe of %s: %+v", path, r)
	}
	if !errors.Is(r.Err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("Err = %v, want gpu.ErrDeviceNotAvailable", r.Err)
	}
	var de *gpu.DeviceError
	if !errors.As(r.Err, &de) || de.Kind != gpu.DeviceUnavailable || de.Backend != "cuda" {
		t.Fatalf("Err = %#v, want a cuda DeviceUnavailable *gpu.DeviceError", r.Err)
	}
	if !strings.Contains(de.Reason, path) {
		t.Fatalf("Reason %q does not name %s", de.Reason, path)
	}
	t.Logf("Probe with %s: %v", path, r)

	// Load and NewContext give the same error.
	l := newLoader(path)
	if _, err := l.initialized(); !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("initialized: %v", err)
	}
	if c, err := l.newContext(0); c != nil || !errors.Is(err, gpu.ErrDeviceNotAvailable) {
		t.Fatalf("newContext: %v, %v", c, err)
	}
}

func TestLibraryPathEnvironment(t *testing.T) {
	t.Setenv(LibraryEnv, "")
	if got := libraryPath(); got != DefaultLibrary {
		t.Fatalf("libraryPath() = %q, want %q", got, DefaultLibrary)
	}
	t.Setenv(LibraryEnv, "/opt/odd/libcuda.so.1")
	if got := libraryPath(); got != "/opt/odd/libcuda.so.1" {
		t.Fatalf("libraryPath() = %q", got)
	}
	if l := newLoader(""); l.path != DefaultLibrary {
		t.Fatalf("newLoader(\"\").path = %q", l.path)
	}
}

// TestProbeHonoursEnvironment runs the process-wide Probe in a subprocess
// whose RINGACTOR_CUDA_LIBRARY names a missing file.
func TestProbeHonoursEnvironment(t *testing.T) {
	const path = "/nonexistent/libcuda.so.1"
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// GORACE: the race detector otherwise sleeps a second at exit.
	cmd.Env = append(os.Environ(), "RINGACTOR_CUDA_TEST_HELPER=probe", LibraryEnv+"="+path, "GORACE=atexit_sleep_ms=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("subprocess: %v\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{"loaded=false", "notavailable=true", path} {
		if !strings.Contains(s, want) {
			t.Fatalf("subprocess output lacks %q:\n%s", want, s)
		}
	}
	t.Logf("subprocess:\n%s", s)
}

func TestDriverErrorClassification(t *testing.T) {
	cases := []struct {
		code      Result
		kind      gpu.DeviceKind
		oom, nav  bool
		transient bool
	}{
		{ErrOutOfMemory, gpu.DeviceOutOfMemory, true, false, false},
		{ErrNoDevice, gpu.DeviceUnavailable, false, true, false},
		{ErrSystemDriverMismatch, gpu.DeviceUnavailable, false, true, false},
		{ErrNotInitialized, gpu.DeviceUnavailable, false, true, false},
		{ErrNotReady, gpu.DeviceBusyTransient, false, false, true},
		{ErrLaunchFailed, gpu.DeviceFailed, false, false, false},
		{ErrIllegalAddress, gpu.DeviceFailed, false, false, false},
		{ErrInvalidPTX, gpu.DeviceFailed, false, false, false},
	}
	for _, c := range cases {
		e := &DriverError{Call: "cuX", Code: int(c.code), Name: "N", Message: "m"}
		var err error = e
		if e.Kind() != c.kind || errors.Is(err, gpu.ErrOutOfMemory) != c.oom ||
			errors.Is(err, gpu.ErrDeviceNotAvailable) != c.nav || gpu.IsTransient(err) != c.transient ||
			!errors.Is(err, gpu.ErrDevice) || !errors.Is(err, gpu.ErrCompute) || errors.Is(err, gpu.ErrMemory) {
			t.Errorf("code %d: kind %v, classification wrong", c.code, e.Kind())
		}
		de := e.DeviceError(3)
		if de.Kind != c.kind || de.Device != 3 || de.Backend != BackendName || !errors.Is(de, e) {
			t.Errorf("code %d: DeviceError = %+v", c.code, de)
		}
	}
	e := &DriverError{Call: "cuMemAlloc_v2", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Message: "out of memory"}
	if got, want := e.Error(), "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if got, want := (&DriverError{Call: "cuX", Code: 12345}).Error(), "cuX: CUresult (12345)"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestKernelArgs(t *testing.T) {
	for _, c := range []struct {
		got, want uint64
	}{
		{ArgF32(1), 0x3f800000},
		{ArgF64(1), 0x3ff0000000000000},
		{ArgI32(-1), 0xffffffff},
		{ArgI64(-1), 0xffffffffffffffff},
		{ArgU32(7), 7},
		{ArgU64(1 << 40), 1 << 40},
		{ArgPtr(0x7f0000001000), 0x7f0000001000},
	} {
		if c.got != c.want {
			t.Errorf("got %#x, want %#x", c.got, c.want)
		}
	}
	if got := (ComputeCapability{9, 0}).String(); got != "9.0" {
		t.Fatalf("ComputeCapability.String() = %q", got)
	}
	if got := (Report{DriverVersion: 12020}).DriverVersionString(); got != "12.2" {
		t.Fatalf("DriverVersionString() = %q", got)
	}
}

// TestStubMatchesDriver keeps the no-cgo stub's Driver API identical to the
// cgo one, so code using the binding builds everywhere.
func TestStubMatchesDriver(t *testing.T) {
	cgo := driverMethods(t, "driver.go")
	stub := driverMethods(t, "driver_stub.go")
	if !slices.Equal(cgo, stub) {
		t.Fatalf("Driver methods differ:\ncgo:  %v\nstub: %v", cgo, stub)
	}
	if len(cgo) < 30 {
		t.Fatalf("only %d Driver methods found", len(cgo))
	}
}

func driverMethods(t *testing.T, file string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || !fn.Name.IsExported() {
			continue
		}
		var sig strings.Builder
		if err := printer.Fprint(&sig, fset, fn.Type); err != nil {
			t.Fatal(err)
		}
		out = append(out, fn.Name.Name+" "+sig.String())
	}
	slices.Sort(out)
	return out
}
