package compute

import (
	"sync"

	"github.com/ringactor/ringactor/gpu"
)

// execState is the memory one Execute (or ExecuteBatch) call needs for
// itself: its options, its resolved scalars, its input shapes and the
// one-item lists handed to the backend. It is pooled so that an Execute of a
// built-in kernel allocates nothing; nothing of it may be kept past the call
// (backends do not keep their arguments).
type execState struct {
	opts    execOptions
	scalars [8]float64
	shapes  [4]gpu.Shape
	items   [1][]*gpu.UnifiedBuffer
	outs    [1]*gpu.UnifiedBuffer
}

// execStates recycles execStates.
var execStates = sync.Pool{New: func() any { return new(execState) }}

// getExecState returns a cleared execState.
func getExecState() *execState { return execStates.Get().(*execState) }

// putExecState clears st, so that it holds on to no buffer or option, and
// returns it to the pool.
func putExecState(st *execState) {
	*st = execState{}
	execStates.Put(st)
}
