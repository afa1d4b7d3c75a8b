package wire

import (
	"encoding/hex"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/ringactor/ringactor/messages"
)

// goldenPing is the payload of the envelope in TestDecodesBytesOfMessagesPackage.
type goldenPing struct {
	Seq  uint64
	Note string
}

var _ = messages.MustRegister[goldenPing]("ringactor.wire.test.GoldenPing")

// TestDecodesBytesOfMessagesPackage decodes bytes that the protocol's types
// encoded while they were still declared in package messages (v0.1.0,
// before they moved here), and checks that they encode to the same bytes
// again and keep their protobuf full names: Proto.Actor remote sends a
// message's full name with its bytes, so a member of either version
// understands the other.
func TestDecodesBytesOfMessagesPackage(t *testing.T) {
	info := &PeerInfo{Id: "m1", Host: "127.0.0.1", Port: 7001, Kinds: []string{"a", "b"}, Client: true, Leaving: true, Cluster: "c", Protocol: 2}
	cases := []struct {
		name, hex string
		want      proto.Message
	}{
		{"WireEnvelope", "08011002180320effdb6f50d2a0172320481a141013880e497d0124201634802523730302d30616637363531393136636434336464383434386562323131633830333139632d623761643662373136393230333333312d30315a036b3d76",
			&WireEnvelope{Id: 1, CorrelationId: 2, Priority: 3, TypeId: 0xdeadbeef, ReplyTo: "r", Payload: []byte{0x81, 0xa1, 0x41, 0x01}, TimeoutNs: 5e9,
				Cluster: "c", Protocol: 2, Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Tracestate: "k=v"}},
		{"WireError", "08041209657865637574696f6e1a04626f6f6d2009", &WireError{Code: 4, Kind: KindExecution, Message: "boom", MessageId: 9}},
		{"PeerInfo", "0a026d3112093132372e302e302e3118d936220161220162280130013a01634002", info},
		{"PeerHello", "0a210a026d3112093132372e302e302e3118d936220161220162280130013a01634002", &PeerHello{Self: info}},
		{"PeerView", "0a210a026d3112093132372e302e302e3118d936220161220162280130013a016340021203683a311203683a32", &PeerView{Self: info, Known: []string{"h:1", "h:2"}}},
		{"PlacementRequest", "0a016310021a016b220169", &PlacementRequest{Cluster: "c", Protocol: 2, Kind: "k", Identity: "i"}},
		{"PlacementReply", "0a01611201701a01722201652a01783201633802", &PlacementReply{PidAddress: "a", PidId: "p", Redirect: "r", ErrorKind: "e", Error: "x", Cluster: "c", Protocol: 2}},
		{"HandoffRequest", "0a016310021a016b2201692a016f", &HandoffRequest{Cluster: "c", Protocol: 2, Kind: "k", Identity: "i", Owner: "o"}},
		{"HandoffReply", "0801120201021801220178", &HandoffReply{Conflict: true, State: []byte{1, 2}, HasState: true, Error: "x"}},
		{"HandoffState", "0a016310021a016b2201692a0103", &HandoffState{Cluster: "c", Protocol: 2, Kind: "k", Identity: "i", State: []byte{3}}},
	}
	for _, c := range cases {
		full := protoreflect.FullName("ringactor.messages.v1." + c.name)
		if got := proto.MessageName(c.want); got != full {
			t.Errorf("%s: full name %s, want %s", c.name, got, full)
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(full)
		if err != nil {
			t.Fatalf("%s: not in the registry Proto.Actor remote resolves names with: %v", full, err)
		}
		old, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		got := mt.New().Interface()
		if err := proto.Unmarshal(old, got); err != nil {
			t.Fatalf("%s: decode old bytes: %v", c.name, err)
		}
		if !proto.Equal(got, c.want) {
			t.Errorf("%s: decoded %v, want %v", c.name, got, c.want)
		}
		again, err := proto.MarshalOptions{Deterministic: true}.Marshal(c.want)
		if err != nil {
			t.Fatal(err)
		}
		if hex.EncodeToString(again) != c.hex {
			t.Errorf("%s: encodes as\n%x\nwas\n%s", c.name, again, c.hex)
		}
	}

	// A whole request: header and msgpack payload, as EncodeWire wrote it.
	const envelope = "080710031802209ea8ce900a2a163132372e302e302e313a373030312f7265706c792431321682a3536571cf000000000000002aa44e6f7465a2ceba"
	old, _ := hex.DecodeString(envelope)
	e, err := Unmarshal(old, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := messages.Header{ID: 7, CorrelationID: 3, Priority: messages.PriorityHigh, ReplyTo: "127.0.0.1:7001/reply$1"}
	want.Type, _ = messages.IDOf[goldenPing]()
	if e.Header != want || e.Payload != any(goldenPing{Seq: 42, Note: "κ"}) {
		t.Fatalf("old envelope decoded as %#v", e)
	}
	again, err := Marshal(e, 0)
	if err != nil || hex.EncodeToString(again) != envelope {
		t.Fatalf("old envelope re-encodes as %x (%v)", again, err)
	}
}
