package cluster

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/actors"
)

// NewDeviceKind declares a cluster kind whose activations run a device ring
// kernel (actors.NewDeviceRingKernel): each identity gets its own
// persistent device loop running src's CUDA handler, with its own zeroed
// State, on a member whose runtime has a usable CUDA backend (give it one
// with WithRuntimeOptions(actors.WithBackends(…))), and newFallback's Go
// handler elsewhere. The declaration is checked here (types, handler
// name, fallback): a mistake is actors.ErrInvalidKernel. Each member
// compiles and loads the program when it starts (a handler that does not
// compile fails Start with a *gpu.CompilationError); identities share it.
func NewDeviceKind[Req, Resp any](name string, src actors.DeviceSource, newFallback func() actors.Handler[Req, Resp], opts ...actors.KernelOption) (*Kind, error) {
	probe, err := actors.NewDeviceRingKernel(name, src, newFallback, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster: device kind %q: %w", name, err)
	}
	k := &Kind{name: name, handlerTimeout: DefaultHandlerTimeout, req: DevicePreferred}
	k.prepare = func(m *Member) error { return actors.PrepareDevice(m.rt, probe) }
	k.producer = func(m *Member, identity string, state []byte, in *inbox) actor.Producer {
		return func() actor.Actor {
			return &grain[Req, Resp]{kind: k, member: m, identity: identity, state: state, inbox: in,
				start: func(string, []byte) (started[Req, Resp], error) {
					return started[Req, Resp]{}, nil
				},
				newDef: func(id string) (*actors.KernelDef[Req, Resp], error) {
					return actors.NewDeviceRingKernel(id, src, newFallback, opts...)
				}}
		}
	}
	return k, nil
}

// DefineDevice is NewDeviceKind returning the kind's typed handle
// (KindOf[Req, Resp]): its references (KindOf.Ref) take only Req and
// return only Resp, as a Define kind's do.
func DefineDevice[Req, Resp any](name string, src actors.DeviceSource, newFallback func() actors.Handler[Req, Resp], opts ...actors.KernelOption) (*KindOf[Req, Resp], error) {
	k, err := NewDeviceKind(name, src, newFallback, opts...)
	if err != nil {
		return nil, err
	}
	return typedKind[Req, Resp](k), nil
}
