package messages

import (
	"errors"
	"testing"
)

func FuzzDecodeEnvelope(f *testing.F) {
	for _, e := range sampleEnvelopes(f) {
		data, err := EncodeEnvelope(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		for _, n := range []int{1, 2, 5, len(data) / 2, len(data) - 1} {
			if n < len(data) {
				f.Add(data[:n])
			}
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0x97, 0x01, 0x01, 0x00, 0x01, 0xce, 0x00, 0x00, 0x00, 0x01, 0xa0, 0xc6, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := DecodeEnvelope(data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, ErrDecode) {
				t.Fatalf("error is not a *DecodeError: %v", err)
			}
			return
		}
		again, err := EncodeEnvelope(e)
		if err != nil {
			t.Fatalf("decoded envelope %#v does not re-encode: %v", e, err)
		}
		e2, err := DecodeEnvelope(again)
		if err != nil {
			t.Fatalf("re-encoded envelope does not decode: %v", err)
		}
		if e2.Header != e.Header || !deepEqual(e2.Payload, e.Payload) {
			t.Fatalf("round trip changed the envelope\nfirst  %#v\nsecond %#v", e, e2)
		}
	})
}

func FuzzUnmarshal(f *testing.F) {
	for _, p := range samplePayloads() {
		id, data, err := Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint32(id), data)
		f.Add(uint32(id), data[:len(data)/2])
	}
	f.Add(uint32(testPointListID), []byte{0x81, 0xa6, 'P', 'o', 'i', 'n', 't', 's', 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add(uint32(testAnyListID), []byte{0x81, 0xa5, 'I', 't', 'e', 'm', 's', 0x91, 0x91, 0x91, 0xc0})
	f.Add(uint32(0), []byte{0xc0})
	f.Fuzz(func(t *testing.T, id uint32, data []byte) {
		v, err := Unmarshal(TypeID(id), data)
		if err != nil {
			if !errors.Is(err, ErrDecode) && !errors.Is(err, ErrUnregistered) {
				t.Fatalf("unexpected error type: %v", err)
			}
			return
		}
		gotID, again, err := Marshal(v)
		if err != nil {
			t.Fatalf("decoded %#v does not re-encode: %v", v, err)
		}
		if gotID != TypeID(id) {
			t.Fatalf("decoded a %T (id %v) for id %v", v, gotID, TypeID(id))
		}
		v2, err := Unmarshal(gotID, again)
		if err != nil {
			t.Fatalf("re-encoded value does not decode: %v", err)
		}
		if !deepEqual(v, v2) {
			t.Fatalf("round trip changed the value\nfirst  %#v\nsecond %#v", v, v2)
		}
	})
}
