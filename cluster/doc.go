// Package cluster runs ring kernels as Proto.Actor cluster kinds.
//
// A [Kind] turns a ring-kernel declaration (a name, a handler factory and
// kernel options) into a cluster kind: every activation of an identity of the
// kind launches and activates its own ring kernel, with the id
// "<kind>/<identity>", in the member's [actors.Runtime], and passivation
// (idle timeout or member shutdown) terminates that kernel cleanly.
//
// A [Member] is one cluster member: a Proto.Actor actor system with remoting
// (bound to 127.0.0.1 unless an address is given), a cluster with the given
// provider, and a runtime hosting the kernels of the identities placed on
// it. An identity has at most one activation in the cluster at any time: a
// member activates only identities it owns by its own topology (others get
// a redirect to the owner, which the client follows), and only after every
// other member has passivated the identity if it held it. A kind declared
// with [NewStatefulKind] hands its state to the identity's next activation.
// Every message carries the cluster's name and [ProtocolVersion]: nodes of
// another cluster are refused with [ErrClusterMismatch].
//
// [Define] (and [DefineStateful]) declare a typed kind, a [KindOf]; its
// [KindOf.Ref] addresses one identity through a member or client, and
// [Ref.Request] and [Ref.Send] take and return only the kind's types, so
// misuse is a compile error. [Request] and [Send] address an identity of a
// kind by name, for dynamic use, from any member. The
// message travels as its msgpack encoding inside a protobuf envelope;
// failures come back as typed errors: [ErrUnknownKind], [ErrTimeout],
// [ErrMemberUnavailable], [ErrClusterMismatch], [*RemoteError] (which matches gpu.ErrExecution,
// messages.ErrDecode, messages.ErrUnregistered ... by its kind), and the
// local errors of package messages for messages that cannot be encoded.
package cluster
