package messages

import (
	"bytes"
	"fmt"
	"reflect"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// MaxPayloadSize is the largest encoded payload, in bytes, that this package
// encodes or decodes. Bigger payloads fail with a [*PayloadTooLargeError].
const MaxPayloadSize = 64 << 20

// maxPooledSize is the largest buffer or input size whose encoder or decoder
// state goes back to its pool, so that one huge message does not pin a huge
// buffer for the life of the process.
const maxPooledSize = 64 << 10

// encState is a pooled msgpack encoder writing into its own buffer.
type encState struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

var encPool = sync.Pool{New: func() any {
	s := new(encState)
	// Default msgpack options: sized integers keep their width on the
	// wire, so a value held in an interface field decodes to its own type.
	s.enc = msgpack.NewEncoder(&s.buf)
	return s
}}

// encodePayload encodes v into a pooled buffer. On success the caller must
// copy s.buf out and then call s.release.
func encodePayload(v any) (*encState, error) {
	s := encPool.Get().(*encState)
	s.buf.Reset()
	if err := s.enc.Encode(v); err != nil {
		s.release()
		return nil, fmt.Errorf("messages: encode %T: %w", v, err)
	}
	if n := s.buf.Len(); n > MaxPayloadSize {
		s.release()
		return nil, &PayloadTooLargeError{Size: n, Max: MaxPayloadSize}
	}
	return s, nil
}

func (s *encState) release() {
	if s.buf.Cap() <= maxPooledSize {
		encPool.Put(s)
	}
}

// decState is a pooled msgpack decoder reading from its own bytes.Reader.
type decState struct {
	r   bytes.Reader
	dec *msgpack.Decoder
}

var decPool = sync.Pool{New: func() any {
	s := new(decState)
	s.dec = msgpack.NewDecoder(&s.r)
	return s
}}

// decodeInto decodes data, which must hold exactly one msgpack value, into
// the value ptr points to. It never panics, and allocates at most
// decodeBudget (in proportion to len(data)) whatever data holds.
func decodeInto(data []byte, ptr any) (err error) {
	if len(data) > MaxPayloadSize {
		return &PayloadTooLargeError{Size: len(data), Max: MaxPayloadSize}
	}
	if err := validateMsgpack(data); err != nil {
		return err
	}
	if err := checkDecodeBudget(data, reflect.TypeOf(ptr).Elem()); err != nil {
		return err
	}
	s := decPool.Get().(*decState)
	s.r.Reset(data)
	s.dec.Reset(&s.r)
	defer func() {
		if p := recover(); p != nil {
			// s may be in any state: leave it to the garbage collector.
			err = fmt.Errorf("msgpack decoder panicked: %v", p)
			return
		}
		s.r.Reset(nil)
		if len(data) <= maxPooledSize {
			decPool.Put(s)
		}
	}()
	if err := s.dec.Decode(ptr); err != nil {
		return err
	}
	if n := s.r.Len(); n != 0 {
		return fmt.Errorf("%d trailing bytes after the payload", n)
	}
	return nil
}

// Marshal encodes the payload v with msgpack and returns it with the type
// id of v's dynamic type. It returns [ErrNilMessage] for a nil v, an
// [*UnregisteredTypeError] if the type is not registered and a
// [*PayloadTooLargeError] if the encoding exceeds [MaxPayloadSize].
//
// Structs encode as maps keyed by field name (msgpack struct tags apply), so
// adding or removing a field keeps old and new peers compatible.
func Marshal(v any) (TypeID, []byte, error) {
	id, err := IDOfValue(v)
	if err != nil {
		return 0, nil, err
	}
	out, err := AppendPayload(nil, v)
	if err != nil {
		return 0, nil, err
	}
	return id, out, nil
}

// AppendPayload appends the msgpack encoding of v (the payload bytes
// [Marshal] returns for it) to b and returns the extended slice. v need not
// be registered, and a pointer encodes as the value it points to. It
// allocates only when b lacks the room, and returns a
// [*PayloadTooLargeError] if the encoding exceeds [MaxPayloadSize].
func AppendPayload(b []byte, v any) ([]byte, error) {
	s, err := encodePayload(v)
	if err != nil {
		return b, err
	}
	b = append(b, s.buf.Bytes()...)
	s.release()
	return b, nil
}

// Unmarshal decodes data, as encoded by [Marshal], into a new value of the
// type registered under id and returns that value (not a pointer to it,
// unless the registered type is itself a pointer type). The result does not
// alias data.
//
// It returns an [*UnknownTypeIDError] if no type is registered under id and
// a [*DecodeError] if data is not exactly one valid encoding of that type.
func Unmarshal(id TypeID, data []byte) (any, error) {
	info, ok := Lookup(id)
	if !ok {
		return nil, &UnknownTypeIDError{ID: id}
	}
	ptr := reflect.New(info.Type)
	if err := decodeInto(data, ptr.Interface()); err != nil {
		return nil, &DecodeError{ID: id, Err: err}
	}
	return ptr.Elem().Interface(), nil
}

// UnmarshalAs decodes data, as encoded by [Marshal], into a T. T need not be
// registered. It returns a [*DecodeError] if data is not exactly one valid
// encoding of T.
func UnmarshalAs[T any](data []byte) (T, error) {
	var v T
	if err := UnmarshalInto(data, &v); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// UnmarshalInto is [UnmarshalAs] decoding into *v, for a caller whose value
// already lives somewhere (a field of a request's record): decoding costs no
// allocation for the value itself. It returns [ErrNilMessage] for a nil v
// and a [*DecodeError] if data is not exactly one valid encoding of T; on
// error *v is left in an unspecified state.
func UnmarshalInto[T any](data []byte, v *T) error {
	if v == nil {
		return ErrNilMessage
	}
	if err := decodeInto(data, v); err != nil {
		id, _ := IDOf[T]()
		return &DecodeError{ID: id, Err: err}
	}
	return nil
}
