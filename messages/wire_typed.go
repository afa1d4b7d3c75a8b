package messages

import (
	"fmt"
	"reflect"
)

// Typed wire conversion: the forms of [ToWire] and [FromWire] for a caller
// that knows the payload's type at compile time (a typed cluster request,
// the activation that handles it). They skip the registry lookups, the
// boxing and the reflect.New of the untyped forms, and ToWireOf puts a small
// payload in the same allocation as its envelope.

// TypeMismatchError reports a wire envelope whose payload is registered,
// but as another type than the one the caller decodes. It matches
// [ErrDecode] with [errors.Is].
type TypeMismatchError struct {
	// Want is the type the caller asked for, WantID its type id (0 when it
	// is not registered).
	Want   reflect.Type
	WantID TypeID
	// Got is the type registered under the envelope's type id GotID.
	Got   reflect.Type
	GotID TypeID
}

// Error implements error.
func (e *TypeMismatchError) Error() string {
	return fmt.Sprintf("messages: payload is %v (type id %v), want %v", e.Got, e.GotID, e.Want)
}

// Is reports whether target is [ErrDecode].
func (e *TypeMismatchError) Is(target error) bool { return target == ErrDecode }

// inlinePayload is the largest payload ToWireOf stores in the allocation of
// its envelope.
const inlinePayload = 128

// wireInline and wireInlineSmall are wire envelopes with room for a small
// payload, allocated together.
type (
	wireInline struct {
		w   WireEnvelope
		buf [inlinePayload]byte
	}
	wireInlineSmall struct {
		w   WireEnvelope
		buf [32]byte
	}
)

// newWire returns a wire envelope holding a copy of payload.
func newWire(payload []byte) *WireEnvelope {
	switch n := len(payload); {
	case n <= len(wireInlineSmall{}.buf):
		b := new(wireInlineSmall)
		b.w.Payload = b.buf[:copy(b.buf[:], payload):n]
		return &b.w
	case n <= inlinePayload:
		b := new(wireInline)
		b.w.Payload = b.buf[:copy(b.buf[:], payload):n]
		return &b.w
	}
	return &WireEnvelope{Payload: append([]byte(nil), payload...)}
}

// ToWireOf is [ToWire] for a payload whose type is known at compile time:
// it encodes msg with the header h (h.Type, when not 0, must be msg's type
// id) and returns the same errors. A payload of at most 128 bytes shares one
// allocation with the envelope. When T is an interface type the dynamic
// type of msg is encoded, as ToWire does.
func ToWireOf[T any](msg T, h Header, max int) (*WireEnvelope, error) {
	v := any(msg)
	if v == nil {
		return nil, ErrNilMessage
	}
	id, err := IDOfValue(v)
	if err != nil {
		return nil, err
	}
	return toWire(v, id, h, max)
}

// ToWireFrom is ToWireOf for the value msg points to, which it does not
// copy: for a caller whose value already lives on the heap (a field of a
// request's record), encoding it costs no allocation for the value.
func ToWireFrom[T any](msg *T, h Header, max int) (*WireEnvelope, error) {
	if msg == nil {
		return nil, ErrNilMessage
	}
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Interface {
		return ToWireOf(*msg, h, max)
	}
	id, err := idOfType(t)
	if err != nil {
		return nil, err
	}
	return toWire(msg, id, h, max)
}

// toWire encodes v (a value of the type registered as id, or a pointer to
// one) with the header h.
func toWire(v any, id TypeID, h Header, max int) (*WireEnvelope, error) {
	max = wireMax(max)
	if err := checkWireHeader(h); err != nil {
		return nil, err
	}
	if h.Type != 0 && h.Type != id {
		return nil, fmt.Errorf("messages: envelope type %v does not match its payload's type %v (%T)", h.Type, id, v)
	}
	s, err := encodePayload(v)
	if err != nil {
		return nil, err
	}
	defer s.release()
	n := s.buf.Len()
	if n > max {
		return nil, &PayloadTooLargeError{Size: n, Max: max}
	}
	w := newWire(s.buf.Bytes())
	w.Id, w.CorrelationId, w.Priority, w.TypeId, w.ReplyTo = h.ID, h.CorrelationID, uint32(h.Priority), uint32(id), h.ReplyTo
	return w, nil
}

// FromWireAs is [FromWire] for a payload whose type the caller knows: it
// decodes w's payload straight into a T and returns it with the header.
// Besides FromWire's errors it returns a [*TypeMismatchError] when w's
// payload is registered as another type than T, and an
// [*UnregisteredTypeError] when T is not registered. When T is an interface
// type the payload decodes as its registered type, which must implement T.
func FromWireAs[T any](w *WireEnvelope, max int) (Header, T, error) {
	var zero T
	max = wireMax(max)
	if w == nil {
		return Header{}, zero, ErrNilMessage
	}
	id := TypeID(w.TypeId)
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Interface {
		env, err := FromWire(w, max)
		if err != nil {
			return Header{}, zero, err
		}
		v, ok := env.Payload.(T)
		if !ok {
			return Header{}, zero, &TypeMismatchError{Want: t, Got: reflect.TypeOf(env.Payload), GotID: id}
		}
		return env.Header, v, nil
	}
	var v T
	h, err := FromWireInto(w, max, &v)
	if err != nil {
		return Header{}, zero, err
	}
	return h, v, nil
}

// FromWireInto is FromWireAs decoding into *v, for a caller whose value
// already lives on the heap: decoding costs no allocation for the value. On
// error *v is left in an unspecified state.
func FromWireInto[T any](w *WireEnvelope, max int, v *T) (Header, error) {
	max = wireMax(max)
	if w == nil || v == nil {
		return Header{}, ErrNilMessage
	}
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Interface {
		h, x, err := FromWireAs[T](w, max)
		if err == nil {
			*v = x
		}
		return h, err
	}
	want, err := idOfType(t)
	if err != nil {
		return Header{}, err
	}
	id := TypeID(w.TypeId)
	if id != want {
		info, ok := Lookup(id)
		if !ok {
			return Header{}, &UnknownTypeIDError{ID: id}
		}
		return Header{}, &TypeMismatchError{Want: t, WantID: want, Got: info.Type, GotID: id}
	}
	return fromWireInto(w, id, max, v)
}

// fromWireInto checks w's header and decodes its payload into v.
func fromWireInto(w *WireEnvelope, id TypeID, max int, v any) (Header, error) {
	h, err := wireHeader(w, id, max)
	if err != nil {
		return Header{}, err
	}
	if err := decodeInto(w.Payload, v); err != nil {
		return Header{}, &DecodeError{ID: id, Err: err}
	}
	return h, nil
}

// wireHeader checks w's payload size and header fields, as FromWire does,
// and returns its header.
func wireHeader(w *WireEnvelope, id TypeID, max int) (Header, error) {
	if n := len(w.Payload); n > max {
		return Header{}, &PayloadTooLargeError{Size: n, Max: max}
	}
	if w.Priority > uint32(PriorityCritical) {
		return Header{}, &DecodeError{ID: id, Err: fmt.Errorf("envelope priority: %d is out of range (max %d)", w.Priority, PriorityCritical)}
	}
	if n := len(w.ReplyTo); n > MaxReplyToLen {
		return Header{}, &DecodeError{ID: id, Err: fmt.Errorf("reply-to address of %d bytes exceeds the maximum of %d bytes", n, MaxReplyToLen)}
	}
	return Header{ID: w.Id, CorrelationID: w.CorrelationId, Priority: Priority(w.Priority), Type: id, ReplyTo: w.ReplyTo}, nil
}
