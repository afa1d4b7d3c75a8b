package wire

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/messages"
)

// testPinger is implemented by testPing, for the interface form
// of UnpackAs.
type testPinger interface{ ping() uint64 }

func (p testPing) ping() uint64 { return p.Seq }

func TestTypedRoundTrip(t *testing.T) {
	h := messages.Header{ID: 7, CorrelationID: 3, Priority: messages.PriorityHigh, ReplyTo: "a/b"}
	for _, note := range []string{"", "short", strings.Repeat("x", inlinePayload), strings.Repeat("y", 4<<10)} {
		v := testPing{Seq: 42, Note: note}
		w, err := PackOf(v, h, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The typed and untyped forms agree on the wire.
		u, err := Pack(messages.Envelope{Header: h, Payload: v}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.Payload, u.Payload) || w.TypeId != u.TypeId || w.Id != u.Id || w.CorrelationId != u.CorrelationId ||
			w.Priority != u.Priority || w.ReplyTo != u.ReplyTo {
			t.Fatalf("note of %d bytes: PackOf %v, Pack %v", len(note), w, u)
		}
		gh, got, err := UnpackAs[testPing](w, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := h
		want.Type = testPingID
		if gh != want || got != v {
			t.Fatalf("round trip: got %+v %+v, want %+v %+v", gh, got, want, v)
		}
		env, err := Unpack(w, 0)
		if err != nil || env.Payload != any(v) {
			t.Fatalf("Unpack of PackOf: %v, %v", env, err)
		}
		// An interface type decodes as the registered type.
		_, p, err := UnpackAs[testPinger](w, 0)
		if err != nil || p.ping() != 42 {
			t.Fatalf("interface form: %v, %v", p, err)
		}
		var a any = v
		if wa, err := PackOf(a, h, 0); err != nil || !bytes.Equal(wa.Payload, w.Payload) || wa.TypeId != w.TypeId {
			t.Fatalf("PackOf[any]: %v, %v", wa, err)
		}
	}
}

// TestPackOfPayloadIsItsOwn checks that envelopes made one after the other
// do not share payload memory (the inline buffer and the pooled encoder).
func TestPackOfPayloadIsItsOwn(t *testing.T) {
	var ws []*WireEnvelope
	for i := range 50 {
		w, err := PackOf(testPing{Seq: uint64(i), Note: fmt.Sprint(i)}, messages.Header{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	for i, w := range ws {
		_, got, err := UnpackAs[testPing](w, 0)
		if err != nil || got.Seq != uint64(i) || got.Note != fmt.Sprint(i) {
			t.Fatalf("envelope %d: %+v, %v", i, got, err)
		}
	}
}

func TestPackOfErrors(t *testing.T) {
	if _, err := PackOf[any](nil, messages.Header{}, 0); !errors.Is(err, messages.ErrNilMessage) {
		t.Errorf("nil: %v", err)
	}
	if _, err := PackOf(wireUnregistered{1}, messages.Header{}, 0); !errors.Is(err, messages.ErrUnregistered) {
		t.Errorf("unregistered: %v", err)
	}
	if _, err := PackOf(testPing{}, messages.Header{Type: testPointID}, 0); err == nil {
		t.Error("mismatched header type accepted")
	}
	if _, err := PackOf(testPing{}, messages.Header{Priority: messages.PriorityCritical + 1}, 0); err == nil {
		t.Error("bad priority accepted")
	}
	if _, err := PackOf(testPing{}, messages.Header{ReplyTo: strings.Repeat("x", MaxReplyToLen+1)}, 0); err == nil {
		t.Error("long reply-to accepted")
	}
	var tl *messages.PayloadTooLargeError
	if _, err := PackOf(testPing{Note: strings.Repeat("x", 100)}, messages.Header{}, 64); !errors.As(err, &tl) || tl.Max != 64 {
		t.Errorf("too large: %v", err)
	}
}

func TestUnpackAsErrors(t *testing.T) {
	if _, _, err := UnpackAs[testPing](nil, 0); !errors.Is(err, messages.ErrNilMessage) {
		t.Errorf("nil: %v", err)
	}
	var uk *messages.UnknownTypeIDError
	if _, _, err := UnpackAs[testPing](&WireEnvelope{TypeId: 0xdeadbeef, Payload: []byte{0x80}}, 0); !errors.As(err, &uk) || !errors.Is(err, messages.ErrUnregistered) {
		t.Errorf("unknown id: %v", err)
	}
	if _, _, err := UnpackAs[wireUnregistered](&WireEnvelope{TypeId: uint32(testPingID), Payload: []byte{0x80}}, 0); !errors.Is(err, messages.ErrUnregistered) {
		t.Errorf("unregistered T: %v", err)
	}
	w, err := PackOf(testPoint{X: 1}, messages.Header{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var mm *TypeMismatchError
	if _, _, err := UnpackAs[testPing](w, 0); !errors.As(err, &mm) || !errors.Is(err, messages.ErrDecode) || mm.GotID != testPointID || mm.WantID != testPingID {
		t.Errorf("mismatch: %v", err)
	}
	if _, _, err := UnpackAs[testPinger](w, 0); !errors.As(err, &mm) || !errors.Is(err, messages.ErrDecode) {
		t.Errorf("mismatch (interface): %v", err)
	}
	var tl *messages.PayloadTooLargeError
	if _, _, err := UnpackAs[testBlob](&WireEnvelope{TypeId: uint32(testBlobID), Payload: bytes.Repeat([]byte{0xc1}, 65)}, 64); !errors.As(err, &tl) || errors.Is(err, messages.ErrDecode) {
		t.Errorf("oversize: %v", err)
	}
	for name, w := range map[string]*WireEnvelope{
		"bad msgpack":    {TypeId: uint32(testPingID), Payload: []byte{0xc1}},
		"wrong shape":    {TypeId: uint32(testPingID), Payload: []byte{0xa2, 'h', 'i'}},
		"truncated":      {TypeId: uint32(testPingID), Payload: []byte{0x82, 0xa3, 'S'}},
		"trailing bytes": {TypeId: uint32(testPingID), Payload: []byte{0x80, 0x80}},
		"empty payload":  {TypeId: uint32(testPingID)},
		"hostile length": {TypeId: uint32(testPingID), Payload: []byte{0x81, 0xa4, 'N', 'o', 't', 'e', 0xdb, 0xff, 0xff, 0xff, 0xff}},
		"priority":       {TypeId: uint32(testPingID), Priority: 4, Payload: []byte{0x80}},
		"long reply-to":  {TypeId: uint32(testPingID), ReplyTo: strings.Repeat("x", MaxReplyToLen+1), Payload: []byte{0x80}},
	} {
		_, _, err := UnpackAs[testPing](w, 0)
		var de *messages.DecodeError
		if !errors.As(err, &de) || !errors.Is(err, messages.ErrDecode) || de.ID != testPingID {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// BenchmarkWireTyped and BenchmarkWireUntyped compare a round trip of a
// small message through the typed and the untyped wire conversions.
func BenchmarkWireTyped(b *testing.B) {
	v := testPing{Seq: 42, Note: "benchmark"}
	b.ReportAllocs()
	for b.Loop() {
		w, err := PackOf(v, messages.Header{ID: 1}, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := UnpackAs[testPing](w, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWireUntyped(b *testing.B) {
	v := testPing{Seq: 42, Note: "benchmark"}
	b.ReportAllocs()
	for b.Loop() {
		w, err := Pack(messages.Envelope{Header: messages.Header{ID: 1}, Payload: v}, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Unpack(w, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPackFromAndUnpackInto(t *testing.T) {
	h := messages.Header{ID: 9, CorrelationID: 4}
	v := testPing{Seq: 5, Note: "into"}
	w, err := PackFrom(&v, h, 0)
	if err != nil {
		t.Fatal(err)
	}
	u, err := PackOf(v, h, 0)
	if err != nil || !bytes.Equal(w.Payload, u.Payload) || w.TypeId != u.TypeId {
		t.Fatalf("PackFrom %v, PackOf %v (%v)", w, u, err)
	}
	got := testPing{Seq: 99, Note: "old"}
	gh, err := UnpackInto(w, 0, &got)
	if err != nil || got != v || gh.ID != 9 || gh.CorrelationID != 4 || gh.Type != testPingID {
		t.Fatalf("UnpackInto: %+v %+v %v", gh, got, err)
	}
	// Interface types go through the registered type.
	var p testPinger
	if _, err := UnpackInto(w, 0, &p); err != nil || p.ping() != 5 {
		t.Fatalf("UnpackInto an interface: %v, %v", p, err)
	}
	var a any = v
	if wa, err := PackFrom(&a, h, 0); err != nil || !bytes.Equal(wa.Payload, w.Payload) {
		t.Fatalf("PackFrom an interface: %v, %v", wa, err)
	}
	// Errors.
	if _, err := PackFrom[testPing](nil, h, 0); !errors.Is(err, messages.ErrNilMessage) {
		t.Errorf("nil pointer: %v", err)
	}
	var none any
	if _, err := PackFrom(&none, h, 0); !errors.Is(err, messages.ErrNilMessage) {
		t.Errorf("nil interface: %v", err)
	}
	if _, err := PackFrom(&wireUnregistered{}, h, 0); !errors.Is(err, messages.ErrUnregistered) {
		t.Errorf("unregistered: %v", err)
	}
	if _, err := UnpackInto[testPing](w, 0, nil); !errors.Is(err, messages.ErrNilMessage) {
		t.Errorf("nil target: %v", err)
	}
	var pt testPoint
	var mm *TypeMismatchError
	if _, err := UnpackInto(w, 0, &pt); !errors.As(err, &mm) {
		t.Errorf("mismatch: %v", err)
	}
}
