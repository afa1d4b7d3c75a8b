package ring

import (
	"testing"
	"time"
	"unsafe"
)

func TestControlBlockLatencyAndCounters(t *testing.T) {
	cb := NewControlBlock()
	if s := cb.Snapshot(); s.Open || s.LatencyMin != 0 || s.LatencyAvg != 0 || !s.LastActivity.IsZero() {
		t.Fatalf("fresh block: %+v", s)
	}
	cb.Open()
	cb.RecordMessage(30*time.Microsecond, false, 1000)
	cb.RecordMessage(10*time.Microsecond, true, 2000)
	cb.RecordMessage(20*time.Microsecond, false, 3000)
	s := cb.Snapshot()
	if !s.Open || s.Processed != 3 || s.Errors != 1 {
		t.Fatalf("%+v", s)
	}
	if s.LatencyMin != 10*time.Microsecond || s.LatencyMax != 30*time.Microsecond || s.LatencyAvg != 20*time.Microsecond {
		t.Fatalf("latency %v/%v/%v", s.LatencyMin, s.LatencyAvg, s.LatencyMax)
	}
	if s.LastActivity.UnixNano() != 3000 {
		t.Fatalf("heartbeat %v", s.LastActivity)
	}
	cb.Close()
	if cb.IsOpen() {
		t.Fatal("gate still open")
	}
}

// Every control word sits on its own cache line: the layout the CUDA
// backend maps into device memory relies on it.
func TestControlBlockLayout(t *testing.T) {
	var cb ControlBlock
	if unsafe.Sizeof(cb)%CacheLine != 0 {
		t.Fatalf("size %d is not a multiple of %d", unsafe.Sizeof(cb), CacheLine)
	}
	if off := unsafe.Offsetof(cb.Terminate) - unsafe.Offsetof(cb.Gate); off != CacheLine {
		t.Fatalf("gate and terminate %d bytes apart", off)
	}
	if unsafe.Offsetof(cb.Restarts) != 11*CacheLine {
		t.Fatalf("restarts at %d", unsafe.Offsetof(cb.Restarts))
	}
}
