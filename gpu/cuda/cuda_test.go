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
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// TestWorkerRunsOnOneThread checks Context's mechanics without a device:
// setup, every Do from many goroutines, and teardown run on one OS thread.
func TestWorkerRunsOnOneThread(t *testing.T) {
	var setupTID, teardownTID int
	w, err := startWorker(
		func() error { setupTID = gettid(); return nil },
		func() error { teardownTID = gettid(); return nil },
	)
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg      sync.WaitGroup
		ran     atomic.Int64
		counter int // only touched on the worker: no race if Do serialises
		other   atomic.Int64
	)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if err := w.do(func() error {
					if tid := gettid(); tid != setupTID {
						other.Add(1)
					}
					counter++
					ran.Add(1)
					return nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 16*200 || counter != 16*200 {
		t.Fatalf("ran %d, counter %d, want %d", ran.Load(), counter, 16*200)
	}
	if other.Load() != 0 {
		t.Fatalf("%d calls ran off the worker's thread", other.Load())
	}
	if setupTID == 0 || teardownTID != setupTID {
		t.Fatalf("setup on thread %d, teardown on %d", setupTID, teardownTID)
	}
}

func TestWorkerErrorsAndPanics(t *testing.T) {
	w, err := startWorker(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sentinel := errors.New("boom")
	if err := w.do(func() error { return sentinel }); err != sentinel {
		t.Fatalf("Do returned %v, want the function's error", err)
	}
	err = w.do(func() error { panic("kernel table corrupt") })
	if err == nil || !strings.Contains(err.Error(), "kernel table corrupt") {
		t.Fatalf("Do of a panicking function returned %v", err)
	}
	// The worker survives a panic.
	if err := w.do(func() error { return nil }); err != nil {
		t.Fatalf("Do after a panic: %v", err)
	}
	// A Do inside a Do runs inline instead of deadlocking.
	outer := gettid()
	var inner int
	err = w.do(func() error {
		outer = gettid()
		return w.do(func() error { inner = gettid(); return nil })
	})
	if err != nil || inner != outer {
		t.Fatalf("nested Do: err %v, inner thread %d, outer %d", err, inner, outer)
	}
	if err := w.do(nil); err == nil {
		t.Fatal("Do(nil) returned nil")
	}
	if err := w.do(func() error { return w.close() }); err == nil {
		t.Fatal("Close from inside Do returned nil")
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	if err := w.close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	called := false
	if err := w.do(func() error { called = true; return nil }); !errors.Is(err, ErrContextClosed) || called {
		t.Fatalf("Do after Close: %v (ran: %v)", err, called)
	}
}

func TestWorkerSetupAndTeardownFailures(t *testing.T) {
	sentinel := errors.New("no primary context")
	if w, err := startWorker(func() error { return sentinel }, nil); w != nil || err != sentinel {
		t.Fatalf("startWorker with failing setup: %v, %v", w, err)
	}
	if w, err := startWorker(func() error { panic("setup") }, nil); w != nil || err == nil {
		t.Fatalf("startWorker with panicking setup: %v, %v", w, err)
	}
	w, err := startWorker(nil, func() error { return sentinel })
	if err != nil {
		t.Fatal(err)
	}
	if err := w.close(); err != sentinel {
		t.Fatalf("Close returned %v, want teardown's error", err)
	}
}

// TestPollServesOthersDuringLongDo runs a long Do (a ring kernel's loop)
// that serves the Do calls of other goroutines through poll.
func TestPollServesOthersDuringLongDo(t *testing.T) {
	w, err := startWorker(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := w.poll(); n != 0 {
		t.Fatalf("poll off the worker thread ran %d", n)
	}
	const others = 50
	served := make(chan int, others)
	stop := make(chan struct{})
	loopDone := make(chan error, 1)
	loopTID := make(chan int, 1)
	go func() {
		loopDone <- w.do(func() error {
			loopTID <- gettid()
			for {
				w.poll()
				select {
				case <-stop:
					return nil
				default:
				}
				runtime.Gosched()
			}
		})
	}()
	tid := <-loopTID
	var wg sync.WaitGroup
	for i := 0; i < others; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.do(func() error { served <- gettid(); return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-loopDone; err != nil {
		t.Fatal(err)
	}
	close(served)
	n := 0
	for got := range served {
		n++
		if got != tid {
			t.Fatalf("served on thread %d, loop on %d", got, tid)
		}
	}
	if n != others {
		t.Fatalf("served %d of %d", n, others)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
}

// TestCloseConcurrentWithDo races Close against Do: every Do either runs
// or returns ErrContextClosed, and nothing hangs.
func TestCloseConcurrentWithDo(t *testing.T) {
	w, err := startWorker(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if err := w.do(func() error { return nil }); err != nil && !errors.Is(err, ErrContextClosed) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = w.close() }()
	wg.Wait()
	if err := w.do(func() error { return nil }); !errors.Is(err, ErrContextClosed) {
		t.Fatalf("Do after Close: %v", err)
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

// BenchmarkWorkerDo measures one Do round trip (the per-batch hand-off
// cost of Context).
func BenchmarkWorkerDo(b *testing.B) {
	w, err := startWorker(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = w.close() }()
	fn := func() error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := w.do(fn); err != nil {
			b.Fatal(err)
		}
	}
}
