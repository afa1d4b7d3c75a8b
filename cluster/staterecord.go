package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/ringactor/ringactor/persistence"
)

// StateRecordSchema is the schema version of the records a member with a
// state store (WithStateStore) saves for an identity: the layout below.
// A record of another schema is refused as persistence.ErrCorruptRecord.
//
// Layout (all integers big-endian), every length checked against what is
// left before anything is allocated:
//
//	u32 n, n bytes     the identity's state (its Snapshot)
//	u16 k              applied idempotency keys (at most MaxIdempotencyKeys)
//	k × entry          oldest first:
//	    u16 n, n bytes the key (1..MaxIdempotencyKeyLen bytes of UTF-8)
//	    u8 outcome     0: a reply, 1: an error
//	    reply: u32 type id, u32 n, n bytes (the reply's payload)
//	    error: u16 n, n bytes (the wire error kind), u32 n, n bytes (its text)
const StateRecordSchema = 1

// MaxIdempotencyKeys is how many idempotency keys (with their outcomes) an
// identity's record keeps: those of its last applied requests that carried
// one. A request retried with a key older than that is applied again.
const MaxIdempotencyKeys = 128

// MaxIdempotencyKeyLen is the most bytes an idempotency key may have.
const MaxIdempotencyKeyLen = 256

// ErrInvalidIdempotencyKey: an idempotency key that is empty, longer than
// MaxIdempotencyKeyLen or not valid UTF-8.
var ErrInvalidIdempotencyKey = errors.New("ringactor/cluster: invalid idempotency key")

// CheckIdempotencyKey reports, as ErrInvalidIdempotencyKey, a key that no
// request may carry (WithIdempotencyKey).
func CheckIdempotencyKey(k string) error {
	switch {
	case k == "":
		return fmt.Errorf("%w: empty", ErrInvalidIdempotencyKey)
	case len(k) > MaxIdempotencyKeyLen:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrInvalidIdempotencyKey, len(k), MaxIdempotencyKeyLen)
	case !utf8.ValidString(k):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidIdempotencyKey)
	}
	return nil
}

// appliedOutcome is the outcome of an applied request that carried an
// idempotency key: its reply (typeID and payload) or its error.
type appliedOutcome struct {
	isErr   bool
	typeID  uint32
	payload []byte
	errKind string
	errMsg  string
}

// appliedEntry is one key of the idempotency table.
type appliedEntry struct {
	key string
	out appliedOutcome
}

// appliedTable holds the keys of an identity's last applied requests,
// oldest first, at most MaxIdempotencyKeys. It is used by the activation's
// kernel only (one message at a time).
type appliedTable struct {
	entries []appliedEntry
	index   map[string]int // key → position in entries, offset by base
	base    int            // entries dropped from the front so far
}

func newAppliedTable(entries []appliedEntry) *appliedTable {
	t := &appliedTable{index: make(map[string]int, len(entries))}
	for _, e := range entries {
		t.put(e.key, e.out)
	}
	return t
}

// get returns key's outcome, if the table has it.
func (t *appliedTable) get(key string) (appliedOutcome, bool) {
	i, ok := t.index[key]
	if !ok {
		return appliedOutcome{}, false
	}
	return t.entries[i-t.base].out, true
}

// put records key's outcome, dropping the oldest key when full.
func (t *appliedTable) put(key string, out appliedOutcome) {
	if _, ok := t.index[key]; ok {
		return
	}
	if len(t.entries) == MaxIdempotencyKeys {
		delete(t.index, t.entries[0].key)
		t.entries = append(t.entries[:0:0], t.entries[1:]...)
		t.base++
	}
	t.index[key] = t.base + len(t.entries)
	t.entries = append(t.entries, appliedEntry{key: key, out: out})
}

// encodeStateRecord returns the record value of state and the table.
func encodeStateRecord(state []byte, t *appliedTable) []byte {
	n := 4 + len(state) + 2
	if t != nil {
		for _, e := range t.entries {
			n += 2 + len(e.key) + 1 + 8 + len(e.out.payload) + 2 + len(e.out.errKind) + len(e.out.errMsg)
		}
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint32(b, uint32(len(state)))
	b = append(b, state...)
	if t == nil {
		return binary.BigEndian.AppendUint16(b, 0)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(t.entries)))
	for _, e := range t.entries {
		b = binary.BigEndian.AppendUint16(b, uint16(len(e.key)))
		b = append(b, e.key...)
		if e.out.isErr {
			b = append(b, 1)
			b = binary.BigEndian.AppendUint16(b, uint16(len(e.out.errKind)))
			b = append(b, e.out.errKind...)
			b = binary.BigEndian.AppendUint32(b, uint32(len(e.out.errMsg)))
			b = append(b, e.out.errMsg...)
			continue
		}
		b = append(b, 0)
		b = binary.BigEndian.AppendUint32(b, e.out.typeID)
		b = binary.BigEndian.AppendUint32(b, uint32(len(e.out.payload)))
		b = append(b, e.out.payload...)
	}
	return b
}

// recordReader reads a record value with bounds checks.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("a field of %d bytes, %d left", n, len(r.b))
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *recordReader) u8() int {
	v := r.take(1)
	if v == nil {
		return 0
	}
	return int(v[0])
}

func (r *recordReader) u16() int {
	v := r.take(2)
	if v == nil {
		return 0
	}
	return int(binary.BigEndian.Uint16(v))
}

func (r *recordReader) u32() uint32 {
	v := r.take(4)
	if v == nil {
		return 0
	}
	return binary.BigEndian.Uint32(v)
}

// decodeStateRecord decodes a record's value of schema StateRecordSchema:
// the state and the applied keys. Anything malformed is
// persistence.ErrCorruptRecord; nothing is allocated beyond value's size.
func decodeStateRecord(key persistence.Key, schema uint32, value []byte) ([]byte, []appliedEntry, error) {
	if schema != StateRecordSchema {
		return nil, nil, fmt.Errorf("%w: %s: schema %d, this member reads schema %d", persistence.ErrCorruptRecord, key, schema, StateRecordSchema)
	}
	r := &recordReader{b: value}
	state := r.take(int(r.u32()))
	k := r.u16()
	if r.err == nil && k > MaxIdempotencyKeys {
		r.err = fmt.Errorf("%d idempotency keys, at most %d", k, MaxIdempotencyKeys)
	}
	var entries []appliedEntry
	if r.err == nil && k > 0 {
		entries = make([]appliedEntry, 0, min(k, len(r.b)/8+1))
	}
	for i := 0; i < k && r.err == nil; i++ {
		kb := r.take(r.u16())
		e := appliedEntry{key: string(kb)}
		if r.err == nil {
			if err := CheckIdempotencyKey(e.key); err != nil {
				r.err = err
			}
		}
		switch r.u8() {
		case 0:
			e.out.typeID = r.u32()
			e.out.payload = r.take(int(r.u32()))
		case 1:
			e.out.isErr = true
			e.out.errKind = string(r.take(r.u16()))
			e.out.errMsg = string(r.take(int(r.u32())))
		default:
			if r.err == nil {
				r.err = errors.New("unknown outcome")
			}
		}
		entries = append(entries, e)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
	if r.err != nil {
		return nil, nil, fmt.Errorf("%w: %s: state record: %v", persistence.ErrCorruptRecord, key, r.err)
	}
	if state == nil {
		state = []byte{}
	}
	return state, entries, nil
}

// handoffMagic starts the hand-off of an activation with a state store:
// its record's version and value, so that the next activation saves
// against that version without loading the record again.
var handoffMagic = [4]byte{'R', 'A', 'H', 1}

// encodeHandoff returns the hand-off of a durable activation.
func encodeHandoff(version uint64, value []byte) []byte {
	b := make([]byte, 0, 12+len(value))
	b = append(b, handoffMagic[:]...)
	b = binary.BigEndian.AppendUint64(b, version)
	return append(b, value...)
}

// decodeHandoff reverses encodeHandoff; ok is false for a hand-off of
// another form (a member without a store handed it off).
func decodeHandoff(b []byte) (version uint64, value []byte, ok bool) {
	if len(b) < 12 || [4]byte(b[:4]) != handoffMagic {
		return 0, nil, false
	}
	return binary.BigEndian.Uint64(b[4:12]), b[12:], true
}
