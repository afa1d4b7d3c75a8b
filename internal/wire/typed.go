package wire

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/ringactor/ringactor/messages"
)

// Typed conversion: the forms of [Pack] and [Unpack] for a caller that knows
// the payload's type at compile time (a typed cluster request, the
// activation that handles it). They skip the registry lookups, the boxing
// and the reflect.New of the untyped forms, and PackOf puts a small payload
// in the same allocation as its envelope.

// inlinePayload is the largest payload PackOf stores in the allocation of
// its envelope.
const inlinePayload = 128

// envelopeInline and envelopeInlineSmall are wire envelopes with room for a
// small payload, allocated together.
type (
	envelopeInline struct {
		w   WireEnvelope
		buf [inlinePayload]byte
	}
	envelopeInlineSmall struct {
		w   WireEnvelope
		buf [32]byte
	}
)

// scratch holds the buffers a payload is encoded into before it is copied
// into its envelope. Each has room for an inline payload and never grows: a
// larger payload gets its own slice, which its envelope keeps.
var scratch = sync.Pool{New: func() any {
	b := make([]byte, 0, inlinePayload)
	return &b
}}

// newEnvelope returns a wire envelope holding a copy of the small payload.
func newEnvelope(payload []byte) *WireEnvelope {
	if n := len(payload); n <= len(envelopeInlineSmall{}.buf) {
		b := new(envelopeInlineSmall)
		b.w.Payload = b.buf[:copy(b.buf[:], payload):n]
		return &b.w
	}
	b := new(envelopeInline)
	b.w.Payload = b.buf[:copy(b.buf[:], payload):len(payload)]
	return &b.w
}

// PackOf is [Pack] for a payload whose type is known at compile time: it
// encodes msg with the header h (h.Type, when not 0, must be msg's type id)
// and returns the same errors. A payload of at most 128 bytes shares one
// allocation with the envelope. When T is an interface type the dynamic type
// of msg is encoded, as Pack does.
func PackOf[T any](msg T, h messages.Header, max int) (*WireEnvelope, error) {
	v := any(msg)
	if v == nil {
		return nil, messages.ErrNilMessage
	}
	id, err := messages.IDOfValue(v)
	if err != nil {
		return nil, err
	}
	return pack(v, id, h, max)
}

// PackFrom is PackOf for the value msg points to, which it does not copy:
// for a caller whose value already lives on the heap (a field of a
// request's record), encoding it costs no allocation for the value.
func PackFrom[T any](msg *T, h messages.Header, max int) (*WireEnvelope, error) {
	if msg == nil {
		return nil, messages.ErrNilMessage
	}
	if reflect.TypeFor[T]().Kind() == reflect.Interface {
		return PackOf(*msg, h, max)
	}
	id, err := messages.IDOf[T]()
	if err != nil {
		return nil, err
	}
	return pack(msg, id, h, max)
}

// pack encodes v (a value of the type registered as id, or a pointer to
// one) with the header h.
func pack(v any, id messages.TypeID, h messages.Header, max int) (*WireEnvelope, error) {
	max = payloadMax(max)
	if err := checkHeader(h); err != nil {
		return nil, err
	}
	if h.Type != 0 && h.Type != id {
		return nil, fmt.Errorf("wire: envelope type %v does not match its payload's type %v (%T)", h.Type, id, v)
	}
	buf := scratch.Get().(*[]byte)
	p, err := messages.AppendPayload((*buf)[:0], v)
	var w *WireEnvelope
	switch n := len(p); {
	case err != nil:
	case n > max:
		err = &messages.PayloadTooLargeError{Size: n, Max: max}
	case n <= inlinePayload:
		w = newEnvelope(p)
	default:
		// p outgrew the scratch buffer: append gave it an array of its own.
		w = &WireEnvelope{Payload: p[:n:n]}
	}
	scratch.Put(buf)
	if err != nil {
		return nil, err
	}
	w.Id, w.CorrelationId, w.Priority, w.TypeId, w.ReplyTo = h.ID, h.CorrelationID, uint32(h.Priority), uint32(id), h.ReplyTo
	return w, nil
}

// UnpackAs is [Unpack] for a payload whose type the caller knows: it decodes
// w's payload straight into a T and returns it with the header. Besides
// Unpack's errors it returns a [*TypeMismatchError] when w's payload is
// registered as another type than T, and a
// [*messages.UnregisteredTypeError] when T is not registered. When T is an
// interface type the payload decodes as its registered type, which must
// implement T.
func UnpackAs[T any](w *WireEnvelope, max int) (messages.Header, T, error) {
	var zero T
	max = payloadMax(max)
	if w == nil {
		return messages.Header{}, zero, messages.ErrNilMessage
	}
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Interface {
		env, err := Unpack(w, max)
		if err != nil {
			return messages.Header{}, zero, err
		}
		v, ok := env.Payload.(T)
		if !ok {
			return messages.Header{}, zero, &TypeMismatchError{Want: t, Got: reflect.TypeOf(env.Payload), GotID: messages.TypeID(w.TypeId)}
		}
		return env.Header, v, nil
	}
	var v T
	h, err := UnpackInto(w, max, &v)
	if err != nil {
		return messages.Header{}, zero, err
	}
	return h, v, nil
}

// UnpackInto is UnpackAs decoding into *v, for a caller whose value already
// lives on the heap: decoding costs no allocation for the value. On error *v
// is left in an unspecified state.
func UnpackInto[T any](w *WireEnvelope, max int, v *T) (messages.Header, error) {
	max = payloadMax(max)
	if w == nil || v == nil {
		return messages.Header{}, messages.ErrNilMessage
	}
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Interface {
		h, x, err := UnpackAs[T](w, max)
		if err == nil {
			*v = x
		}
		return h, err
	}
	want, err := messages.IDOf[T]()
	if err != nil {
		return messages.Header{}, err
	}
	id := messages.TypeID(w.TypeId)
	if id != want {
		info, ok := messages.Lookup(id)
		if !ok {
			return messages.Header{}, &messages.UnknownTypeIDError{ID: id}
		}
		return messages.Header{}, &TypeMismatchError{Want: t, WantID: want, Got: info.Type, GotID: id}
	}
	h, err := header(w, id, max)
	if err != nil {
		return messages.Header{}, err
	}
	if err := messages.UnmarshalInto(w.Payload, v); err != nil {
		return messages.Header{}, err
	}
	return h, nil
}
