// Package messages is the bottom layer of ringactor: it owns the message
// type registry, the Envelope that carries a message on a ring, on the wire
// and in storage, and the msgpack codec for both.
//
// Every message type is registered once under a stable name, usually in a
// package-level variable:
//
//	var pingID = messages.MustRegister[Ping]("ringactor.example.Ping")
//
// The name is hashed (FNV-1a, 32 bits) into a [TypeID] that is stable across
// processes and builds, so two processes that register the same name for the
// same wire shape can exchange messages. [Marshal] and [Unmarshal] encode a
// payload on its own; [EncodeEnvelope] and [DecodeEnvelope] encode a payload
// together with its [Header].
//
// Decoding is strict and defensive: malformed, truncated or hostile input
// yields a [*DecodeError], never a panic, and allocation stays bounded by
// the size of the input.
//
// This package must not import any other package of this module.
package messages
