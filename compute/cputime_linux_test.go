package compute

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD: the calling thread's usage.
const rusageThread = 1

// threadCPU is the CPU time (user and system) the calling thread has used.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter measures a benchmark loop's CPU time on its own thread, which a
// loaded machine's preemptions do not inflate as they do wall time: start
// locks the goroutine to its thread and reads its clock, report reports
// "cpu-ns/<unit>" over n units of work.
type cpuMeter struct{ start time.Duration }

func startCPU() *cpuMeter {
	runtime.LockOSThread()
	return &cpuMeter{start: threadCPU()}
}

func (m *cpuMeter) report(b *testing.B, n int, unit string) {
	used := threadCPU() - m.start
	runtime.UnlockOSThread()
	if n > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(n), "cpu-ns/"+unit)
	}
}
