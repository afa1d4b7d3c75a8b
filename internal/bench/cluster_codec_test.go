package bench

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
)

func TestClusterPingCodec(t *testing.T) {
	for _, p := range []ClusterPing{{}, {Seq: -1, Data: []byte{}}, {Seq: 1 << 40, Data: bytes.Repeat([]byte{7}, 300)}} {
		w, err := wire.PackOf(p, messages.Header{ID: 1}, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, got, err := wire.UnpackAs[ClusterPing](w, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Seq != p.Seq || !bytes.Equal(got.Data, p.Data) || (got.Data == nil) != (p.Data == nil) {
			t.Fatalf("round trip of %+v: %+v", p, got)
		}
		// The untyped conversion gives the same value.
		env, err := wire.Unpack(w, 0)
		if g, ok := env.Payload.(ClusterPing); err != nil || !ok || g.Seq != p.Seq || !bytes.Equal(g.Data, p.Data) {
			t.Fatalf("FromWire of %+v: %+v, %v", p, env.Payload, err)
		}
	}
	id, err := messages.IDOf[ClusterPing]()
	if err != nil {
		t.Fatal(err)
	}
	for name, payload := range map[string][]byte{
		"a map":             {0x82, 0xa3, 'S', 'e', 'q', 0x01, 0xa4, 'D', 'a', 't', 'a', 0xc0},
		"three values":      {0x93, 0x01, 0xc0, 0x01},
		"one value":         {0x91, 0x01},
		"a map for bytes":   {0x92, 0x01, 0x81, 0x01, 0x01},
		"truncated":         {0x92, 0x01, 0xc4, 0x05, 'a'},
		"bytes for the seq": {0x92, 0xc4, 0x01, 'a', 0xc0},
	} {
		w := &wire.WireEnvelope{TypeId: uint32(id), Payload: payload}
		if _, _, err := wire.UnpackAs[ClusterPing](w, 0); !errors.Is(err, messages.ErrDecode) {
			t.Errorf("%s: got %v, want a decode error", name, err)
		}
	}
}
