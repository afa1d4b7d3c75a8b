package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ringactor/ringactor/actors"
)

// KindOf is a cluster kind whose activations take requests of type Req and
// reply with Resp: the typed handle of a kind. Build one with Define or
// DefineStateful, pass KindOf.Kind() to Start on the members that host it,
// and address its identities with Ref, whose Request and Send only take a
// Req and only return a Resp: a wrong message or reply type, or a kind
// passed where an identity belongs, does not compile.
//
// Why a second type rather than a generic Kind[Req, Resp]: Start and
// every caller's []*Kind hold kinds of different message types in one
// slice, which a generic Kind cannot (Kind[A, B] and Kind[C, D] are unrelated
// types in Go); making Kind generic or changing what NewKind returns would
// break all of them. So Kind stays the untyped declaration a member hosts,
// and KindOf wraps it with its types; both name the same kind.
//
// A KindOf declared on a client (a member that does not host it) only
// serves to build references: its handler is never called there.
type KindOf[Req, Resp any] struct {
	kind *Kind
}

// Define declares a cluster kind named name, like NewKind, and returns its
// typed handle. Req and Resp must be registered message types
// (messages.Register) for the kind to be reachable from other members.
func Define[Req, Resp any](name string, newHandler func() actors.Handler[Req, Resp], opts ...actors.KernelOption) *KindOf[Req, Resp] {
	return typedKind[Req, Resp](NewKind(name, newHandler, opts...))
}

// DefineStateful declares a cluster kind whose activations keep state
// across passivation and moves, like NewStatefulKind, and returns its
// typed handle.
func DefineStateful[Req, Resp any](name string, activate func(identity string, state []byte) (Stateful[Req, Resp], error), opts ...actors.KernelOption) *KindOf[Req, Resp] {
	return typedKind[Req, Resp](NewStatefulKind(name, activate, opts...))
}

// typedKind wraps k, whose activations take Req and reply Resp, in its
// typed handle. Every constructor of a typed kind ends here.
func typedKind[Req, Resp any](k *Kind) *KindOf[Req, Resp] {
	return &KindOf[Req, Resp]{kind: k}
}

// Kind returns the untyped declaration to host: pass it to Start.
func (k *KindOf[Req, Resp]) Kind() *Kind { return k.kind }

// Name returns the kind's name.
func (k *KindOf[Req, Resp]) Name() string { return k.kind.name }

// WithIdleTimeout is Kind.WithIdleTimeout. It returns k.
func (k *KindOf[Req, Resp]) WithIdleTimeout(d time.Duration) *KindOf[Req, Resp] {
	k.kind.WithIdleTimeout(d)
	return k
}

// WithHandlerTimeout is Kind.WithHandlerTimeout. It returns k.
func (k *KindOf[Req, Resp]) WithHandlerTimeout(d time.Duration) *KindOf[Req, Resp] {
	k.kind.WithHandlerTimeout(d)
	return k
}

// ErrInvalidRef: a request through a Ref that no KindOf.Ref made (the zero
// Ref), or whose member or identity is missing.
var ErrInvalidRef = errors.New("ringactor/cluster: invalid reference")

// Ref returns the reference to the identity of k reached through m (a
// member, or a client started with AsClient). A reference is a small value:
// make one per request or keep it, as convenient; it is safe for concurrent
// use.
func (k *KindOf[Req, Resp]) Ref(m *Member, identity string) Ref[Req, Resp] {
	if k == nil || k.kind == nil {
		return Ref[Req, Resp]{m: m, identity: identity}
	}
	return Ref[Req, Resp]{m: m, kind: k.kind.name, identity: identity}
}

// Ref is a typed reference to one identity of a kind, made by KindOf.Ref.
// The zero Ref, or one with a nil member, an empty identity or made from a
// nil KindOf, fails every request with ErrInvalidRef.
type Ref[Req, Resp any] struct {
	m        *Member
	kind     string
	identity string
}

// Identity returns the identity the reference addresses.
func (r Ref[Req, Resp]) Identity() string { return r.identity }

// Kind returns the name of the kind the reference addresses.
func (r Ref[Req, Resp]) Kind() string { return r.kind }

// Request sends msg to the identity, which the identity's owner activates if
// it is not active, and waits for its reply. Its deadline and errors are
// those of the string-keyed Request.
func (r Ref[Req, Resp]) Request(ctx context.Context, msg Req) (Resp, error) {
	if err := r.check(); err != nil {
		var zero Resp
		return zero, err
	}
	return Request[Resp](ctx, r.m, r.kind, r.identity, msg)
}

// Send delivers msg to the identity without waiting for its handling
// (one-way), like the string-keyed Send.
func (r Ref[Req, Resp]) Send(ctx context.Context, msg Req) error {
	if err := r.check(); err != nil {
		return err
	}
	return Send(ctx, r.m, r.kind, r.identity, msg)
}

// check returns ErrInvalidRef for a reference that cannot address anything.
func (r Ref[Req, Resp]) check() error {
	switch {
	case r.m == nil:
		return fmt.Errorf("%w: no member to send through", ErrInvalidRef)
	case r.kind == "":
		return fmt.Errorf("%w: no kind", ErrInvalidRef)
	case r.identity == "":
		return fmt.Errorf("%w: empty identity of kind %q", ErrInvalidRef, r.kind)
	}
	return nil
}
