package messages

import (
	"bytes"
	"errors"
	"io"
	"math"
	"sync"
	"testing"
)

func sampleEnvelopes(t testing.TB) []Envelope {
	var out []Envelope
	for i, p := range samplePayloads() {
		e, err := NewEnvelope(p)
		if err != nil {
			t.Fatal(err)
		}
		e.CorrelationID = uint64(i) * 1e12
		e.Priority = Priority(i % 4)
		if i%2 == 0 {
			e.ReplyTo = "node-1:8090/ring-κ$" + string(rune('a'+i))
		}
		out = append(out, e)
	}
	out = append(out, Envelope{
		Header:  Header{ID: math.MaxUint64, CorrelationID: math.MaxUint64, Priority: PriorityCritical, ReplyTo: string(bytes.Repeat([]byte("r"), 300))},
		Payload: testPing{Seq: math.MaxUint64},
	})
	return out
}

func TestEnvelopeRoundTrip(t *testing.T) {
	for _, e := range sampleEnvelopes(t) {
		data, err := EncodeEnvelope(e)
		if err != nil {
			t.Fatalf("EncodeEnvelope(%T): %v", e.Payload, err)
		}
		got, err := DecodeEnvelope(data)
		if err != nil {
			t.Fatalf("DecodeEnvelope(%T): %v", e.Payload, err)
		}
		if e.Type == 0 {
			e.Type, _ = IDOfValue(e.Payload)
		}
		if got.Header != e.Header || !deepEqual(got.Payload, e.Payload) {
			t.Fatalf("round trip\n got %#v\nwant %#v", got, e)
		}
	}
}

func TestNewEnvelope(t *testing.T) {
	e, err := NewEnvelope(testPing{Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	if e.Type != testPingID || e.Priority != PriorityNormal || e.ID == 0 || e.CorrelationID != 0 || e.ReplyTo != "" {
		t.Fatalf("header = %+v", e.Header)
	}
	if _, err := NewEnvelope(nil); err != ErrNilMessage {
		t.Fatalf("NewEnvelope(nil) err = %v", err)
	}
	type unknown struct{}
	if _, err := NewEnvelope(unknown{}); !errors.Is(err, ErrUnregistered) {
		t.Fatalf("NewEnvelope(unregistered) err = %v", err)
	}
}

func TestNextIDIsUniqueAndIncreasing(t *testing.T) {
	const goroutines, each = 8, 1000
	var wg sync.WaitGroup
	results := make([][]uint64, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for range each {
				results[g] = append(results[g], NextID())
			}
		})
	}
	wg.Wait()
	seen := make(map[uint64]bool, goroutines*each)
	for _, ids := range results {
		for i, id := range ids {
			if id == 0 || seen[id] || (i > 0 && id <= ids[i-1]) {
				t.Fatalf("id %d repeats, is 0 or does not increase", id)
			}
			seen[id] = true
		}
	}
}

func TestPriorityString(t *testing.T) {
	for p, want := range map[Priority]string{
		PriorityLow: "low", PriorityNormal: "normal", PriorityHigh: "high", PriorityCritical: "critical", 9: "Priority(9)",
	} {
		if got := p.String(); got != want {
			t.Errorf("Priority(%d).String() = %q, want %q", uint8(p), got, want)
		}
	}
}

func TestEncodeEnvelopeErrors(t *testing.T) {
	if _, err := EncodeEnvelope(Envelope{}); err != ErrNilMessage {
		t.Fatalf("nil payload: err = %v", err)
	}
	type unknown struct{}
	if _, err := EncodeEnvelope(Envelope{Payload: unknown{}}); !errors.Is(err, ErrUnregistered) {
		t.Fatalf("unregistered payload: err = %v", err)
	}
	if _, err := EncodeEnvelope(Envelope{Header: Header{Type: testPointID}, Payload: testPing{}}); err == nil {
		t.Fatal("type mismatch: no error")
	}
	if _, err := EncodeEnvelope(Envelope{Header: Header{Priority: PriorityCritical + 1}, Payload: testPing{}}); err == nil {
		t.Fatal("invalid priority: no error")
	}
}

// encodeRawEnvelope builds an envelope from raw msgpack fields.
func encodeRawEnvelope(fields ...[]byte) []byte {
	b := appendArrayLen(nil, len(fields))
	for _, f := range fields {
		b = append(b, f...)
	}
	return b
}

func TestDecodeEnvelopeErrors(t *testing.T) {
	good, err := EncodeEnvelope(Envelope{Header: Header{ID: 7, ReplyTo: "a/b"}, Payload: testPing{Seq: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, payload, err := Marshal(testPing{Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	u := func(v uint64) []byte { return appendUint(nil, v) }
	pingType := u(uint64(testPingID))
	str := appendString(nil, "reply")
	bin := appendBin(nil, payload)
	cases := map[string][]byte{
		"nil":                   nil,
		"not an array":          {0xc0},
		"empty array":           {0x90},
		"trailing byte":         append(bytes.Clone(good), 0),
		"wrong version":         encodeRawEnvelope(u(2), u(1), u(0), u(1), pingType, str, bin),
		"future version":        encodeRawEnvelope(u(2)),
		"too few fields":        encodeRawEnvelope(u(1), u(1), u(0), u(1), pingType, str),
		"too many fields":       encodeRawEnvelope(u(1), u(1), u(0), u(1), pingType, str, bin, u(0)),
		"version is a string":   encodeRawEnvelope(str, u(1), u(0), u(1), pingType, str, bin),
		"id is a string":        encodeRawEnvelope(u(1), str, u(0), u(1), pingType, str, bin),
		"id is negative":        encodeRawEnvelope(u(1), []byte{0xff}, u(0), u(1), pingType, str, bin),
		"id is a float":         encodeRawEnvelope(u(1), []byte{0xca, 0, 0, 0, 0}, u(0), u(1), pingType, str, bin),
		"priority too high":     encodeRawEnvelope(u(1), u(1), u(0), u(4), pingType, str, bin),
		"type above uint32":     encodeRawEnvelope(u(1), u(1), u(0), u(1), u(1<<32), str, bin),
		"reply-to is nil":       encodeRawEnvelope(u(1), u(1), u(0), u(1), pingType, []byte{0xc0}, bin),
		"payload is a string":   encodeRawEnvelope(u(1), u(1), u(0), u(1), pingType, str, appendString(nil, string(payload))),
		"payload is corrupt":    encodeRawEnvelope(u(1), u(1), u(0), u(1), pingType, str, appendBin(nil, []byte{0xc1})),
		"payload is empty":      encodeRawEnvelope(u(1), u(1), u(0), u(1), pingType, str, appendBin(nil, nil)),
		"payload of wrong type": encodeRawEnvelope(u(1), u(1), u(0), u(1), pingType, str, appendBin(nil, []byte{0xa1, 'x'})),
		"huge reply-to":         encodeRawEnvelope(u(1), u(1), u(0), u(1), pingType, []byte{0xdb, 0x7f, 0xff, 0xff, 0xff}),
		"huge array":            {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01},
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			e, err := DecodeEnvelope(data)
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, ErrDecode) || de.Err == nil {
				t.Fatalf("err = %v, want *DecodeError", err)
			}
			if e.Payload != nil || e.Header != (Header{}) {
				t.Fatalf("failed decode returned %+v", e)
			}
		})
	}
	for i := range len(good) {
		if _, err := DecodeEnvelope(good[:i]); !errors.Is(err, ErrDecode) || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("truncated to %d bytes: err = %v, want a decode error wrapping io.ErrUnexpectedEOF", i, err)
		}
	}
}

func TestDecodeEnvelopeUnknownType(t *testing.T) {
	u := func(v uint64) []byte { return appendUint(nil, v) }
	for _, id := range []uint64{0, 0x0badf00d} {
		data := encodeRawEnvelope(u(1), u(1), u(0), u(1), u(id), appendString(nil, ""), appendBin(nil, []byte{0xc0}))
		_, err := DecodeEnvelope(data)
		var de *DecodeError
		var ke *UnknownTypeIDError
		if !errors.As(err, &de) || !errors.As(err, &ke) || ke.ID != TypeID(id) || de.ID != TypeID(id) {
			t.Fatalf("id %#x: err = %v, want *DecodeError wrapping *UnknownTypeIDError", id, err)
		}
		if !errors.Is(err, ErrDecode) || !errors.Is(err, ErrUnregistered) {
			t.Fatalf("id %#x: err = %v, want ErrDecode and ErrUnregistered", id, err)
		}
	}
}

func TestDecodeEnvelopePayloadTooLarge(t *testing.T) {
	u := func(v uint64) []byte { return appendUint(nil, v) }
	data := encodeRawEnvelope(u(1), u(1), u(0), u(1), u(uint64(testBlobID)), appendString(nil, ""),
		[]byte{0xc6, 0x04, 0x00, 0x00, 0x01}) // bin32 of 64 MiB + 1, with no bytes behind it
	_, err := DecodeEnvelope(data)
	var pe *PayloadTooLargeError
	if !errors.Is(err, ErrDecode) || !errors.As(err, &pe) || pe.Size != MaxPayloadSize+1 || pe.Max != MaxPayloadSize {
		t.Fatalf("err = %v, want a *DecodeError wrapping *PayloadTooLargeError", err)
	}
}
