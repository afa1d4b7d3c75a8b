package wire

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/ringactor/ringactor/messages"
)

// Message types shared by the tests. Each is registered once, here.

type testPing struct {
	Seq  uint64
	Note string
}

type testPoint struct {
	X, Y float64
}

type testBlob []byte

type testAnyList struct {
	Items []any
}

type testPointList struct {
	Points []testPoint
}

var (
	testPingID      = messages.MustRegister[testPing]("ringactor.wire.test.Ping")
	testPointID     = messages.MustRegister[testPoint]("ringactor.wire.test.Point")
	testBlobID      = messages.MustRegister[testBlob]("ringactor.wire.test.Blob")
	testAnyListID   = messages.MustRegister[testAnyList]("ringactor.wire.test.AnyList")
	testPointListID = messages.MustRegister[testPointList]("ringactor.wire.test.PointList")
	_               = messages.MustRegister[*testPoint]("ringactor.wire.test.PointPtr")
	_               = messages.MustRegister[[]float32]("ringactor.wire.test.Floats")
)

// sampleEnvelopes holds one envelope of each registered test type, with
// varied headers.
func sampleEnvelopes(t testing.TB) []messages.Envelope {
	payloads := []any{
		testPing{Seq: 1, Note: "hello"},
		testPing{},
		testPoint{X: math.Copysign(0, -1), Y: math.MaxFloat64},
		testBlob("blob\x00\xff"),
		testAnyList{Items: []any{int8(-1), uint32(7), "s", []byte("b"), float32(1.25), map[string]any{"a": nil}, true}},
		testPointList{Points: []testPoint{{1, 1}, {2, 2}, {3, 3}}},
		&testPoint{X: 9, Y: 8},
		[]float32{1, 2, 3.5},
	}
	var out []messages.Envelope
	for i, p := range payloads {
		e, err := messages.NewEnvelope(p)
		if err != nil {
			t.Fatal(err)
		}
		e.CorrelationID = uint64(i) * 1e12
		e.Priority = messages.Priority(i % 4)
		if i%2 == 0 {
			e.ReplyTo = "node-1:8090/ring-κ$" + string(rune('a'+i))
		}
		out = append(out, e)
	}
	return append(out, messages.Envelope{
		Header: messages.Header{ID: math.MaxUint64, CorrelationID: math.MaxUint64, Priority: messages.PriorityCritical,
			ReplyTo: string(bytes.Repeat([]byte("r"), 300))},
		Payload: testPing{Seq: math.MaxUint64},
	})
}

// deepEqual compares decoded payloads (the samples hold no NaN).
func deepEqual(a, b any) bool { return reflect.DeepEqual(a, b) }
