//go:build linux && cgo

package hostsim

/*
#include <stddef.h>
#include "hostsim.h"

typedef struct {
	const char *strct;
	const char *field; // Go field name; NULL for the size row
	size_t offset;
	size_t size;
} rc_hs_layout_row;

#define RC_SIZE(s) {#s, NULL, sizeof(s), sizeof(s)}
#define RC_FIELD(s, f, g) {#s, g, offsetof(s, f), sizeof(((s *)0)->f)}

// The one table of the generated structs and their Go fields
// (RC_ABI_LAYOUT, written by gpu/ring/internal/abigen).
#define RC_HS_S(s, goType) RC_SIZE(s),
#define RC_HS_F(s, f, goField) RC_FIELD(s, f, goField),
static const rc_hs_layout_row rc_hs_rows[] = {RC_ABI_LAYOUT(RC_HS_S, RC_HS_F)};

static int rc_hs_row_count(void) { return sizeof(rc_hs_rows) / sizeof(rc_hs_rows[0]); }
static const rc_hs_layout_row *rc_hs_row(int i) { return &rc_hs_rows[i]; }

typedef struct { const char *name; unsigned long long value; } rc_hs_const;
#define RC_CONST(c) {#c, (unsigned long long)(c)}
static const rc_hs_const rc_hs_consts[] = {
	RC_CONST(RC_TERMINATE_NONE), RC_CONST(RC_TERMINATE_DRAIN), RC_CONST(RC_TERMINATE_NOW),
	RC_CONST(RC_TERMINATED), RC_CONST(RC_TERMINATED_BAD_LAUNCH),
	RC_CONST(RC_FLAG_REPLY), RC_CONST(RC_FLAG_ERROR),
	RC_CONST(RC_STATUS_OK), RC_CONST(RC_STATUS_UNKNOWN_TYPE), RC_CONST(RC_STATUS_BAD_LENGTH), RC_CONST(RC_STATUS_BAD_ARGS),
};
static int rc_hs_const_count(void) { return sizeof(rc_hs_consts) / sizeof(rc_hs_consts[0]); }
static const rc_hs_const *rc_hs_const_at(int i) { return &rc_hs_consts[i]; }
*/
import "C"

// FieldLayout is a field's offset and size in bytes.
type FieldLayout struct{ Offset, Size uintptr }

// StructLayout is a struct's size and its named fields' layouts.
type StructLayout struct {
	Size   uintptr
	Fields map[string]FieldLayout // by Go field name
}

// CLayouts returns the layouts of the ring protocol's C structs (every
// struct of kernels/ring_abi_gen.h: its RC_ABI_LAYOUT table), by C struct
// name, as the C compiler laid them out. (The built-in handlers'
// payloads have no hand-written C mirror any more: their structs are
// generated from gpu/ringmsg's Go types with every ring program.)
func CLayouts() map[string]StructLayout {
	out := map[string]StructLayout{}
	for i := 0; i < int(C.rc_hs_row_count()); i++ {
		row := C.rc_hs_row(C.int(i))
		name := C.GoString(row.strct)
		l, ok := out[name]
		if !ok {
			l.Fields = map[string]FieldLayout{}
		}
		if row.field == nil {
			l.Size = uintptr(row.size)
		} else {
			l.Fields[C.GoString(row.field)] = FieldLayout{Offset: uintptr(row.offset), Size: uintptr(row.size)}
		}
		out[name] = l
	}
	return out
}

// CConstants returns ring_abi_gen.h's protocol constants by macro name.
func CConstants() map[string]uint64 {
	out := map[string]uint64{}
	for i := 0; i < int(C.rc_hs_const_count()); i++ {
		c := C.rc_hs_const_at(C.int(i))
		out[C.GoString(c.name)] = uint64(c.value)
	}
	return out
}
