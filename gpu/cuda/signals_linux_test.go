//go:build linux && cgo && (amd64 || arm64)

package cuda

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"unsafe"
)

// kernelSigaction is the kernel's struct sigaction on linux/amd64 and
// arm64 (rt_sigaction with an 8-byte mask).
type kernelSigaction struct {
	handler, flags, restorer, mask uint64
}

const (
	saSiginfo = 0x4
	saOnstack = 0x08000000
)

// sigactionOf reads sig's action with rt_sigaction.
func sigactionOf(t *testing.T, sig syscall.Signal) kernelSigaction {
	t.Helper()
	var a kernelSigaction
	if _, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), 0, uintptr(unsafe.Pointer(&a)), 8, 0, 0); e != 0 {
		t.Fatalf("rt_sigaction(%v): %v", sig, e)
	}
	return a
}

// TestNVRTCKeepsGoSignalHandlers: NVRTC 11's nvrtcCompileProgram puts
// back the SIGINT and SIGTERM handlers it replaced with signal(), without
// SA_ONSTACK and SA_SIGINFO; a SIGTERM then killed the process ("non-Go
// code set up signal handler without SA_ONSTACK flag"), as it did a
// cluster member with simulated devices (their ring programs compile with
// NVRTC too) stopped by SIGTERM. After a compilation Go's handlers keep
// their flags.
func TestNVRTCKeepsGoSignalHandlers(t *testing.T) {
	needNVRTC(t)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(ch)
	before := map[syscall.Signal]kernelSigaction{}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		before[sig] = sigactionOf(t, sig)
		if before[sig].flags&saOnstack == 0 {
			t.Fatalf("%v before compiling: flags %#x", sig, before[sig].flags)
		}
	}
	if _, err := Compile(context.Background(), Source{Name: "square.cu", Code: squareSource, NameExpressions: []string{"rc_test_square"}}); err != nil {
		t.Fatal(err)
	}
	for sig, b := range before {
		a := sigactionOf(t, sig)
		if a.handler != b.handler || a.flags&(saOnstack|saSiginfo) != saOnstack|saSiginfo {
			t.Errorf("%v after an NVRTC compilation: handler %#x flags %#x, before %#x flags %#x", sig, a.handler, a.flags, b.handler, b.flags)
		}
	}
}
