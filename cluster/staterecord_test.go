package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/persistence"
)

var recKey = persistence.Key{Kind: "k", Identity: "i"}

// TestStateRecordRoundTrip: state and applied keys come back as written.
func TestStateRecordRoundTrip(t *testing.T) {
	tab := newAppliedTable(nil)
	tab.put("a", appliedOutcome{typeID: 7, payload: []byte("reply")})
	tab.put("b", appliedOutcome{isErr: true, errKind: "execution", errMsg: "boom"})
	v := encodeStateRecord([]byte("state"), tab)
	state, entries, err := decodeStateRecord(recKey, StateRecordSchema, v)
	if err != nil {
		t.Fatal(err)
	}
	if string(state) != "state" || len(entries) != 2 || entries[0].key != "a" || entries[0].out.typeID != 7 ||
		string(entries[0].out.payload) != "reply" || !entries[1].out.isErr || entries[1].out.errMsg != "boom" {
		t.Fatalf("decoded %q %+v", state, entries)
	}
	if s, e, err := decodeStateRecord(recKey, StateRecordSchema, encodeStateRecord(nil, nil)); err != nil || len(s) != 0 || s == nil || len(e) != 0 {
		t.Fatalf("empty record: %q %v %v", s, e, err)
	}
}

// TestStateRecordBounded: every malformed record is ErrCorruptRecord, with
// no panic: each truncation, a count over the bound, an unknown outcome,
// trailing bytes, an invalid key, another schema.
func TestStateRecordBounded(t *testing.T) {
	tab := newAppliedTable(nil)
	tab.put("a", appliedOutcome{typeID: 7, payload: []byte("reply")})
	tab.put("b", appliedOutcome{isErr: true, errKind: "execution", errMsg: "boom"})
	v := encodeStateRecord([]byte("state"), tab)
	for n := range len(v) {
		if _, _, err := decodeStateRecord(recKey, StateRecordSchema, v[:n]); !errors.Is(err, persistence.ErrCorruptRecord) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	huge := binary.BigEndian.AppendUint32(nil, 1<<31)
	tooMany := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint32(nil, 0), MaxIdempotencyKeys+1)
	badOutcome := append(binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint32(nil, 0), 1), 0, 1, 'k', 9)
	emptyKey := append(binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint32(nil, 0), 1), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	for name, b := range map[string][]byte{"huge": huge, "tooMany": tooMany, "badOutcome": badOutcome,
		"emptyKey": emptyKey, "trailing": append(bytes.Clone(v), 0)} {
		if _, _, err := decodeStateRecord(recKey, StateRecordSchema, b); !errors.Is(err, persistence.ErrCorruptRecord) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, _, err := decodeStateRecord(recKey, StateRecordSchema+1, v); !errors.Is(err, persistence.ErrCorruptRecord) || !strings.Contains(err.Error(), "schema") {
		t.Errorf("another schema: %v", err)
	}
}

// TestAppliedTableBound: the table keeps the last MaxIdempotencyKeys keys.
func TestAppliedTableBound(t *testing.T) {
	tab := newAppliedTable(nil)
	for i := range MaxIdempotencyKeys + 10 {
		tab.put(string(rune('A'+i)), appliedOutcome{typeID: uint32(i)})
	}
	if len(tab.entries) != MaxIdempotencyKeys {
		t.Fatalf("%d entries", len(tab.entries))
	}
	if _, ok := tab.get("A"); ok {
		t.Fatal("the oldest key is still there")
	}
	if out, ok := tab.get(string(rune('A' + MaxIdempotencyKeys + 9))); !ok || out.typeID != MaxIdempotencyKeys+9 {
		t.Fatalf("newest: %+v %v", out, ok)
	}
	if out, ok := tab.get(string(rune('A' + 10))); !ok || out.typeID != 10 {
		t.Fatalf("oldest kept: %+v %v", out, ok)
	}
}

// TestHandoffForm: a durable hand-off decodes; another does not.
func TestHandoffForm(t *testing.T) {
	v, val, ok := decodeHandoff(encodeHandoff(42, []byte("x")))
	if !ok || v != 42 || string(val) != "x" {
		t.Fatalf("%d %q %v", v, val, ok)
	}
	if _, _, ok := decodeHandoff([]byte{1, 2, 3}); ok {
		t.Fatal("a raw hand-off decoded")
	}
}
