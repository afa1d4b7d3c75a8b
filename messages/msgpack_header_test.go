package messages

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// TestMpHeader checks mpHeader on every header form the msgpack encoder
// writes: kind, length and where the value's data starts; and that a
// header cut short is errTruncated.
func TestMpHeader(t *testing.T) {
	for _, c := range []struct {
		v    any
		kind int
		n    uint64
		data int // bytes after the header that belong to the value
	}{
		{int8(-100), hScalar, 0, 0}, {uint8(200), hScalar, 0, 0}, {int16(-1000), hScalar, 0, 0},
		{uint16(60000), hScalar, 0, 0}, {int32(-1 << 20), hScalar, 0, 0}, {uint32(1 << 30), hScalar, 0, 0},
		{int64(-1 << 40), hScalar, 0, 0}, {uint64(1 << 63), hScalar, 0, 0}, {float32(1.5), hScalar, 0, 0},
		{1.5, hScalar, 0, 0}, {true, hScalar, 0, 0}, {nil, hNil, 0, 0}, {7, hScalar, 0, 0}, {-3, hScalar, 0, 0},
		{strings.Repeat("s", 31), hStr, 31, 31}, {strings.Repeat("s", 32), hStr, 32, 32},
		{strings.Repeat("s", 256), hStr, 256, 256}, {strings.Repeat("s", 1<<16), hStr, 1 << 16, 1 << 16},
		{[]byte("bin"), hBin, 3, 3}, {bytes.Repeat([]byte{1}, 256), hBin, 256, 256},
		{bytes.Repeat([]byte{1}, 1<<16), hBin, 1 << 16, 1 << 16},
		{make([]int, 15), hArray, 15, 15}, {make([]int, 16), hArray, 16, 16}, {make([]int, 1<<16), hArray, 1 << 16, 1 << 16},
		{map[string]int{"a": 1}, hMap, 1, 3},
	} {
		b, err := msgpack.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		kind, n, rest, err := mpHeader(b)
		if err != nil || kind != c.kind || n != c.n || len(rest) != c.data {
			t.Errorf("%T: mpHeader = kind %d, n %d, %d bytes left, %v; want kind %d, n %d, %d bytes left",
				c.v, kind, n, len(rest), err, c.kind, c.n, c.data)
		}
		if c.data == 0 && len(b) > 1 {
			if _, _, _, err := mpHeader(b[:len(b)-1]); !errors.Is(err, errTruncated) {
				t.Errorf("%T cut short: %v, want errTruncated", c.v, err)
			}
		}
	}
	for code, want := range map[byte]struct {
		kind int
		n    uint64
	}{0xd4: {hExt, 2}, 0xd8: {hExt, 17}, 0xc7: {hExt, 1 + 5}} {
		b := []byte{code, 5, 0, 0, 0, 0, 0, 0}
		if kind, n, _, err := mpHeader(b); err != nil || kind != want.kind || n != want.n {
			t.Errorf("0x%02x: kind %d, n %d, %v; want kind %d, n %d", code, kind, n, err, want.kind, want.n)
		}
	}
	if _, _, _, err := mpHeader([]byte{0xc1}); err == nil || !strings.Contains(err.Error(), "0xc1") {
		t.Errorf("0xc1: %v, want an invalid-code error", err)
	}
	if _, _, _, err := mpHeader([]byte{0xdd, 0, 0}); !errors.Is(err, errTruncated) {
		t.Errorf("array32 with a 2-byte length: %v, want errTruncated", err)
	}
}

// TestScalarSize: skimValue's table of whole scalar sizes, from mpHeader.
func TestScalarSize(t *testing.T) {
	for c, want := range map[byte]uint8{0x05: 1, 0xff: 1, 0xc0: 1, 0xc3: 1, 0xcc: 2, 0xd1: 3, 0xca: 5, 0xcb: 9, 0xd3: 9, 0xa1: 0, 0x91: 0, 0xc4: 0, 0xd4: 0, 0xc1: 0} {
		if got := scalarSize[c]; got != want {
			t.Errorf("scalarSize[0x%02x] = %d, want %d", c, got, want)
		}
	}
	if _, err := skimValue([]byte{0xcb, 0, 0}, 0); !errors.Is(err, errTruncated) {
		t.Errorf("a float64 cut short: %v, want errTruncated", err)
	}
}
