package wire

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/ringactor/ringactor/messages"
)

type wireUnregistered struct{ A int }

func TestWireRoundTrip(t *testing.T) {
	for _, e := range sampleEnvelopes(t) {
		for _, max := range []int{0, -1, messages.MaxPayloadSize, messages.MaxPayloadSize + 1, 1 << 20} {
			data, err := Marshal(e, max)
			if err != nil {
				t.Fatalf("Marshal(%T, %d): %v", e.Payload, max, err)
			}
			got, err := Unmarshal(data, max)
			if err != nil {
				t.Fatalf("Unmarshal(%T, %d): %v", e.Payload, max, err)
			}
			want := e
			if want.Type == 0 {
				want.Type, _ = messages.IDOfValue(want.Payload)
			}
			if got.Header != want.Header || !deepEqual(got.Payload, want.Payload) {
				t.Fatalf("round trip\n got %#v\nwant %#v", got, want)
			}
		}
	}
}

func TestWireResultDoesNotAliasInput(t *testing.T) {
	e := messages.Envelope{Header: messages.Header{ID: 1, ReplyTo: "a/b"}, Payload: testBlob("abcdef")}
	data, err := Marshal(e, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] = 0xff
	}
	if string(got.Payload.(testBlob)) != "abcdef" || got.ReplyTo != "a/b" {
		t.Fatalf("result changed with its input: %#v", got)
	}
}

// TestWireLayout pins the protobuf field numbers and the msgpack payload,
// so that a change to ringactor_wire.proto that breaks old peers fails here.
func TestWireLayout(t *testing.T) {
	e := messages.Envelope{
		Header:  messages.Header{ID: 7, CorrelationID: 300, Priority: messages.PriorityHigh, ReplyTo: "m1:8090/r"},
		Payload: testPing{Seq: 1, Note: "hi"},
	}
	got, err := Marshal(e, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Sized integers keep their width: Seq is a uint64 (0xcf).
	payload := []byte{0x82, 0xa3, 'S', 'e', 'q', 0xcf, 0, 0, 0, 0, 0, 0, 0, 1, 0xa4, 'N', 'o', 't', 'e', 0xa2, 'h', 'i'}
	var want []byte
	want = protowire.AppendTag(want, 1, protowire.VarintType)
	want = protowire.AppendVarint(want, 7)
	want = protowire.AppendTag(want, 2, protowire.VarintType)
	want = protowire.AppendVarint(want, 300)
	want = protowire.AppendTag(want, 3, protowire.VarintType)
	want = protowire.AppendVarint(want, uint64(messages.PriorityHigh))
	want = protowire.AppendTag(want, 4, protowire.VarintType)
	want = protowire.AppendVarint(want, uint64(testPingID))
	want = protowire.AppendTag(want, 5, protowire.BytesType)
	want = protowire.AppendString(want, "m1:8090/r")
	want = protowire.AppendTag(want, 6, protowire.BytesType)
	want = protowire.AppendBytes(want, payload)
	if !bytes.Equal(got, want) {
		t.Fatalf("wire bytes\n got % x\nwant % x", got, want)
	}
	// Fields a newer peer adds are ignored.
	newer := protowire.AppendTag(bytes.Clone(want), 99, protowire.BytesType)
	newer = protowire.AppendString(newer, "future")
	back, err := Unmarshal(newer, 0)
	if err != nil {
		t.Fatalf("unknown field: %v", err)
	}
	e.Type = testPingID
	if back.Header != e.Header || back.Payload != e.Payload {
		t.Fatalf("decoded %#v, want %#v", back, e)
	}
}

func TestPackErrors(t *testing.T) {
	if _, err := Pack(messages.Envelope{}, 0); !errors.Is(err, messages.ErrNilMessage) {
		t.Errorf("nil payload: %v", err)
	}
	if _, err := Marshal(messages.Envelope{}, 0); !errors.Is(err, messages.ErrNilMessage) {
		t.Errorf("Marshal nil payload: %v", err)
	}

	_, err := Pack(messages.Envelope{Payload: wireUnregistered{1}}, 0)
	var ut *messages.UnregisteredTypeError
	if !errors.As(err, &ut) || !errors.Is(err, messages.ErrUnregistered) {
		t.Errorf("unregistered: %v", err)
	}
	if _, err := Marshal(messages.Envelope{Payload: wireUnregistered{1}}, 0); !errors.As(err, &ut) {
		t.Errorf("Marshal unregistered: %v", err)
	}

	big := testBlob(bytes.Repeat([]byte{1}, 100))
	_, err = Pack(messages.Envelope{Payload: big}, 50)
	var tl *messages.PayloadTooLargeError
	if !errors.As(err, &tl) || tl.Max != 50 || tl.Size <= 100 {
		t.Errorf("oversize: %v (%+v)", err, tl)
	}
	if _, err := Marshal(messages.Envelope{Payload: big}, 50); !errors.As(err, &tl) {
		t.Errorf("Marshal oversize: %v", err)
	}
	if _, err := Pack(messages.Envelope{Payload: big}, 200); err != nil {
		t.Errorf("under the limit: %v", err)
	}

	for name, e := range map[string]messages.Envelope{
		"type mismatch":    {Header: messages.Header{Type: testPointID}, Payload: testPing{}},
		"priority":         {Header: messages.Header{Priority: messages.PriorityCritical + 1}, Payload: testPing{}},
		"long reply-to":    {Header: messages.Header{ReplyTo: strings.Repeat("x", MaxReplyToLen+1)}, Payload: testPing{}},
		"invalid reply-to": {Header: messages.Header{ReplyTo: "\xff"}, Payload: testPing{}},
	} {
		if _, err := Pack(e, 0); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Pack(messages.Envelope{Header: messages.Header{ReplyTo: strings.Repeat("x", MaxReplyToLen)}, Payload: testPing{}}, 0); err != nil {
		t.Errorf("reply-to of MaxReplyToLen bytes: %v", err)
	}
}

func TestUnpackErrors(t *testing.T) {
	if _, err := Unpack(nil, 0); !errors.Is(err, messages.ErrNilMessage) {
		t.Errorf("nil: %v", err)
	}

	for _, id := range []uint32{0, 0xdeadbeef} {
		_, err := Unpack(&WireEnvelope{TypeId: id, Payload: []byte{0x80}}, 0)
		var uk *messages.UnknownTypeIDError
		if !errors.As(err, &uk) || uk.ID != messages.TypeID(id) || !errors.Is(err, messages.ErrUnregistered) {
			t.Errorf("unknown id %#x: %v", id, err)
		}
	}

	// The size check comes before decoding: these bytes are not msgpack.
	_, err := Unpack(&WireEnvelope{TypeId: uint32(testBlobID), Payload: bytes.Repeat([]byte{0xc1}, 65)}, 64)
	var tl *messages.PayloadTooLargeError
	if !errors.As(err, &tl) || tl.Size != 65 || tl.Max != 64 || errors.Is(err, messages.ErrDecode) {
		t.Errorf("oversize: %v", err)
	}

	for name, w := range map[string]*WireEnvelope{
		"bad msgpack":    {TypeId: uint32(testPingID), Payload: []byte{0xc1}},
		"wrong shape":    {TypeId: uint32(testPingID), Payload: []byte{0xa2, 'h', 'i'}},
		"truncated":      {TypeId: uint32(testPingID), Payload: []byte{0x82, 0xa3, 'S'}},
		"trailing bytes": {TypeId: uint32(testPointID), Payload: []byte{0x80, 0x80}},
		"empty payload":  {TypeId: uint32(testPingID)},
		"hostile length": {TypeId: uint32(testPointListID), Payload: []byte{0x81, 0xa6, 'P', 'o', 'i', 'n', 't', 's', 0xdd, 0xff, 0xff, 0xff, 0xff}},
		"priority":       {TypeId: uint32(testPointID), Priority: 4, Payload: []byte{0x80}},
		"long reply-to":  {TypeId: uint32(testPointID), ReplyTo: strings.Repeat("x", MaxReplyToLen+1), Payload: []byte{0x80}},
	} {
		_, err := Unpack(w, 0)
		var de *messages.DecodeError
		if !errors.As(err, &de) || !errors.Is(err, messages.ErrDecode) || de.ID != messages.TypeID(w.TypeId) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestUnmarshalErrors(t *testing.T) {
	for name, b := range map[string][]byte{
		"invalid wire type":  {0x0f},
		"truncated varint":   {0x08, 0xff},
		"truncated bytes":    {0x32, 0x05, 0x01},
		"hostile length":     {0x32, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"field number 0":     {0x00, 0x01},
		"invalid utf-8":      {0x2a, 0x01, 0xff},
		"varint too long":    {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"unterminated group": {0x7b},
	} {
		_, err := Unmarshal(b, 0)
		var de *messages.DecodeError
		if !errors.As(err, &de) || !errors.Is(err, messages.ErrDecode) {
			t.Errorf("%s: %v", name, err)
		}
	}

	// Empty input is an envelope with every field zero: type id 0 is unknown.
	if _, err := Unmarshal(nil, 0); !errors.Is(err, messages.ErrUnregistered) {
		t.Errorf("empty: %v", err)
	}

	// Input longer than max plus the header slack is refused unparsed.
	const max = 128
	_, err := Unmarshal(bytes.Repeat([]byte{0xff}, max+headerSlack+1), max)
	var tl *messages.PayloadTooLargeError
	if !errors.As(err, &tl) || errors.Is(err, messages.ErrDecode) {
		t.Errorf("over the input limit: %v", err)
	}

	// A payload within the sender's limit but over the receiver's.
	data, err := Marshal(messages.Envelope{Payload: testBlob(bytes.Repeat([]byte{7}, 1000))}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Unmarshal(data, 500); !errors.As(err, &tl) || tl.Max != 500 {
		t.Errorf("over the receiver's limit: %v", err)
	}

	// An unknown type id and undecodable msgpack inside valid protobuf.
	w := &WireEnvelope{TypeId: 12345, Payload: []byte{0x80}}
	b, err := proto.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var uk *messages.UnknownTypeIDError
	if _, err := Unmarshal(b, 0); !errors.As(err, &uk) {
		t.Errorf("unknown type id: %v", err)
	}
	w = &WireEnvelope{TypeId: uint32(testPingID), Payload: []byte{0xc1}}
	if b, err = proto.Marshal(w); err != nil {
		t.Fatal(err)
	}
	var de *messages.DecodeError
	if _, err := Unmarshal(b, 0); !errors.As(err, &de) || de.ID != testPingID {
		t.Errorf("bad msgpack: %v", err)
	}
}

func TestNewError(t *testing.T) {
	cases := []struct {
		err  error
		kind string
		code uint32
	}{
		{&messages.PayloadTooLargeError{Size: 2, Max: 1}, KindTooLarge, 3},
		{&messages.DecodeError{Err: &messages.PayloadTooLargeError{Size: 2, Max: 1}}, KindTooLarge, 3},
		{&messages.UnknownTypeIDError{ID: 5}, KindUnregistered, 1},
		{&messages.DecodeError{Err: errors.New("x")}, KindDecode, 2},
		{errors.New("kernel failed"), KindExecution, 4},
	}
	for _, c := range cases {
		w := NewError(c.err, 42)
		if w.Kind != c.kind || w.Code != c.code || w.Message != c.err.Error() || w.MessageId != 42 {
			t.Errorf("NewError(%v) = %v", c.err, w)
		}
	}
	for i, k := range []string{KindUnregistered, KindDecode, KindTooLarge, KindExecution, KindUnknownKind, KindUnavailable, KindTimeout} {
		if got := ErrorCode(k); got != uint32(i+1) {
			t.Errorf("ErrorCode(%q) = %d, want %d", k, got, i+1)
		}
	}
	if ErrorCode("nope") != 0 {
		t.Error("unknown kind has a code")
	}
	// WireError round-trips through protobuf.
	w := NewError(errors.New("boom"), math.MaxUint64)
	b, err := proto.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var back WireError
	if err := proto.Unmarshal(b, &back); err != nil || !proto.Equal(w, &back) {
		t.Fatalf("WireError round trip: %v, %v", &back, err)
	}
}

// TestWireProtoInSync regenerates ringactor_wire.pb.go with the go:generate command of
// generate.go and checks that the committed file is identical. The generated
// header names the protoc and protoc-gen-go versions, so this needs the
// versions in WIRE_INSTALL.txt.
func TestWireProtoInSync(t *testing.T) {
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Skip("protoc not installed (see internal/wire/WIRE_INSTALL.txt); cannot check that ringactor_wire.pb.go is in sync with ringactor_wire.proto")
	}
	plugin, err := exec.LookPath("protoc-gen-go")
	if err != nil {
		home, _ := os.UserHomeDir()
		gopath := os.Getenv("GOPATH")
		if gopath == "" {
			gopath = filepath.Join(home, "go")
		}
		plugin = filepath.Join(gopath, "bin", "protoc-gen-go")
		if _, err := os.Stat(plugin); err != nil {
			t.Skip("protoc-gen-go not installed (see internal/wire/WIRE_INSTALL.txt); cannot check that ringactor_wire.pb.go is in sync with ringactor_wire.proto")
		}
	}
	dir := t.TempDir()
	cmd := exec.Command(protoc, "--plugin=protoc-gen-go="+plugin,
		"--go_out="+dir, "--go_opt=paths=source_relative", "ringactor_wire.proto")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd, err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "ringactor_wire.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("ringactor_wire.pb.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("ringactor_wire.pb.go is out of sync with ringactor_wire.proto (or protoc/protoc-gen-go are not the versions in WIRE_INSTALL.txt): run `go generate ./internal/wire`\nregenerated header:\n%s\ncommitted header:\n%s",
			versionLines(got), versionLines(want))
	}
}

// versionLines returns the lines of a generated file that name the tool versions.
func versionLines(b []byte) string {
	var out []string
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "// \tprotoc") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return strings.Join(out, "\n")
}

func FuzzUnmarshal(f *testing.F) {
	for _, e := range sampleEnvelopes(f) {
		data, err := Marshal(e, 0)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		for _, n := range []int{1, 2, 5, len(data) / 2, len(data) - 1} {
			if n < len(data) {
				f.Add(data[:n])
			}
		}
	}
	f.Add([]byte{})
	f.Add([]byte{0x32, 0xff, 0xff, 0xff, 0xff, 0x0f}) // payload length 4 GiB
	f.Add([]byte{0x20, 0x01, 0x32, 0x01, 0x80})       // unknown type id
	f.Add([]byte{0x18, 0xc8, 0x01, 0x20, 0x01})       // priority 200
	f.Add([]byte{0x7b, 0x7c})                         // group
	f.Add([]byte{0x2a, 0x02, 0xc3, 0x28})             // invalid UTF-8 reply-to
	hostile := func(id messages.TypeID, payload []byte) []byte {
		b := protowire.AppendTag(nil, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(id))
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		return protowire.AppendBytes(b, payload)
	}
	// A msgpack array length of 4 Gi elements.
	f.Add(hostile(testPointListID, []byte{0x81, 0xa6, 'P', 'o', 'i', 'n', 't', 's', 0xdd, 0xff, 0xff, 0xff, 0xff}))
	// msgpack nested deeper than the decoder allows.
	nested := append([]byte{0x81, 0xa5, 'I', 't', 'e', 'm', 's'}, bytes.Repeat([]byte{0x91}, 2000)...)
	f.Add(hostile(testAnyListID, append(nested, 0xc0)))
	// Invalid msgpack code.
	f.Add(hostile(testPingID, []byte{0xc1}))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, max := range []int{16, 0} {
			e, err := Unmarshal(data, max)
			if err != nil {
				var (
					de *messages.DecodeError
					uk *messages.UnknownTypeIDError
					tl *messages.PayloadTooLargeError
				)
				if !errors.As(err, &de) && !errors.As(err, &uk) && !errors.As(err, &tl) {
					t.Fatalf("untyped error: %v", err)
				}
				continue
			}
			again, err := Marshal(e, 0)
			if err != nil {
				t.Fatalf("decoded envelope %#v does not re-encode: %v", e, err)
			}
			e2, err := Unmarshal(again, 0)
			if err != nil {
				t.Fatalf("re-encoded envelope does not decode: %v", err)
			}
			if e2.Header != e.Header || !deepEqual(e2.Payload, e.Payload) {
				t.Fatalf("round trip changed the envelope\nfirst  %#v\nsecond %#v", e, e2)
			}
		}
	})
}

func BenchmarkWireRoundTrip(b *testing.B) {
	e := messages.Envelope{Header: messages.Header{ID: 1, Priority: messages.PriorityNormal, ReplyTo: "127.0.0.1:8090/partition/ring"}, Payload: testPing{Seq: 1, Note: "hello"}}
	b.ReportAllocs()
	for b.Loop() {
		data, err := Marshal(e, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Unmarshal(data, 0); err != nil {
			b.Fatal(err)
		}
	}
}
