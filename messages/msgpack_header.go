package messages

import "fmt"

// msgpack value kinds, as mpHeader reports them.
const (
	hScalar = iota
	hNil
	hStr
	hBin
	hArray
	hMap
	hExt
)

// mpHeader reads the header of the value b starts with: its kind, its length
// (bytes for str, bin and ext; elements for arrays; pairs for maps) and what
// follows the header (a fixed-size scalar's bytes included). It is the one
// decoder of msgpack headers: validateMsgpack's skimValue and the allocation
// budget's walker both read values with it; bounds are checked, so it is safe
// on unvalidated input.
func mpHeader(b []byte) (kind int, n uint64, rest []byte, err error) {
	if len(b) == 0 {
		return 0, 0, nil, errTruncated
	}
	c := b[0]
	b = b[1:]
	switch {
	case c <= 0x7f || c >= 0xe0: // positive and negative fixint
		return hScalar, 0, b, nil
	case c <= 0x8f:
		return hMap, uint64(c & 0x0f), b, nil
	case c <= 0x9f:
		return hArray, uint64(c & 0x0f), b, nil
	case c <= 0xbf:
		return hStr, uint64(c & 0x1f), b, nil
	}
	var sizeLen int  // bytes of the length prefix
	var extra uint64 // bytes beyond the length (an ext's type byte)
	switch c {
	case 0xc0:
		return hNil, 0, b, nil
	case 0xc2, 0xc3: // false, true
		return hScalar, 0, b, nil
	case 0xcc, 0xd0: // uint8, int8
		return fixedScalar(b, 1)
	case 0xcd, 0xd1: // uint16, int16
		return fixedScalar(b, 2)
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		return fixedScalar(b, 4)
	case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
		return fixedScalar(b, 8)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16
		return hExt, 1 + 1<<(c-0xd4), b, nil
	case 0xc4, 0xc5, 0xc6: // bin8, bin16, bin32
		kind, sizeLen = hBin, 1<<(c-0xc4)
	case 0xc7, 0xc8, 0xc9: // ext8, ext16, ext32
		kind, sizeLen, extra = hExt, 1<<(c-0xc7), 1
	case 0xd9, 0xda, 0xdb: // str8, str16, str32
		kind, sizeLen = hStr, 1<<(c-0xd9)
	case 0xdc, 0xdd: // array16, array32
		kind, sizeLen = hArray, 2<<(c-0xdc)
	case 0xde, 0xdf: // map16, map32
		kind, sizeLen = hMap, 2<<(c-0xde)
	default:
		return 0, 0, nil, fmt.Errorf("invalid msgpack code 0x%02x", c)
	}
	if len(b) < sizeLen {
		return 0, 0, nil, errTruncated
	}
	for _, x := range b[:sizeLen] {
		n = n<<8 | uint64(x)
	}
	return kind, n + extra, b[sizeLen:], nil
}

// fixedScalar is mpHeader's result for a scalar of size bytes.
func fixedScalar(b []byte, size int) (int, uint64, []byte, error) {
	if len(b) < size {
		return 0, 0, nil, errTruncated
	}
	return hScalar, 0, b[size:], nil
}

// scalarSize[c] is the whole size, header included, of a value whose first
// byte is c when it is a scalar or nil, and 0 otherwise: mpHeader's answer
// tabulated, for skimValue's hot path (most values of a payload are numbers).
var scalarSize = func() (t [256]uint8) {
	var buf [9]byte // the longest scalar: a code and 8 bytes
	for c := range t {
		buf[0] = byte(c)
		if kind, _, rest, err := mpHeader(buf[:]); err == nil && (kind == hScalar || kind == hNil) {
			t[c] = uint8(len(buf) - len(rest))
		}
	}
	return t
}()
