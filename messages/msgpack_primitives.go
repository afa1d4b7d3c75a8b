package messages

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// Hand-rolled msgpack primitives for the envelope header. They keep the
// header strict (each field must have exactly its wire type) and cheap: no
// reflection, no allocation beyond the output.

// msgpack format codes used by the header.
const (
	mpNil      = 0xc0
	mpBin8     = 0xc4
	mpBin16    = 0xc5
	mpBin32    = 0xc6
	mpUint8    = 0xcc
	mpUint16   = 0xcd
	mpUint32   = 0xce
	mpUint64   = 0xcf
	mpStr8     = 0xd9
	mpStr16    = 0xda
	mpStr32    = 0xdb
	mpArray16  = 0xdc
	mpArray32  = 0xdd
	mpFixArray = 0x90
	mpFixStr   = 0xa0
)

func appendUint(b []byte, v uint64) []byte {
	switch {
	case v <= 0x7f:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, mpUint8, byte(v))
	case v <= math.MaxUint16:
		return append(b, mpUint16, byte(v>>8), byte(v))
	case v <= math.MaxUint32:
		return append(b, mpUint32, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	default:
		return append(b, mpUint64, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
			byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
}

func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, mpFixArray|byte(n))
	case n <= math.MaxUint16:
		return append(b, mpArray16, byte(n>>8), byte(n))
	default:
		return append(b, mpArray32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

func appendString(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n <= 31:
		b = append(b, mpFixStr|byte(n))
	case n <= math.MaxUint8:
		b = append(b, mpStr8, byte(n))
	case n <= math.MaxUint16:
		b = append(b, mpStr16, byte(n>>8), byte(n))
	default:
		b = append(b, mpStr32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, s...)
}

func appendBin(b []byte, p []byte) []byte {
	n := len(p)
	switch {
	case n <= math.MaxUint8:
		b = append(b, mpBin8, byte(n))
	case n <= math.MaxUint16:
		b = append(b, mpBin16, byte(n>>8), byte(n))
	default:
		b = append(b, mpBin32, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, p...)
}

// errTruncated is wrapped by every error about input that ends too early.
var errTruncated = io.ErrUnexpectedEOF

// wireReader reads strict msgpack header fields from a byte slice. Results
// never alias more than the input; no read allocates.
type wireReader struct {
	b []byte
}

func (r *wireReader) byte(field string) (byte, error) {
	if len(r.b) == 0 {
		return 0, fmt.Errorf("%s: %w", field, errTruncated)
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c, nil
}

// bigEndian reads an n-byte (n <= 8) big-endian unsigned integer.
func (r *wireReader) bigEndian(field string, n int) (uint64, error) {
	if len(r.b) < n {
		return 0, fmt.Errorf("%s: %w", field, errTruncated)
	}
	var v uint64
	for _, c := range r.b[:n] {
		v = v<<8 | uint64(c)
	}
	r.b = r.b[n:]
	return v, nil
}

// uint reads an unsigned integer in any msgpack unsigned encoding and
// rejects it if it exceeds max.
func (r *wireReader) uint(field string, max uint64) (uint64, error) {
	c, err := r.byte(field)
	if err != nil {
		return 0, err
	}
	var v uint64
	switch {
	case c <= 0x7f:
		v = uint64(c)
	case c == mpUint8:
		v, err = r.bigEndian(field, 1)
	case c == mpUint16:
		v, err = r.bigEndian(field, 2)
	case c == mpUint32:
		v, err = r.bigEndian(field, 4)
	case c == mpUint64:
		v, err = r.bigEndian(field, 8)
	default:
		return 0, fmt.Errorf("%s: want an unsigned integer, got msgpack code 0x%02x", field, c)
	}
	if err != nil {
		return 0, err
	}
	if v > max {
		return 0, fmt.Errorf("%s: %d is out of range (max %d)", field, v, max)
	}
	return v, nil
}

// arrayLen reads an array header.
func (r *wireReader) arrayLen(field string) (int, error) {
	c, err := r.byte(field)
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c&0xf0 == mpFixArray:
		n = uint64(c & 0x0f)
	case c == mpArray16:
		n, err = r.bigEndian(field, 2)
	case c == mpArray32:
		n, err = r.bigEndian(field, 4)
	default:
		return 0, fmt.Errorf("%s: want an array, got msgpack code 0x%02x", field, c)
	}
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.b)) { // every element takes at least one byte
		return 0, fmt.Errorf("%s: array of %d elements in %d bytes: %w", field, n, len(r.b), errTruncated)
	}
	return int(n), nil
}

// lenBytes returns the next n bytes, n given by a length prefix.
func (r *wireReader) lenBytes(field string, n uint64) ([]byte, error) {
	if n > uint64(len(r.b)) {
		return nil, fmt.Errorf("%s: length %d exceeds the %d bytes left: %w", field, n, len(r.b), errTruncated)
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p, nil
}

// string reads a str value.
func (r *wireReader) string(field string) (string, error) {
	c, err := r.byte(field)
	if err != nil {
		return "", err
	}
	var n uint64
	switch {
	case c&0xe0 == mpFixStr:
		n = uint64(c & 0x1f)
	case c == mpStr8:
		n, err = r.bigEndian(field, 1)
	case c == mpStr16:
		n, err = r.bigEndian(field, 2)
	case c == mpStr32:
		n, err = r.bigEndian(field, 4)
	default:
		return "", fmt.Errorf("%s: want a string, got msgpack code 0x%02x", field, c)
	}
	if err != nil {
		return "", err
	}
	p, err := r.lenBytes(field, n)
	if err != nil {
		return "", err
	}
	return string(p), nil
}

// bin reads a bin value of at most max bytes; the result aliases the input.
func (r *wireReader) bin(field string, max int) ([]byte, error) {
	c, err := r.byte(field)
	if err != nil {
		return nil, err
	}
	var n uint64
	switch c {
	case mpBin8:
		n, err = r.bigEndian(field, 1)
	case mpBin16:
		n, err = r.bigEndian(field, 2)
	case mpBin32:
		n, err = r.bigEndian(field, 4)
	default:
		return nil, fmt.Errorf("%s: want binary data, got msgpack code 0x%02x", field, c)
	}
	if err != nil {
		return nil, err
	}
	if n > uint64(max) {
		return nil, &PayloadTooLargeError{Size: int(min(n, math.MaxInt32)), Max: max}
	}
	return r.lenBytes(field, n)
}

// maxNestingDepth bounds how deeply arrays, maps and their elements may nest
// in a decoded payload, which bounds the decoder's recursion.
const maxNestingDepth = 1000

var errTooDeep = errors.New("payload nests deeper than 1000 levels")

// validateMsgpack checks that b holds exactly one well-formed msgpack value,
// nested at most maxNestingDepth deep, whose every length prefix fits in the
// bytes that follow it. The msgpack decoder sizes slices and maps by those
// prefixes, so this keeps its allocation proportional to len(b) however
// hostile the input.
func validateMsgpack(b []byte) error {
	rest, err := skimValue(b, 0)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%d trailing bytes after the payload", len(rest))
	}
	return nil
}

// skimValue skips one msgpack value and returns what follows it.
func skimValue(b []byte, depth int) ([]byte, error) {
	if len(b) > 0 {
		if size := int(scalarSize[b[0]]); size != 0 {
			if len(b) < size {
				return nil, errTruncated
			}
			return b[size:], nil
		}
	}
	kind, n, b, err := mpHeader(b)
	if err != nil {
		return nil, err
	}
	var (
		skip     uint64 // bytes of data to skip
		children uint64 // values to skim
	)
	switch kind {
	case hStr, hBin, hExt:
		skip = n
	case hArray:
		children = n
	case hMap:
		children = 2 * n
	}
	if skip > uint64(len(b)) {
		return nil, fmt.Errorf("length %d exceeds the %d bytes left: %w", skip, len(b), errTruncated)
	}
	b = b[skip:]
	if children == 0 {
		return b, nil
	}
	if children > uint64(len(b)) { // every value takes at least one byte
		return nil, fmt.Errorf("%d nested values in %d bytes: %w", children, len(b), errTruncated)
	}
	if depth >= maxNestingDepth {
		return nil, errTooDeep
	}
	for range children {
		if b, err = skimValue(b, depth+1); err != nil {
			return nil, err
		}
	}
	return b, nil
}
