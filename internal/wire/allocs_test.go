package wire

import (
	"strings"
	"testing"

	"github.com/ringactor/ringactor/messages"
)

// TestPackFromAllocs pins the allocations of the conversions a cluster
// request and its reply make (PackFrom on the caller's and the handler's
// record): one for a payload of up to 128 bytes (the envelope and its
// payload together), two above (the envelope, the payload).
func TestPackFromAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	h := messages.Header{ID: 1, CorrelationID: 2, ReplyTo: "127.0.0.1:7001/reply"}
	for _, c := range []struct {
		note string
		want float64
	}{
		{"", 1},
		{strings.Repeat("s", 40), 1},
		{strings.Repeat("m", 100), 1},
		{strings.Repeat("l", 4<<10), 2},
	} {
		v := &testPing{Seq: 7, Note: c.note}
		if got := testing.AllocsPerRun(1000, func() {
			if _, err := PackFrom(v, h, 0); err != nil {
				t.Fatal(err)
			}
		}); got != c.want {
			t.Errorf("PackFrom of a %d-byte note: %v allocations, want %v", len(c.note), got, c.want)
		}
	}
}

// TestUnpackIntoAllocs pins the decoding side: UnpackInto a caller's value
// allocates nothing for a payload without strings or slices.
func TestUnpackIntoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	w, err := PackOf(testPoint{X: 1.5, Y: -2}, messages.Header{ID: 3, ReplyTo: "127.0.0.1:7001/reply"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	v := new(testPoint)
	if got := testing.AllocsPerRun(1000, func() {
		if _, err := UnpackInto(w, 0, v); err != nil {
			t.Fatal(err)
		}
	}); got != 0 {
		t.Errorf("UnpackInto: %v allocations, want 0", got)
	}
	if *v != (testPoint{X: 1.5, Y: -2}) {
		t.Fatalf("decoded %+v", *v)
	}
}
