package wire

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/ringactor/ringactor/messages"
)

// testBig is a message type whose slice elements are large: nils standing
// for them amplify a payload by the element size.
type testBig struct {
	Items []testBigItem
}

type testBigItem struct {
	Values [512]float64
}

var testBigID = messages.MustRegister[testBig]("ringactor.wire.test.Big")

// allocatedBy returns the bytes f allocates (process-wide: the wire tests
// run nothing in the background).
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestUnpackHostileBudget sends a payload of nils standing for 4 KiB
// elements through the envelope a peer sends: the untyped and typed forms
// both fail with messages.ErrAllocBudget having allocated in proportion to
// the payload (the decoder alone allocates 8 KiB per nil).
func TestUnpackHostileBudget(t *testing.T) {
	n := 64<<10 - 16
	data := append([]byte{0x81, 0xa5, 'I', 't', 'e', 'm', 's', 0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)},
		bytes.Repeat([]byte{0xc0}, n)...)
	allowed := uint64(messages.DecodeAllocFactor*len(data) + messages.DecodeAllocSlack + 64<<10)
	w := &WireEnvelope{TypeId: uint32(testBigID), Payload: data}
	var err error
	for name, f := range map[string]func(){
		"Unpack":     func() { _, err = Unpack(w, 0) },
		"UnpackAs":   func() { _, _, err = UnpackAs[testBig](w, 0) },
		"UnpackInto": func() { var v testBig; _, err = UnpackInto(w, 0, &v) },
	} {
		got := allocatedBy(f)
		var de *messages.DecodeError
		if !errors.As(err, &de) || de.ID != testBigID || !errors.Is(err, messages.ErrAllocBudget) {
			t.Errorf("%s: err = %v, want a *DecodeError wrapping ErrAllocBudget", name, err)
		}
		if got > allowed {
			t.Errorf("%s of %d bytes allocated %d bytes (bound %d)", name, len(data), got, allowed)
		}
	}
}
