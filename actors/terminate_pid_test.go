package actors

import (
	"errors"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/lifecycle"
)

// TestTerminateLeavesNoPID: once Terminate returns, the kernel's actor has
// left the process registry, so a command to its PID is a dead letter,
// answered at once. Terminate used to return just before the actor was told
// to stop: a command sent in that moment reached the mailbox of an actor
// about to stop, which dropped it unanswered, and the sender waited out its
// whole timeout (TestScenarios/lifecycle took 10 s and failed under load,
// its "command id=k event=fault" after "terminate" seeing a future timeout
// instead of ErrDeadLetter).
func TestTerminateLeavesNoPID(t *testing.T) {
	rt := newTestRuntime(t)
	ctx := testCtx(t)
	root := rt.ActorSystem().Root
	for i := range 200 {
		k := mustLaunch(t, rt, NewStatelessKernel("gone", echoNum), true)
		pid := k.PID()
		if err := k.Terminate(ctx); err != nil {
			t.Fatal(err)
		}
		if _, ok := rt.ActorSystem().ProcessRegistry.Get(pid); ok {
			t.Fatalf("run %d: the PID is still registered after Terminate returned", i)
		}
		_, err := root.RequestFuture(pid, &lifecycle.Command{Event: lifecycle.Fault}, hangWait(t)).Result()
		if !errors.Is(err, actor.ErrDeadLetter) {
			t.Fatalf("run %d: a command after Terminate: %v, want ErrDeadLetter", i, err)
		}
	}
}
