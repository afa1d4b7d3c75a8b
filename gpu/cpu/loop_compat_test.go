package cpu

import (
	"testing"

	"github.com/ringactor/ringactor/gpu/ring"
)

// TestDeprecatedLoopAliases is a compile check: code written against the
// loop's old home in gpu/cpu keeps compiling and runs the same loop.
func TestDeprecatedLoopAliases(t *testing.T) {
	cb := ring.NewControlBlock()
	var sig *Signal = NewSignal()
	w := WaitStrategy{Spins: 1, Yields: 2}
	if DefaultWaitStrategy != ring.DefaultWaitStrategy || w.Spins != 1 || w.Yields != 2 {
		t.Fatal("wait strategy")
	}
	l := &Loop{Control: cb, Wake: sig, Wait: w,
		Poll:  func(bool) (bool, error) { return false, nil },
		Ready: func() bool { return false }}
	done := make(chan error, 1)
	go func() { done <- l.Run() }()
	cb.Terminate.Store(uint64(ring.TerminateDrain))
	sig.Notify()
	if err := <-done; err != nil || cb.TerminatedAck.Load() != ring.Terminated {
		t.Fatalf("Run = %v, ack %d", err, cb.TerminatedAck.Load())
	}
}
