package messages

import (
	"bytes"
	"errors"
	"runtime"
	"testing"
)

// testBig is a message type whose slice elements are large: nils standing
// for them amplify a payload by the element size.
type testBig struct {
	Items []testBigItem
	Ptrs  []*testBigItem
	ByKey map[string]testBigItem
}

type testBigItem struct {
	Values [512]float64
}

var testBigID = MustRegister[testBig]("ringactor.messages.test.Big")

func mpArr32(n int) []byte {
	return []byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
}

func mpKey(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }

// fieldOf returns a one-field map {name: value}.
func fieldOf(name string, value ...[]byte) []byte {
	b := append([]byte{0x81}, mpKey(name)...)
	for _, v := range value {
		b = append(b, v...)
	}
	return b
}

// allocatedBy returns the bytes f allocates (process-wide: the messages
// tests run nothing in the background).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// allowedAlloc is the allocation bound the tests hold decoding n bytes to:
// the budget plus the decoder's own state and the error.
func allowedAlloc(n int) uint64 {
	return uint64(DecodeAllocFactor*n + DecodeAllocSlack + 64<<10)
}

// TestNilsClaimingLargeElements decodes payloads of nils standing for large
// slice elements, pointees and map values: each fails with ErrAllocBudget
// having allocated in proportion to its size, where the decoder alone
// allocated 8 KiB (twice that for slices) per nil.
func TestNilsClaimingLargeElements(t *testing.T) {
	for _, size := range []int{4 << 10, 64 << 10} {
		n := size - 16
		nils := bytes.Repeat([]byte{0xc0}, n)
		empties := bytes.Repeat([]byte{0x80}, n)
		pairs := bytes.Repeat([]byte{0xa0, 0xc0}, n/2) // "": nil
		cases := map[string][]byte{
			"slice of nils":           fieldOf("Items", mpArr32(n), nils),
			"pointers to empty maps":  fieldOf("Ptrs", mpArr32(n), empties),
			"map of nils":             fieldOf("ByKey", []byte{0xdf, 0, 0, byte(n / 2 >> 8), byte(n / 2)}, pairs),
			"unknown field then more": append(append(append([]byte{0x82}, mpKey("Nope")...), 0xc0), fieldOf("Items", mpArr32(n-8), nils[:n-8])[1:]...),
		}
		for name, data := range cases {
			t.Run(name, func(t *testing.T) {
				var err error
				got := allocatedBy(func() { _, err = Unmarshal(testBigID, data) })
				var de *DecodeError
				if !errors.As(err, &de) || !errors.Is(err, ErrDecode) || !errors.Is(err, ErrAllocBudget) {
					t.Fatalf("err = %v, want a *DecodeError wrapping ErrAllocBudget", err)
				}
				if got > allowedAlloc(len(data)) {
					t.Fatalf("decoding %d bytes allocated %d bytes", len(data), got)
				}
				// And through the form that decodes into a caller's value
				// (internal/wire's typed form a cluster activation uses).
				var into testBig
				got = allocatedBy(func() { err = UnmarshalInto(data, &into) })
				if !errors.As(err, &de) || de.ID != testBigID || !errors.Is(err, ErrAllocBudget) {
					t.Fatalf("UnmarshalInto err = %v, want a *DecodeError of testBig wrapping ErrAllocBudget", err)
				}
				if got > allowedAlloc(len(data)) {
					t.Fatalf("UnmarshalInto of %d bytes allocated %d bytes", len(data), got)
				}
			})
		}
	}
}

// TestHostileArrayHeaders decodes array headers claiming far more elements
// than follow, flat and nested, into every test type.
func TestHostileArrayHeaders(t *testing.T) {
	nils := bytes.Repeat([]byte{0xc0}, 4<<10)
	nested := bytes.Repeat(mpArr32(0x7fffffff), 800)
	cases := map[string][]byte{
		"array32 max of nils":      append(mpArr32(0x7fffffff), nils...),
		"field array32 of nils":    fieldOf("Items", mpArr32(0x7fffffff), nils),
		"nested array32 headers":   append(nested, nils...),
		"field nested headers":     fieldOf("Items", nested, nils),
		"array16 of array32 nils":  append([]byte{0xdc, 0xff, 0xff}, append(mpArr32(0x7fffffff), nils...)...),
		"map32 of nils":            append([]byte{0xdf, 0x7f, 0xff, 0xff, 0xff}, nils...),
		"field map32 of nils":      fieldOf("ByKey", []byte{0xdf, 0x7f, 0xff, 0xff, 0xff}, nils),
		"field bin32 then nothing": fieldOf("Items", []byte{0xc6, 0x7f, 0xff, 0xff, 0xff}, nils),
	}
	ids := []TypeID{testBigID, testAnyListID, testPointListID, testRichID, testFloatsID, testBlobID}
	for name, data := range cases {
		for _, id := range ids {
			var err error
			got := allocatedBy(func() { _, err = Unmarshal(id, data) })
			if !errors.Is(err, ErrDecode) {
				t.Fatalf("%s into %v: err = %v, want ErrDecode", name, id, err)
			}
			if got > allowedAlloc(len(data)) {
				t.Fatalf("%s into %v: decoding %d bytes allocated %d bytes", name, id, len(data), got)
			}
		}
	}
}

// TestBudgetAdmitsRealPayloads checks that dense, legitimate payloads of
// the amplifying type still decode.
func TestBudgetAdmitsRealPayloads(t *testing.T) {
	v := testBig{
		Items: make([]testBigItem, 3),
		Ptrs:  []*testBigItem{{}, nil},
		ByKey: map[string]testBigItem{"a": {}},
	}
	v.Items[1].Values[7] = 1.5
	id, data, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(id, data)
	if err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	if !deepEqual(got, v) {
		t.Fatalf("round trip changed the value")
	}
	for _, p := range samplePayloads() {
		id, data, err := Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Unmarshal(id, data); err != nil {
			t.Fatalf("%T: %v", p, err)
		}
	}
}

// FuzzDecodeAllocation checks that no input makes a decode allocate more
// than a constant times its size plus a fixed slack.
func FuzzDecodeAllocation(f *testing.F) {
	f.Add(uint32(testBigID), fieldOf("Items", mpArr32(64), bytes.Repeat([]byte{0xc0}, 64)))
	f.Add(uint32(testBigID), fieldOf("Ptrs", mpArr32(64), bytes.Repeat([]byte{0x80}, 64)))
	f.Add(uint32(testBigID), fieldOf("ByKey", []byte{0x84}, bytes.Repeat([]byte{0xa0, 0xc0}, 4)))
	f.Add(uint32(testAnyListID), fieldOf("Items", mpArr32(64), bytes.Repeat([]byte{0x90}, 64)))
	f.Add(uint32(testRichID), fieldOf("Extra", []byte{0x82, 0xa1, 'a', 0x80, 0xa1, 'b', 0x90}))
	for _, p := range samplePayloads() {
		id, data, err := Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint32(id), data)
	}
	f.Fuzz(func(t *testing.T, id uint32, data []byte) {
		var err error
		got := allocatedBy(func() { _, err = Unmarshal(TypeID(id), data) })
		if err != nil && !errors.Is(err, ErrDecode) && !errors.Is(err, ErrUnregistered) {
			t.Fatalf("unexpected error type: %v", err)
		}
		// The largest registered test type is allocated whatever the input.
		if limit := allowedAlloc(len(data)) + 8<<10; got > limit {
			t.Fatalf("decoding %d bytes into %v allocated %d bytes (limit %d)", len(data), TypeID(id), got, limit)
		}
	})
}
