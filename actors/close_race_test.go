package actors

import (
	"errors"
	"sync"
	"testing"

	"github.com/ringactor/ringactor/lifecycle"
)

// TestCloseBesideTerminate: a kernel terminated by its owner while the
// runtime closes (a cluster activation passivating as its member closes) is
// not an error of Close, whichever gets there first.
func TestCloseBesideTerminate(t *testing.T) {
	for i := range 100 {
		rt, err := NewRuntime(WithLogger(DiscardLogger()), WithTelemetry(false))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := hangCtx(t)
		ks := make([]*Kernel[num, num], 4)
		for j := range ks {
			if ks[j], err = Launch(ctx, rt, NewStatelessKernel(string(rune('a'+j)), echoN)); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for _, k := range ks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// The loser of the race finds the kernel terminated: a
				// second Terminate's typed error.
				if err := k.Terminate(ctx); err != nil && !errors.Is(err, lifecycle.ErrTransition) && !errors.Is(err, ErrTerminated) && !errors.Is(err, ErrRuntimeClosed) {
					t.Errorf("round %d: Terminate: %v", i, err)
				}
			}()
		}
		if err := rt.Close(ctx); err != nil {
			t.Errorf("round %d: Close beside Terminate: %v", i, err)
		}
		wg.Wait()
		cancel()
		if t.Failed() {
			return
		}
	}
}
