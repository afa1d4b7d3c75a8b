package messages

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
)

// Priority orders messages that compete for a ring. Higher values go first.
type Priority uint8

// The priorities, lowest first.
const (
	// PriorityLow is for background work; it is the zero value.
	PriorityLow Priority = iota
	// PriorityNormal is the default of [NewEnvelope].
	PriorityNormal
	// PriorityHigh is for latency-sensitive traffic.
	PriorityHigh
	// PriorityCritical is for control traffic that must not wait.
	PriorityCritical
)

// String returns the priority's name, e.g. "normal", or "Priority(7)" for a
// value out of range.
func (p Priority) String() string {
	switch p {
	case PriorityLow:
		return "low"
	case PriorityNormal:
		return "normal"
	case PriorityHigh:
		return "high"
	case PriorityCritical:
		return "critical"
	}
	return "Priority(" + strconv.Itoa(int(p)) + ")"
}

// Header is the metadata that travels with every message.
type Header struct {
	// ID is the message id, unique per sender (see [NextID]).
	ID uint64
	// CorrelationID is the ID of the request this message answers; 0 = none.
	CorrelationID uint64
	// Priority orders the message against others on the same ring.
	Priority Priority
	// Type is the type id of the payload.
	Type TypeID
	// ReplyTo is the wire address of the reply target (e.g. a Proto.Actor
	// PID as "address/id"); empty = none.
	ReplyTo string
}

// Envelope is what travels on a ring, on the wire and in storage: a header
// and the payload, a value of a registered type.
type Envelope struct {
	Header
	// Payload is the message, a value of the type registered as Type.
	Payload any
}

var lastID atomic.Uint64

// NextID returns a process-wide, monotonically increasing message id. The
// first call returns 1. It is safe for concurrent use.
func NextID() uint64 { return lastID.Add(1) }

// NewEnvelope wraps payload with a fresh header: ID from [NextID], Type from
// the registry, Priority [PriorityNormal]. It returns [ErrNilMessage] for a
// nil payload and an [*UnregisteredTypeError] if its type is not registered.
func NewEnvelope(payload any) (Envelope, error) {
	id, err := IDOfValue(payload)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{
		Header:  Header{ID: NextID(), Priority: PriorityNormal, Type: id},
		Payload: payload,
	}, nil
}

// Envelope wire format, a msgpack array:
//
//	[version, id, correlationID, priority, type, replyTo, payload]
//
// version, the ids, priority and type are unsigned integers, replyTo a
// string and payload the bin holding the [Marshal] encoding of the payload.
// The version comes first so that a later format can change everything
// after it.
const (
	envelopeVersion = 1
	envelopeFields  = 7
	// envelopeHeaderMax bounds the encoded size of everything but replyTo
	// and the payload bytes: array, version, 2 ids, priority, type, and the
	// string and bin prefixes.
	envelopeHeaderMax = 1 + 1 + 9 + 9 + 1 + 5 + 5 + 5
)

// EncodeEnvelope encodes e for the wire or storage. If e.Type is 0 it is
// taken from the payload's type; otherwise it must match it. It returns
// [ErrNilMessage] for a nil payload, an [*UnregisteredTypeError] if the
// payload's type is not registered and a [*PayloadTooLargeError] if the
// encoded payload exceeds [MaxPayloadSize]. In steady state the returned
// slice is its only allocation.
func EncodeEnvelope(e Envelope) ([]byte, error) {
	id, err := IDOfValue(e.Payload)
	if err != nil {
		return nil, err
	}
	if e.Type != 0 && e.Type != id {
		return nil, fmt.Errorf("messages: envelope type %v does not match its payload's type %v (%T)", e.Type, id, e.Payload)
	}
	if e.Priority > PriorityCritical {
		return nil, fmt.Errorf("messages: invalid envelope priority %v", e.Priority)
	}
	s, err := encodePayload(e.Payload)
	if err != nil {
		return nil, err
	}
	payload := s.buf.Bytes()
	b := make([]byte, 0, envelopeHeaderMax+len(e.ReplyTo)+len(payload))
	b = appendArrayLen(b, envelopeFields)
	b = appendUint(b, envelopeVersion)
	b = appendUint(b, e.ID)
	b = appendUint(b, e.CorrelationID)
	b = appendUint(b, uint64(e.Priority))
	b = appendUint(b, uint64(id))
	b = appendString(b, e.ReplyTo)
	b = appendBin(b, payload)
	s.release()
	return b, nil
}

// DecodeEnvelope decodes an envelope encoded by [EncodeEnvelope]. Decoding
// is strict: an unsupported version, a field of the wrong type or out of
// range, truncated input, trailing bytes, an unknown type id or a payload
// that does not decode as its type all yield a [*DecodeError] wrapping the
// cause (an [*UnknownTypeIDError] or [*PayloadTooLargeError] where that is
// the cause). It never panics, and allocates in proportion to len(data). The
// result does not alias data.
func DecodeEnvelope(data []byte) (Envelope, error) {
	e, err := decodeEnvelope(data)
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			return Envelope{}, err
		}
		return Envelope{}, &DecodeError{ID: e.Type, Err: err}
	}
	return e, nil
}

// decodeEnvelope does the work of DecodeEnvelope; on error, the returned
// envelope holds the type id if it was read.
func decodeEnvelope(data []byte) (e Envelope, err error) {
	r := wireReader{b: data}
	n, err := r.arrayLen("envelope")
	if err != nil {
		return e, err
	}
	if n == 0 {
		return e, errors.New("envelope: empty array")
	}
	version, err := r.uint("envelope version", math.MaxUint64)
	if err != nil {
		return e, err
	}
	if version != envelopeVersion {
		return e, fmt.Errorf("unsupported envelope version %d (want %d)", version, envelopeVersion)
	}
	if n != envelopeFields {
		return e, fmt.Errorf("envelope version %d: %d fields, want %d", version, n, envelopeFields)
	}
	if e.ID, err = r.uint("envelope id", math.MaxUint64); err != nil {
		return e, err
	}
	if e.CorrelationID, err = r.uint("envelope correlation id", math.MaxUint64); err != nil {
		return e, err
	}
	prio, err := r.uint("envelope priority", uint64(PriorityCritical))
	if err != nil {
		return e, err
	}
	e.Priority = Priority(prio)
	typ, err := r.uint("envelope type", math.MaxUint32)
	if err != nil {
		return e, err
	}
	e.Type = TypeID(typ)
	if _, ok := Lookup(e.Type); !ok {
		return e, &UnknownTypeIDError{ID: e.Type}
	}
	if e.ReplyTo, err = r.string("envelope reply-to"); err != nil {
		return e, err
	}
	payload, err := r.bin("envelope payload", MaxPayloadSize)
	if err != nil {
		return e, err
	}
	if len(r.b) != 0 {
		return e, fmt.Errorf("%d trailing bytes after the envelope", len(r.b))
	}
	if e.Payload, err = Unmarshal(e.Type, payload); err != nil {
		return e, err
	}
	return e, nil
}
