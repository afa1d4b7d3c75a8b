package messages

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestMarshalRoundTrip(t *testing.T) {
	for _, v := range samplePayloads() {
		id, data, err := Marshal(v)
		if err != nil {
			t.Fatalf("Marshal(%T): %v", v, err)
		}
		if want, _ := IDOfValue(v); id != want {
			t.Fatalf("Marshal(%T) id = %v, want %v", v, id, want)
		}
		got, err := Unmarshal(id, data)
		if err != nil {
			t.Fatalf("Unmarshal(%T): %v", v, err)
		}
		if reflect.TypeOf(got) != reflect.TypeOf(v) {
			t.Fatalf("Unmarshal returned %T, want %T", got, v)
		}
		if !deepEqual(got, v) {
			t.Fatalf("Unmarshal(%T)\n got %#v\nwant %#v", v, got, v)
		}
	}
}

func TestUnmarshalAs(t *testing.T) {
	want := sampleRich()
	_, data, err := Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalAs[testRich](data)
	if err != nil || !deepEqual(got, want) {
		t.Fatalf("UnmarshalAs = %#v, %v", got, err)
	}
	// T need not be registered: the wire form of a struct is a map.
	type partial struct {
		Name    string
		Counter int
	}
	p, err := UnmarshalAs[partial](data)
	if err != nil || p.Name != want.Name || p.Counter != want.Counter {
		t.Fatalf("UnmarshalAs[partial] = %+v, %v", p, err)
	}
}

func TestUnmarshalDoesNotAliasInput(t *testing.T) {
	_, data, err := Marshal(testBlob("abc"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := Unmarshal(testBlobID, data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] = 0
	}
	if string(v.(testBlob)) != "abc" {
		t.Fatalf("decoded value changed with its input: %q", v)
	}
}

func TestMarshalErrors(t *testing.T) {
	if _, _, err := Marshal(nil); err != ErrNilMessage {
		t.Fatalf("Marshal(nil) err = %v", err)
	}
	type unknown struct{}
	_, _, err := Marshal(unknown{})
	var ue *UnregisteredTypeError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnregistered) {
		t.Fatalf("Marshal(unregistered) err = %v", err)
	}
}

func TestMarshalPayloadTooLarge(t *testing.T) {
	_, _, err := Marshal(make(testBlob, MaxPayloadSize))
	var pe *PayloadTooLargeError
	if !errors.As(err, &pe) || pe.Max != MaxPayloadSize || pe.Size <= MaxPayloadSize {
		t.Fatalf("err = %v, want *PayloadTooLargeError", err)
	}
	if _, err := EncodeEnvelope(Envelope{Payload: make(testBlob, MaxPayloadSize)}); !errors.As(err, &pe) {
		t.Fatalf("EncodeEnvelope err = %v, want *PayloadTooLargeError", err)
	}
	if _, err := Unmarshal(testBlobID, make([]byte, MaxPayloadSize+1)); !errors.As(err, &pe) || !errors.Is(err, ErrDecode) {
		t.Fatalf("Unmarshal err = %v, want a *DecodeError wrapping *PayloadTooLargeError", err)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	_, err := Unmarshal(0x12345678, []byte{0xc0})
	var ke *UnknownTypeIDError
	if !errors.As(err, &ke) || ke.ID != 0x12345678 || !errors.Is(err, ErrUnregistered) {
		t.Fatalf("unknown id: err = %v", err)
	}
	if !strings.Contains(err.Error(), "0x12345678") {
		t.Fatalf("message = %q", err)
	}

	_, good, err := Marshal(testPing{Seq: 3, Note: "n"})
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{
		"empty":          nil,
		"truncated":      good[:len(good)-1],
		"trailing":       append(bytes.Clone(good), 0xc0),
		"wrong type":     {0xa3, 'a', 'b', 'c'},                  // a string, not a map
		"wrong field":    {0x81, 0xa3, 'S', 'e', 'q', 0xa1, 'x'}, // Seq: "x"
		"reserved code":  {0xc1},
		"unknown ext":    {0xd4, 0x05, 0x00},
		"huge str":       {0xdb, 0xff, 0xff, 0xff, 0xff},
		"two values":     {0xc0, 0xc0},
		"nested trailer": {0x91, 0xc0, 0xc0},
	}
	for name, data := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := Unmarshal(testPingID, data)
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, ErrDecode) || de.ID != testPingID || de.Err == nil {
				t.Fatalf("err = %v, want *DecodeError", err)
			}
			if _, err := UnmarshalAs[testPing](data); !errors.As(err, &de) || de.ID != testPingID {
				t.Fatalf("UnmarshalAs err = %v, want *DecodeError", err)
			}
		})
	}
	if _, err := Unmarshal(testPingID, good[:1]); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated: err = %v, want it to wrap io.ErrUnexpectedEOF", err)
	}
}

// TestHostileLengthPrefixes checks that a length prefix claiming billions of
// elements is rejected before the msgpack decoder sizes anything by it.
func TestHostileLengthPrefixes(t *testing.T) {
	cases := []struct {
		name string
		id   TypeID
		data []byte
	}{
		{"array32 of structs", testPointListID, []byte{0x81, 0xa6, 'P', 'o', 'i', 'n', 't', 's', 0xdd, 0xff, 0xff, 0xff, 0xff}},
		{"array32 of any", testAnyListID, []byte{0x81, 0xa5, 'I', 't', 'e', 'm', 's', 0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0}},
		{"array32 of float32", testFloatsID, []byte{0xdd, 0x7f, 0xff, 0xff, 0xff, 0xca, 0, 0, 0, 0}},
		{"map32", testRichID, []byte{0xdf, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0}},
		{"nested map32", testRichID, []byte{0x81, 0xa5, 'E', 'x', 't', 'r', 'a', 0xdf, 0xff, 0xff, 0xff, 0xff}},
		{"bin32", testBlobID, []byte{0xc6, 0xff, 0xff, 0xff, 0xff, 0}},
		{"ext32", testAnyListID, []byte{0xc9, 0xff, 0xff, 0xff, 0xff, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Unmarshal(c.id, c.data)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrDecode) {
				t.Fatalf("err = %v, want a decode error", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Fatalf("decoding %d hostile bytes allocated %d bytes", len(c.data), n)
			}
		})
	}
}

func TestDeepNesting(t *testing.T) {
	deep := func(levels int) []byte {
		b := []byte{0x81, 0xa5, 'I', 't', 'e', 'm', 's', 0x91}
		for range levels - 1 {
			b = append(b, 0x91)
		}
		return append(b, 0xc0)
	}
	// Items is one level; maxNestingDepth levels of arrays below the top map.
	if _, err := Unmarshal(testAnyListID, deep(maxNestingDepth-1)); err != nil {
		t.Fatalf("nesting at the limit: %v", err)
	}
	_, err := Unmarshal(testAnyListID, deep(1<<20))
	if !errors.Is(err, ErrDecode) || !errors.Is(err, errTooDeep) {
		t.Fatalf("err = %v, want a decode error for nesting", err)
	}
}

func TestEncodeAllocatesOnlyOutput(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	v := testPing{Seq: 99, Note: "steady"}
	if allocs := testing.AllocsPerRun(1000, func() {
		if _, _, err := Marshal(v); err != nil {
			t.Fatal(err)
		}
	}); allocs > 2 { // the output, and v boxed into an interface
		t.Fatalf("Marshal allocates %v times per call", allocs)
	}
	e := Envelope{Header: Header{ID: 1, Type: testPtrID}, Payload: &testPoint{1, 2}}
	if allocs := testing.AllocsPerRun(1000, func() {
		if _, err := EncodeEnvelope(e); err != nil {
			t.Fatal(err)
		}
	}); allocs != 1 {
		t.Fatalf("EncodeEnvelope allocates %v times per call, want 1", allocs)
	}
}

// TestAppendPayloadAndUnmarshalIntoAllocs pins the forms that use a
// caller's memory: AppendPayload into a buffer with room and UnmarshalInto a
// caller's value (without strings or slices) allocate nothing.
func TestAppendPayloadAndUnmarshalIntoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	v := &testPoint{X: 1, Y: 2}
	buf := make([]byte, 0, 64)
	if allocs := testing.AllocsPerRun(1000, func() {
		var err error
		if buf, err = AppendPayload(buf[:0], v); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Fatalf("AppendPayload allocates %v times per call", allocs)
	}
	var got testPoint
	if allocs := testing.AllocsPerRun(1000, func() {
		if err := UnmarshalInto(buf, &got); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Fatalf("UnmarshalInto allocates %v times per call", allocs)
	}
	if got != *v {
		t.Fatalf("decoded %+v, want %+v", got, *v)
	}
}
