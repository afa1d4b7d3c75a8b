package wire

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/ringactor/ringactor/messages"
)

// MaxReplyToLen is the longest [messages.Header.ReplyTo], in bytes, that
// [Pack] encodes and [Unpack] accepts.
const MaxReplyToLen = 4096

// headerSlack bounds the protobuf encoding of a [WireEnvelope] beyond its
// payload bytes: six tags, two 10-byte varint ids, two 5-byte varints, two
// 5-byte length prefixes and a reply-to address of at most [MaxReplyToLen]
// bytes.
const headerSlack = 6 + 2*10 + 2*5 + 2*5 + MaxReplyToLen

// payloadMax returns the effective payload limit for a caller's max: 0 or
// less means [messages.MaxPayloadSize], and no limit exceeds it.
func payloadMax(max int) int {
	if max <= 0 || max > messages.MaxPayloadSize {
		return messages.MaxPayloadSize
	}
	return max
}

// Pack converts e into its protobuf form. The payload is encoded with
// [messages.Marshal]; if e.Type is not 0 it must match the payload's type.
//
// max limits the encoded payload in bytes; 0 (or less) means
// [messages.MaxPayloadSize], which is also the ceiling of any larger max.
// Pack returns [messages.ErrNilMessage] for a nil payload, a
// [*messages.UnregisteredTypeError] if the payload's type is not registered
// and a [*messages.PayloadTooLargeError] if the encoded payload exceeds max.
func Pack(e messages.Envelope, max int) (*WireEnvelope, error) {
	max = payloadMax(max)
	if e.Payload == nil {
		return nil, messages.ErrNilMessage
	}
	if err := checkHeader(e.Header); err != nil {
		return nil, err
	}
	id, payload, err := messages.Marshal(e.Payload)
	if err != nil {
		return nil, err
	}
	if e.Type != 0 && e.Type != id {
		return nil, fmt.Errorf("wire: envelope type %v does not match its payload's type %v (%T)", e.Type, id, e.Payload)
	}
	if len(payload) > max {
		return nil, &messages.PayloadTooLargeError{Size: len(payload), Max: max}
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

// checkHeader rejects header fields that Unpack would reject.
func checkHeader(h messages.Header) error {
	if h.Priority > messages.PriorityCritical {
		return fmt.Errorf("wire: invalid envelope priority %v", h.Priority)
	}
	if len(h.ReplyTo) > MaxReplyToLen {
		return fmt.Errorf("wire: reply-to address of %d bytes exceeds the maximum of %d bytes", len(h.ReplyTo), MaxReplyToLen)
	}
	if !utf8.ValidString(h.ReplyTo) {
		return errors.New("wire: reply-to address is not valid UTF-8")
	}
	return nil
}

// Unpack converts w back into an Envelope, decoding the payload as the type
// registered under w's type id. The result does not alias w.
//
// max limits the payload in bytes as for [Pack]. Unpack returns
// [messages.ErrNilMessage] for a nil w, a [*messages.UnknownTypeIDError] if
// no type is registered under the type id, a
// [*messages.PayloadTooLargeError] if the payload exceeds max (checked
// before decoding) and a [*messages.DecodeError] if a header field is out of
// range or the payload is not exactly one valid msgpack encoding of its
// type.
func Unpack(w *WireEnvelope, max int) (messages.Envelope, error) {
	max = payloadMax(max)
	if w == nil {
		return messages.Envelope{}, messages.ErrNilMessage
	}
	id := messages.TypeID(w.TypeId)
	if _, ok := messages.Lookup(id); !ok {
		return messages.Envelope{}, &messages.UnknownTypeIDError{ID: id}
	}
	h, err := header(w, id, max)
	if err != nil {
		return messages.Envelope{}, err
	}
	payload, err := messages.Unmarshal(id, w.Payload)
	if err != nil {
		return messages.Envelope{}, err
	}
	return messages.Envelope{Header: h, Payload: payload}, nil
}

// Marshal encodes e as a protobuf [WireEnvelope] (see [Pack], whose errors
// it returns).
func Marshal(e messages.Envelope, max int) ([]byte, error) {
	w, err := Pack(e, max)
	if err != nil {
		return nil, err
	}
	b, err := proto.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("wire: encode wire envelope: %w", err)
	}
	return b, nil
}

// Unmarshal decodes an envelope encoded by [Marshal]. Input longer than the
// payload limit max (as for [Pack]) plus the envelope's own fields is a
// [*messages.PayloadTooLargeError] before anything is parsed; input that is
// not a valid protobuf WireEnvelope is a [*messages.DecodeError]; otherwise
// it returns the errors of [Unpack]. Unknown protobuf fields are ignored. It
// never panics, and allocates in proportion to len(b). The result does not
// alias b.
func Unmarshal(b []byte, max int) (messages.Envelope, error) {
	max = payloadMax(max)
	if limit := max + headerSlack; len(b) > limit {
		return messages.Envelope{}, &messages.PayloadTooLargeError{Size: len(b), Max: limit}
	}
	var w WireEnvelope
	if err := proto.Unmarshal(b, &w); err != nil {
		return messages.Envelope{}, &messages.DecodeError{Err: fmt.Errorf("wire envelope: %w", err)}
	}
	return Unpack(&w, max)
}

// header checks w's payload size and header fields, as Unpack does, and
// returns its header.
func header(w *WireEnvelope, id messages.TypeID, max int) (messages.Header, error) {
	if n := len(w.Payload); n > max {
		return messages.Header{}, &messages.PayloadTooLargeError{Size: n, Max: max}
	}
	if w.Priority > uint32(messages.PriorityCritical) {
		return messages.Header{}, &messages.DecodeError{ID: id, Err: fmt.Errorf("envelope priority: %d is out of range (max %d)", w.Priority, messages.PriorityCritical)}
	}
	if n := len(w.ReplyTo); n > MaxReplyToLen {
		return messages.Header{}, &messages.DecodeError{ID: id, Err: fmt.Errorf("reply-to address of %d bytes exceeds the maximum of %d bytes", n, MaxReplyToLen)}
	}
	return messages.Header{ID: w.Id, CorrelationID: w.CorrelationId, Priority: messages.Priority(w.Priority), Type: id, ReplyTo: w.ReplyTo}, nil
}
