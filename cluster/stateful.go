package cluster

import (
	"context"

	"github.com/ringactor/ringactor/actors"
)

// Stateful is the handler of one activation of a kind declared with
// NewStatefulKind: it handles the identity's messages, and gives its state
// away when the activation ends, so that the identity's next activation (on
// this member or on the one that owns it next) continues from it.
type Stateful[Req, Resp any] interface {
	// Handle handles one message of the identity, like an actors.Handler.
	// Calls come from the activation's kernel, one at a time.
	Handle(ctx context.Context, req Req) (Resp, error)
	// Passivate returns the activation's state. It is called once, when
	// the activation ends (idle timeout, the identity moving to another
	// member, the member leaving), after the kernel has handled and
	// answered every message it held and before any other activation of
	// the identity starts. An error loses the state: the next activation
	// starts without one.
	Passivate() ([]byte, error)
}

// NewStatefulKind declares a cluster kind whose activations keep state
// across passivation and moves between members: activate is called once
// per activation of an identity with the state the identity's previous
// activation returned from Passivate, or nil when there is none (its first
// activation, or its previous activation's member died without passivating
// it, or Passivate failed). The handler it returns serves every start and
// restart of the activation's kernel.
//
// Without a state hand-off (a kind declared with NewKind), an identity's
// next activation starts from a fresh handler: whatever the previous one
// held is lost when it passivates or moves. Either way, an identity has at
// most one activation at any time.
func NewStatefulKind[Req, Resp any](name string, activate func(identity string, state []byte) (Stateful[Req, Resp], error), opts ...actors.KernelOption) *Kind {
	k := newKind(name, func(identity string, state []byte) (started[Req, Resp], error) {
		s, err := activate(identity, state)
		if err != nil {
			return started[Req, Resp]{}, err
		}
		st := started[Req, Resp]{newHandler: func() actors.Handler[Req, Resp] { return s.Handle }, passivate: s.Passivate}
		if sn, ok := s.(Snapshotter); ok {
			st.snapshot = sn.Snapshot
		}
		return st, nil
	}, opts)
	k.stateful = true
	return k
}
