//go:build linux && cgo

package cuda

import (
	"reflect"
	"slices"
	"testing"

	"github.com/ringactor/ringactor/gpu/ring"
)

// TestSharedStructLayouts compares every Go struct shared with device code
// with its C mirror (abi.h, generated from gpu/ring): size and each field's
// offset and size. The ring and slot headers are compared in hostsim's
// layout test (the generated header also asserts every offset at compile
// time), so they are not repeated here.
func TestSharedStructLayouts(t *testing.T) {
	c := cLayouts()
	for _, pair := range []struct {
		c      string
		goType reflect.Type
	}{
		{"rc_control_block", reflect.TypeFor[ring.ControlBlock]()},
		{"rc_grid_header", reflect.TypeFor[ring.GridHeader]()},
		{"rc_mailbox_entry", reflect.TypeFor[ring.MailboxEntry]()},
		{"rc_doorbell_slot", reflect.TypeFor[ring.DoorbellSlot]()},
		{"rc_grid_words", reflect.TypeFor[ring.GridWords]()},
	} {
		cl, ok := c[pair.c]
		if !ok {
			t.Fatalf("abi.h has no layout rows for %s", pair.c)
		}
		if d := diffLayouts(goLayout(pair.goType), cl); d != nil {
			slices.Sort(d)
			t.Errorf("%s vs %s:\n%v", pair.goType, pair.c, d)
		}
	}
}

func TestDiffLayoutsFindsMismatches(t *testing.T) {
	type a struct {
		X uint32
		Y uint64
	}
	g := goLayout(reflect.TypeFor[a]())
	c := structLayout{Size: 12, Fields: map[string]fieldLayout{"X": {0, 4}, "Y": {4, 8}, "Z": {12, 4}}}
	d := diffLayouts(g, c)
	if len(d) != 3 { // size, Y's offset, Z in C only
		t.Fatalf("diff = %v", d)
	}
	if d := diffLayouts(g, g); d != nil {
		t.Fatalf("self diff = %v", d)
	}
}
