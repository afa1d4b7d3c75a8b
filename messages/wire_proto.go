package messages

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
)

// Cluster traffic: Proto.Actor remote only sends protobuf, so an Envelope
// crosses the wire as a [WireEnvelope] (generated from wire.proto) whose
// payload is the [Marshal] encoding of the registered message.

// MaxReplyToLen is the longest [Header.ReplyTo], in bytes, that [ToWire]
// encodes and [FromWire] accepts.
const MaxReplyToLen = 4096

// wireHeaderSlack bounds the protobuf encoding of a [WireEnvelope] beyond
// its payload bytes: six tags, two 10-byte varint ids, two 5-byte varints,
// two 5-byte length prefixes and a reply-to address of at most
// [MaxReplyToLen] bytes.
const wireHeaderSlack = 6 + 2*10 + 2*5 + 2*5 + MaxReplyToLen

// wireMax returns the effective payload limit for a caller's max: 0 or less
// means [MaxPayloadSize], and no limit exceeds it.
func wireMax(max int) int {
	if max <= 0 || max > MaxPayloadSize {
		return MaxPayloadSize
	}
	return max
}

// ToWire converts e into its protobuf form. The payload is encoded with
// [Marshal]; if e.Type is not 0 it must match the payload's type.
//
// max limits the encoded payload in bytes; 0 (or less) means
// [MaxPayloadSize], which is also the ceiling of any larger max. ToWire
// returns [ErrNilMessage] for a nil payload, an [*UnregisteredTypeError] if
// the payload's type is not registered and a [*PayloadTooLargeError] if the
// encoded payload exceeds max.
func ToWire(e Envelope, max int) (*WireEnvelope, error) {
	max = wireMax(max)
	if e.Payload == nil {
		return nil, ErrNilMessage
	}
	if err := checkWireHeader(e.Header); err != nil {
		return nil, err
	}
	id, payload, err := Marshal(e.Payload)
	if err != nil {
		return nil, err
	}
	if e.Type != 0 && e.Type != id {
		return nil, fmt.Errorf("messages: envelope type %v does not match its payload's type %v (%T)", e.Type, id, e.Payload)
	}
	if len(payload) > max {
		return nil, &PayloadTooLargeError{Size: len(payload), Max: max}
	}
	return &WireEnvelope{
		Id:            e.ID,
		CorrelationId: e.CorrelationID,
		Priority:      uint32(e.Priority),
		TypeId:        uint32(id),
		ReplyTo:       e.ReplyTo,
		Payload:       payload,
	}, nil
}

// checkWireHeader rejects header fields that FromWire would reject.
func checkWireHeader(h Header) error {
	if h.Priority > PriorityCritical {
		return fmt.Errorf("messages: invalid envelope priority %v", h.Priority)
	}
	if len(h.ReplyTo) > MaxReplyToLen {
		return fmt.Errorf("messages: reply-to address of %d bytes exceeds the maximum of %d bytes", len(h.ReplyTo), MaxReplyToLen)
	}
	if !utf8.ValidString(h.ReplyTo) {
		return errors.New("messages: reply-to address is not valid UTF-8")
	}
	return nil
}

// FromWire converts w back into an Envelope, decoding the payload as the
// type registered under w's type id. The result does not alias w.
//
// max limits the payload in bytes as for [ToWire]. FromWire returns
// [ErrNilMessage] for a nil w, an [*UnknownTypeIDError] if no type is
// registered under the type id, a [*PayloadTooLargeError] if the payload
// exceeds max (checked before decoding) and a [*DecodeError] if a header
// field is out of range or the payload is not exactly one valid msgpack
// encoding of its type.
func FromWire(w *WireEnvelope, max int) (Envelope, error) {
	max = wireMax(max)
	if w == nil {
		return Envelope{}, ErrNilMessage
	}
	id := TypeID(w.TypeId)
	if _, ok := Lookup(id); !ok {
		return Envelope{}, &UnknownTypeIDError{ID: id}
	}
	h, err := wireHeader(w, id, max)
	if err != nil {
		return Envelope{}, err
	}
	payload, err := Unmarshal(id, w.Payload)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{Header: h, Payload: payload}, nil
}

// EncodeWire encodes e as a protobuf [WireEnvelope] (see [ToWire], whose
// errors it returns).
func EncodeWire(e Envelope, max int) ([]byte, error) {
	w, err := ToWire(e, max)
	if err != nil {
		return nil, err
	}
	b, err := proto.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("messages: encode wire envelope: %w", err)
	}
	return b, nil
}

// DecodeWire decodes an envelope encoded by [EncodeWire]. Input longer than
// the payload limit max (as for [ToWire]) plus the envelope's own fields is a
// [*PayloadTooLargeError] before anything is parsed; input that is not a
// valid protobuf WireEnvelope is a [*DecodeError]; otherwise it returns the
// errors of [FromWire]. Unknown protobuf fields are ignored. It never panics,
// and allocates in proportion to len(b). The result does not alias b.
func DecodeWire(b []byte, max int) (Envelope, error) {
	max = wireMax(max)
	if limit := max + wireHeaderSlack; len(b) > limit {
		return Envelope{}, &PayloadTooLargeError{Size: len(b), Max: limit}
	}
	var w WireEnvelope
	if err := proto.Unmarshal(b, &w); err != nil {
		return Envelope{}, &DecodeError{Err: fmt.Errorf("wire envelope: %w", err)}
	}
	return FromWire(&w, max)
}

// The kinds of a [WireError], which name what failed on the remote side.
const (
	// WireKindUnregistered: a type or type id is not registered.
	WireKindUnregistered = "unregistered"
	// WireKindDecode: a message could not be decoded.
	WireKindDecode = "decode"
	// WireKindTooLarge: a payload exceeds the configured maximum.
	WireKindTooLarge = "too_large"
	// WireKindExecution: the handler failed; the message says how.
	WireKindExecution = "execution"
	// WireKindUnknownKind: the addressed cluster kind does not exist.
	WireKindUnknownKind = "unknown_kind"
	// WireKindUnavailable: the member or kernel cannot serve the request.
	WireKindUnavailable = "unavailable"
	// WireKindTimeout: the request's deadline, carried in timeout_ns,
	// passed while the remote side handled it.
	WireKindTimeout = "timeout"
)

// wireKinds lists the kinds in code order; code i+1 is wireKinds[i].
var wireKinds = [...]string{
	WireKindUnregistered, WireKindDecode, WireKindTooLarge,
	WireKindExecution, WireKindUnknownKind, WireKindUnavailable,
	WireKindTimeout,
}

// WireErrorCode returns the numeric code of a [WireError] kind (1 to 6, in
// the order of the WireKind constants), or 0 for an unknown kind.
func WireErrorCode(kind string) uint32 {
	for i, k := range wireKinds {
		if k == kind {
			return uint32(i + 1)
		}
	}
	return 0
}

// NewWireError builds the [WireError] that reports err for the message with
// id messageID. An error from this package is classified by its type
// (too_large, unregistered, decode, in that order of precedence); any other
// error is an execution error. Callers with a more specific kind
// (unknown_kind, unavailable) set Kind and Code themselves.
func NewWireError(err error, messageID uint64) *WireError {
	kind := WireKindExecution
	var tooLarge *PayloadTooLargeError
	switch {
	case errors.As(err, &tooLarge):
		kind = WireKindTooLarge
	case errors.Is(err, ErrUnregistered):
		kind = WireKindUnregistered
	case errors.Is(err, ErrDecode):
		kind = WireKindDecode
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	return &WireError{Code: WireErrorCode(kind), Kind: kind, Message: msg, MessageId: messageID}
}
