package persistence

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"
)

// The stored form of a record (the embedded and in-memory stores keep it as
// the value under the key's canonical encoding; docs/persistence.md):
//
//	offset size
//	0      4    magic "RAS\x00"
//	4      1    format (recordFormat)
//	5      3    zero
//	8      8    version, big-endian
//	16     4    schema version
//	20     8    updated, Unix nanoseconds
//	28     4    value length n
//	32     n    value
//	32+n   4    CRC-32C of the key's canonical encoding followed by bytes 0..32+n
//
// The checksum covers the key, so a record copied under another key is
// corrupt too.
const (
	recordMagic   = "RAS\x00"
	recordFormat  = 1
	recordHeader  = 32
	recordTrailer = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encodeRecord returns the stored form of a record.
func encodeRecord(key string, version uint64, schema uint32, updated time.Time, value []byte) []byte {
	b := make([]byte, recordHeader+len(value)+recordTrailer)
	copy(b, recordMagic)
	b[4] = recordFormat
	binary.BigEndian.PutUint64(b[8:], version)
	binary.BigEndian.PutUint32(b[16:], schema)
	binary.BigEndian.PutUint64(b[20:], uint64(updated.UnixNano()))
	binary.BigEndian.PutUint32(b[28:], uint32(len(value)))
	copy(b[recordHeader:], value)
	n := recordHeader + len(value)
	crc := crc32.Update(crc32.Checksum([]byte(key), castagnoli), castagnoli, b[:n])
	binary.BigEndian.PutUint32(b[n:], crc)
	return b
}

// checkStoredSize refuses a stored record whose value is over limit before
// it is decoded (and copied).
func checkStoredSize(enc string, b []byte, limit int) error {
	if n := len(b) - recordHeader - recordTrailer; n > limit {
		return tooLargeStored(enc, int64(n), limit)
	}
	return nil
}

// decodeRecord parses a stored record of key. It never panics, allocates at
// most one copy of the value (no more than len(b)), and reports anything
// malformed as ErrCorruptRecord. copyValue false returns a value aliasing b.
func decodeRecord(key Key, enc string, b []byte, copyValue bool) (Record, error) {
	bad := func(why string, args ...any) (Record, error) {
		return Record{}, fmt.Errorf("%w: %s: %s", ErrCorruptRecord, enc, fmt.Sprintf(why, args...))
	}
	if len(b) < recordHeader+recordTrailer {
		return bad("%d bytes, shorter than a record's header", len(b))
	}
	if string(b[:4]) != recordMagic {
		return bad("bad magic %q", b[:4])
	}
	if b[4] != recordFormat {
		return bad("unknown format %d", b[4])
	}
	n := binary.BigEndian.Uint32(b[28:])
	if uint64(n) != uint64(len(b)-recordHeader-recordTrailer) {
		return bad("value length %d, but %d bytes stored", n, len(b)-recordHeader-recordTrailer)
	}
	end := recordHeader + int(n)
	want := binary.BigEndian.Uint32(b[end:])
	if got := crc32.Update(crc32.Checksum([]byte(enc), castagnoli), castagnoli, b[:end]); got != want {
		return bad("checksum %08x, stored %08x", got, want)
	}
	version := binary.BigEndian.Uint64(b[8:])
	if version == 0 {
		return bad("version 0")
	}
	value := b[recordHeader:end:end]
	if copyValue {
		value = append([]byte(nil), value...)
	}
	return Record{
		Key:     key,
		Version: version,
		Schema:  binary.BigEndian.Uint32(b[16:]),
		Value:   value,
		Updated: time.Unix(0, int64(binary.BigEndian.Uint64(b[20:]))),
	}, nil
}
