//go:build linux && cgo

package cuda

/*
#include <stddef.h>
#include "abi.h"

typedef struct {
	const char *strct; // C struct name
	const char *field; // the Go field it mirrors; NULL for the struct's size row
	size_t offset;     // offsetof, or sizeof for the size row
	size_t size;       // sizeof the field
} rc_layout_row;

#define RC_SIZE(s) {#s, NULL, sizeof(s), sizeof(s)}
#define RC_FIELD(s, f, gofield) {#s, gofield, offsetof(s, f), sizeof(((s *)0)->f)}

static const rc_layout_row rc_layout_rows[] = {
	RC_SIZE(rc_control_block),
	RC_FIELD(rc_control_block, gate, "Gate"),
	RC_FIELD(rc_control_block, terminate, "Terminate"),
	RC_FIELD(rc_control_block, terminated_ack, "TerminatedAck"),
	RC_FIELD(rc_control_block, processed, "Processed"),
	RC_FIELD(rc_control_block, errors, "Errors"),
	RC_FIELD(rc_control_block, dropped, "Dropped"),
	RC_FIELD(rc_control_block, heartbeat, "Heartbeat"),
	RC_FIELD(rc_control_block, latency_min, "LatencyMin"),
	RC_FIELD(rc_control_block, latency_max, "LatencyMax"),
	RC_FIELD(rc_control_block, latency_sum, "LatencySum"),
	RC_FIELD(rc_control_block, latency_count, "LatencyCount"),
	RC_FIELD(rc_control_block, restarts, "Restarts"),
	RC_SIZE(rc_grid_header),
	RC_FIELD(rc_grid_header, capacity, "Capacity"),
	RC_FIELD(rc_grid_header, bell_capacity, "BellCapacity"),
	RC_FIELD(rc_grid_header, state_stride, "StateStride"),
	RC_SIZE(rc_mailbox_entry),
	RC_FIELD(rc_mailbox_entry, gen, "Gen"),
	RC_FIELD(rc_mailbox_entry, control, "Control"),
	RC_FIELD(rc_mailbox_entry, in, "In"),
	RC_FIELD(rc_mailbox_entry, out, "Out"),
	RC_FIELD(rc_mailbox_entry, queued, "Queued"),
	RC_FIELD(rc_mailbox_entry, out_wait, "OutWait"),
	RC_SIZE(rc_doorbell_slot),
	RC_FIELD(rc_doorbell_slot, seq, "Seq"),
	RC_FIELD(rc_doorbell_slot, mailbox, "Mailbox"),
	RC_SIZE(rc_grid_words),
	RC_FIELD(rc_grid_words, bell_head, "BellHead"),
	RC_FIELD(rc_grid_words, exited, "Exited"),
	RC_FIELD(rc_grid_words, watcher, "Watcher"),
};

static int rc_layout_count(void) { return sizeof(rc_layout_rows) / sizeof(rc_layout_rows[0]); }
static const rc_layout_row *rc_layout_at(int i) { return &rc_layout_rows[i]; }
*/
import "C"

import (
	"fmt"
	"reflect"
)

// structLayout is the size and named-field offsets of a struct shared with
// device code. To check a new shared struct, add its Go type to gpu/ring's
// generator (or declare it in abi.h), add its rows to rc_layout_rows
// above, and compare in layout_test.go.
type structLayout struct {
	Size   uintptr
	Fields map[string]fieldLayout // by Go field name
}

type fieldLayout struct{ Offset, Size uintptr }

// cLayouts returns the layouts of abi.h's structs, by C struct name, as the
// C compiler laid them out.
func cLayouts() map[string]structLayout {
	out := map[string]structLayout{}
	for i := 0; i < int(C.rc_layout_count()); i++ {
		row := C.rc_layout_at(C.int(i))
		name := C.GoString(row.strct)
		l, ok := out[name]
		if !ok {
			l.Fields = map[string]fieldLayout{}
		}
		if row.field == nil {
			l.Size = uintptr(row.size)
		} else {
			l.Fields[C.GoString(row.field)] = fieldLayout{Offset: uintptr(row.offset), Size: uintptr(row.size)}
		}
		out[name] = l
	}
	return out
}

// goLayout returns the layout of struct type t: its size and every named
// (not blank) field.
func goLayout(t reflect.Type) structLayout {
	l := structLayout{Size: t.Size(), Fields: map[string]fieldLayout{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Name == "_" {
			continue
		}
		l.Fields[f.Name] = fieldLayout{Offset: f.Offset, Size: f.Type.Size()}
	}
	return l
}

// diffLayouts lists how c differs from g; nil when they agree.
func diffLayouts(g, c structLayout) []string {
	var d []string
	if g.Size != c.Size {
		d = append(d, fmt.Sprintf("size: Go %d, C %d", g.Size, c.Size))
	}
	for name, gf := range g.Fields {
		cf, ok := c.Fields[name]
		switch {
		case !ok:
			d = append(d, fmt.Sprintf("%s: in Go only", name))
		case gf != cf:
			d = append(d, fmt.Sprintf("%s: Go offset %d size %d, C offset %d size %d", name, gf.Offset, gf.Size, cf.Offset, cf.Size))
		}
	}
	for name := range c.Fields {
		if _, ok := g.Fields[name]; !ok {
			d = append(d, fmt.Sprintf("%s: in C only", name))
		}
	}
	return d
}
