package actors

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// Orchestrator is the runtime's root actor: it spawns every kernel actor as
// its child, so that its supervisor strategy (package supervision) decides
// what happens when a kernel fails. (Compute executions are not its
// messages: the runtime's compute orchestrator, package compute, runs them
// without a hop through an actor, which would cost microseconds and
// serialise every caller.)
type Orchestrator struct {
	rt      *Runtime
	waiters []chan struct{} // closed when no kernel actor is left
}

// awaitChildren asks the orchestrator to close done once it has no kernel
// actor left, so that stopping it sends nothing to actors already gone.
type awaitChildren struct{ done chan struct{} }

// spawnRequest asks the orchestrator to spawn a kernel actor.
type spawnRequest struct {
	name  string
	props *actor.Props
	done  chan spawnResult
}

type spawnResult struct {
	pid *actor.PID
	err error
}

// Receive implements actor.Actor.
func (o *Orchestrator) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *spawnRequest:
		pid, err := c.SpawnNamed(m.props, m.name)
		m.done <- spawnResult{pid: pid, err: err}
	case *awaitChildren:
		o.waiters = append(o.waiters, m.done)
		o.releaseWaiters(c)
	case *actor.Terminated:
		o.rt.logger.Debug("ringactor: kernel actor stopped", "actor", m.Who.Id)
		o.releaseWaiters(c)
	}
}

// orchestratorRef is the runtime's handle on its root actor.
type orchestratorRef struct {
	rt  *Runtime
	pid *actor.PID
}

// spawn asks the orchestrator to spawn a child and waits for it. Once asked,
// the spawn is not abandoned: the orchestrator never blocks, and an abandoned
// spawn would leave a kernel actor nobody knows about.
func (o *orchestratorRef) spawn(ctx context.Context, id string, props *actor.Props) (*actor.PID, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	done := make(chan spawnResult, 1)
	o.rt.system.Root.Send(o.pid, &spawnRequest{name: "kernel/" + id, props: props, done: done})
	r := <-done
	if r.err != nil {
		return nil, fmt.Errorf("spawning kernel actor: %w", r.err)
	}
	return r.pid, nil
}

func (o *Orchestrator) releaseWaiters(c actor.Context) {
	if len(c.Children()) > 0 {
		return
	}
	for _, w := range o.waiters {
		close(w)
	}
	o.waiters = nil
}
