package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/internal/demo/demomsg"
	"github.com/ringactor/ringactor/internal/wire"
	"github.com/ringactor/ringactor/messages"
)

// The demo kinds' request types, as internal/demo registers them (which
// this package's tests cannot import: it imports cluster).
func init() {
	messages.MustRegister[demomsg.Object](demomsg.ObjectName)
	messages.MustRegister[demomsg.AddRequest](demomsg.AddRequestName)
	messages.MustRegister[demomsg.CounterRequest](demomsg.CounterRequestName)
	messages.MustRegister[demomsg.DevscaleRequest](demomsg.DevscaleRequestName)
}

// checkJSONRequest is FuzzRequestJSON's property for one request type: raw
// either is refused with messages.ErrDecode naming the kind, or decodes
// into a Req that packs for the wire and that the receiving member unpacks
// into the very same value.
func checkJSONRequest[Req any](t *testing.T, kind string, raw []byte) {
	t.Helper()
	req, err := decodeJSON[Req](kind, raw)
	if err != nil {
		if !errors.Is(err, messages.ErrDecode) || !strings.Contains(err.Error(), `"`+kind+`"`) {
			t.Fatalf("%s: %s refused with %v, want messages.ErrDecode naming the kind", kind, clipQ(raw), err)
		}
		return
	}
	if !json.Valid(raw) {
		t.Fatalf("%s: %s is not JSON, but decoded", kind, clipQ(raw))
	}
	w, err := wire.PackOf(req, messages.Header{ID: 1, Priority: messages.PriorityNormal}, messages.MaxPayloadSize)
	if err != nil {
		t.Fatalf("%s: %s decoded, but does not pack: %v", kind, clipQ(raw), err)
	}
	_, back, err := wire.UnpackAs[Req](w, messages.MaxPayloadSize)
	if err != nil {
		t.Fatalf("%s: %s decoded, but the member cannot unpack it: %v", kind, clipQ(raw), err)
	}
	if !reflect.DeepEqual(back, req) {
		t.Fatalf("%s: %s decoded to %.200v, which arrives as %.200v", kind, clipQ(raw), fmt.Sprintf("%#v", req), fmt.Sprintf("%#v", back))
	}
}

// FuzzRequestJSON: the JSON body of `ringactor call --data` (RequestJSON's
// decoding) never panics; for every demo kind's request type it is either
// messages.ErrDecode or a request that reaches the member unchanged through
// the wire codec.
func FuzzRequestJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `{"msg":"hi","n":[1,2.5,-0,{"x":null}]}`, `{"a":[1,2],"b":[3,4]}`, `{"a":[1e308],"b":[-1e308]}`,
		`{"by":3}`, `{"by":-1}`, `{"by":4294967296}`, `{"by":1.5}`, `{"by":"3"}`, `[]`, `"x"`, `1`, `{"a":null,"b":[]}`,
		`{"a":[1e400]}`, `{"k":"\ud800"}`, `{"k":"\u0000"}`, `{"":{"":{"":[]}}}`, `{"BY":2,"by":3}`, `{`, `{"a":1}x`,
		`{"a":` + strings.Repeat("[", 1100) + strings.Repeat("]", 1100) + `}`,
		`{"a":[` + strings.Repeat("[],", 2000) + `[]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 64<<10 {
			raw = raw[:64<<10]
		}
		checkJSONRequest[demomsg.Object](t, "echo", raw)
		checkJSONRequest[demomsg.AddRequest](t, "add", raw)
		checkJSONRequest[demomsg.CounterRequest](t, "counter", raw)
		checkJSONRequest[demomsg.DevscaleRequest](t, "devscale", raw)
	})
}

// clipQ quotes at most the first 200 bytes of b, for a failure message.
func clipQ(b []byte) string {
	if len(b) > 200 {
		return fmt.Sprintf("%q… (%d bytes)", b[:200], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// TestRequestJSONTooDeep: JSON nested deeper than the wire codec takes is
// refused before it is sent (the member would refuse it after activating
// the identity), with messages.ErrDecode.
func TestRequestJSONTooDeep(t *testing.T) {
	deep := []byte(`{"a":` + strings.Repeat("[", 1100) + strings.Repeat("]", 1100) + `}`)
	_, err := decodeJSON[demomsg.Object]("echo", deep)
	if !errors.Is(err, messages.ErrDecode) || !strings.Contains(err.Error(), "cannot be sent") {
		t.Fatalf("decodeJSON(1100 levels) = %v, want messages.ErrDecode: cannot be sent", err)
	}
	if _, err := decodeJSON[demomsg.Object]("echo", []byte(`{"a":`+strings.Repeat("[", 900)+strings.Repeat("]", 900)+`}`)); err != nil {
		t.Fatalf("decodeJSON(900 levels) = %v", err)
	}
}
