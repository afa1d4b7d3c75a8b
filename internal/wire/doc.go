// Package wire is the cluster's protocol between members: the protobuf
// messages generated from ringactor_wire.proto (the [WireEnvelope] that
// carries a registered message, the [WireError] that reports a remote
// failure, and the peers, placement and hand-off messages of package
// cluster) and the conversions between a [messages.Envelope] and its
// [WireEnvelope].
//
// Proto.Actor remote only sends protobuf, so a registered message crosses
// the wire as its msgpack encoding ([messages.Marshal]) inside one small
// protobuf envelope. The protobuf full names (package ringactor.messages.v1)
// and field numbers are the wire format: they do not change.
//
// The package is internal: nothing outside the cluster's own members speaks
// this protocol.
package wire
