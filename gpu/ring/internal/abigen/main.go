// Command abigen writes the C declarations of gpu/ring's shared layouts
// (gpu/cuda/kernels/ring_abi_gen.h): the padded word, the control block,
// the ring and slot headers as C structs, and the protocol's constants as
// macros, each struct followed by static assertions of its size and of
// every field's offset, so device code, the host shim and the cgo layout
// checks fail to compile when the C side drifts from the Go types.
//
// It reads the Go types with reflect (sizes, offsets, field types) and the
// package source with go/parser (the comments copied into the header).
// Run it through go generate ./gpu/ring.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/ringactor/ringactor/gpu/ring"
)

// structs are the generated structs in declaration order: C name and Go
// type. A struct may use only the ones before it.
var structs = []struct {
	c   string
	go_ reflect.Type
}{
	{"rc_padded_u64", reflect.TypeFor[ring.Word]()},
	{"rc_control_block", reflect.TypeFor[ring.ControlBlock]()},
	{"rc_ring_header", reflect.TypeFor[ring.RingHeader]()},
	{"rc_slot_header", reflect.TypeFor[ring.SlotHeader]()},
	{"rc_grid_header", reflect.TypeFor[ring.GridHeader]()},
	{"rc_mailbox_entry", reflect.TypeFor[ring.MailboxEntry]()},
	{"rc_doorbell_slot", reflect.TypeFor[ring.DoorbellSlot]()},
	{"rc_grid_words", reflect.TypeFor[ring.GridWords]()},
	{"rc_ready_slot", reflect.TypeFor[ring.ReadySlot]()},
	{"rc_lane_header", reflect.TypeFor[ring.LaneHeader]()},
	{"rc_lane_slot", reflect.TypeFor[ring.LaneSlot]()},
	{"rc_lane_set", reflect.TypeFor[ring.LaneSet]()},
}

// constant is one generated macro: its C name, the Go constant it mirrors
// (for the comment) and its value.
type constant struct {
	c, goName string
	value     uint64
}

// constants are the generated macros, in groups separated by a blank line.
var constants = [][]constant{
	{{"RC_CACHE_LINE", "CacheLine", ring.CacheLine}},
	{{"RC_GATE_CLOSED", "GateClosed", ring.GateClosed}, {"RC_GATE_OPEN", "GateOpen", ring.GateOpen}},
	{
		{"RC_TERMINATE_NONE", "TerminateNone", uint64(ring.TerminateNone)},
		{"RC_TERMINATE_DRAIN", "TerminateDrain", uint64(ring.TerminateDrain)},
		{"RC_TERMINATE_NOW", "TerminateNow", uint64(ring.TerminateNow)},
	},
	{
		{"RC_TERMINATED", "Terminated", ring.Terminated},
		{"RC_TERMINATED_BAD_LAUNCH", "TerminatedBadLaunch", ring.TerminatedBadLaunch},
	},
	{{"RC_FLAG_REPLY", "FlagReply", uint64(ring.FlagReply)}, {"RC_FLAG_ERROR", "FlagError", uint64(ring.FlagError)}},
	{
		{"RC_STATUS_OK", "StatusOK", uint64(ring.StatusOK)},
		{"RC_STATUS_UNKNOWN_TYPE", "StatusUnknownType", uint64(ring.StatusUnknownType)},
		{"RC_STATUS_BAD_LENGTH", "StatusBadLength", uint64(ring.StatusBadLength)},
		{"RC_STATUS_BAD_ARGS", "StatusBadArgs", uint64(ring.StatusBadArgs)},
	},
	{
		{"RC_CLAIM_FREE", "ClaimFree", uint64(ring.ClaimFree)},
		{"RC_CLAIM_OWNED", "ClaimOwned", uint64(ring.ClaimOwned)},
		{"RC_CLAIM_AGAIN", "ClaimAgain", uint64(ring.ClaimAgain)},
	},
	{
		{"RC_LANE_OPEN", "LaneOpen", ring.LaneOpen},
		{"RC_LANE_WRITING", "LaneWriting", ring.LaneWriting},
		{"RC_LANE_CLOSED", "LaneClosed", ring.LaneClosed},
		{"RC_LANE_SLOTS_MAX", "LaneSlotsMax", ring.LaneSlotsMax},
		{"RC_FLAG_ORIGIN_SHIFT", "FlagOriginShift", ring.FlagOriginShift},
	},
}

func main() {
	out := flag.String("o", "", "output file (stdout when empty)")
	src := flag.String("src", ".", "directory of gpu/ring's source, for the comments")
	flag.Parse()
	b, err := Generate(*src)
	if err != nil {
		log.Fatal(err)
	}
	if *out == "" {
		_, err = os.Stdout.Write(b)
	} else {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// comments holds the Go comments of the ring package: type docs, field
// comments by "Type.Field", constant docs.
type comments map[string]string

func parseComments(dir string) (comments, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	cm := comments{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range g.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					doc := s.Doc
					if doc == nil {
						doc = g.Doc
					}
					cm[s.Name.Name] = doc.Text()
					st, ok := s.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fl := range st.Fields.List {
						c := fl.Comment
						if c == nil {
							c = fl.Doc
						}
						for _, n := range fl.Names {
							cm[s.Name.Name+"."+n.Name] = c.Text()
						}
					}
				case *ast.ValueSpec:
					c := s.Doc
					if c == nil {
						c = s.Comment
					}
					for _, n := range s.Names {
						cm[n.Name] = c.Text()
					}
				}
			}
		}
	}
	return cm, nil
}

// oneLine joins a comment's lines.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Generate returns the header for gpu/ring's source in dir.
func Generate(dir string) ([]byte, error) {
	cm, err := parseComments(dir)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`// Code generated by gpu/ring/internal/abigen; DO NOT EDIT.
// Edit the Go types of gpu/ring and run go generate ./gpu/ring.

// The C side of gpu/ring's shared layouts: the structs host and device
// share in mapped pinned memory and the protocol's constants. Every struct
// is followed by static assertions of its size and of each field's offset
// as Go lays them out, so a drift fails compilation of the kernels (nvcc),
// the host shim (g++) and the cgo layout checks.

#ifndef RINGACTOR_RING_ABI_GEN_H
#define RINGACTOR_RING_ABI_GEN_H

// NVRTC (CUDA's run-time compiler, which compiles user ring handlers with
// this header) has neither the C library's headers nor offsetof: it gets
// the fixed-width types here and only the size assertions.
#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define RC_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define RC_ASSERT_OFFSET(cond, msg)
#else
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
#define RC_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define RC_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
#define RC_ASSERT_OFFSET(cond, msg) RC_STATIC_ASSERT(cond, msg)
#endif
`)
	for _, group := range constants {
		p("\n")
		for _, c := range group {
			p("#define %s %du // ring.%s", c.c, c.value, c.goName)
			if doc := oneLine(strings.TrimPrefix(cm[c.goName], c.goName+":")); doc != "" && doc != c.goName {
				p(": %s", doc)
			}
			p("\n")
		}
	}
	cNames := map[reflect.Type]string{}
	for _, s := range structs {
		if err := genStruct(p, cm, cNames, s.c, s.go_); err != nil {
			return nil, err
		}
		cNames[s.go_] = s.c
	}
	genLayoutTable(p)
	p("\n#endif\n")
	return b.Bytes(), nil
}

func genStruct(p func(string, ...any), cm comments, cNames map[reflect.Type]string, cName string, t reflect.Type) error {
	p("\n")
	for _, line := range strings.Split(strings.TrimSpace(cm[t.Name()]), "\n") {
		p("%s\n", strings.TrimSpace("// "+line))
	}
	p("// (ring.%s)\ntypedef struct %s {\n", t.Name(), cName)
	type field struct {
		name   string
		offset uintptr
	}
	var fields []field
	pads := 0
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		var name string
		switch {
		case f.Name == "_":
			name = "pad"
			if pads > 0 {
				name = fmt.Sprintf("pad%d", pads)
			}
			pads++
		case f.Anonymous && f.Type == reflect.TypeFor[atomic.Uint64]():
			name = "v"
		case f.Anonymous:
			return fmt.Errorf("%s.%s: embedded %s has no C form", t.Name(), f.Name, f.Type)
		default:
			name = snake(f.Name)
		}
		ctype, dims, err := cType(cNames, f.Type)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
		p("\t%s %s%s;", ctype, name, dims)
		if c := oneLine(cm[t.Name()+"."+f.Name]); c != "" && f.Name != "_" {
			p(" // %s", c)
		}
		p("\n")
		fields = append(fields, field{name, f.Offset})
	}
	p("} %s;\n", cName)
	p("RC_STATIC_ASSERT(sizeof(%s) == %d, \"sizeof %s != Go's ring.%s\");\n", cName, t.Size(), cName, t.Name())
	for _, f := range fields {
		p("RC_ASSERT_OFFSET(offsetof(%s, %s) == %d, \"%s.%s: offset differs from Go's ring.%s\");\n",
			cName, f.name, f.offset, cName, f.name, t.Name())
	}
	return nil
}

// genLayoutTable writes RC_ABI_LAYOUT, the one table of every generated
// struct and named field for the cgo layout check (gpu/cuda/hostsim's
// CLayouts): S(c struct, Go type name) and F(c struct, c field, Go field
// name) for each, padding left out.
func genLayoutTable(p func(string, ...any)) {
	p("\n// RC_ABI_LAYOUT(S, F) lists every struct above for layout checks: S(struct, \"GoType\") and\n")
	p("// F(struct, field, \"GoField\") for each named field (padding left out).\n")
	p("#define RC_ABI_LAYOUT(S, F)")
	for _, s := range structs {
		p(" \\\n\tS(%s, %q)", s.c, s.go_.Name())
		for i := 0; i < s.go_.NumField(); i++ {
			f := s.go_.Field(i)
			switch {
			case f.Name == "_":
				continue
			case f.Anonymous:
				p(" F(%s, v, %q)", s.c, f.Name)
			default:
				p(" F(%s, %s, %q)", s.c, snake(f.Name), f.Name)
			}
		}
	}
	p("\n")
}

// cType returns the C type of a Go field type and the array suffix.
func cType(cNames map[reflect.Type]string, t reflect.Type) (string, string, error) {
	if n, ok := cNames[t]; ok {
		return n, "", nil
	}
	if t == reflect.TypeFor[atomic.Uint64]() {
		return "uint64_t", "", nil
	}
	switch t.Kind() {
	case reflect.Uint8:
		return "uint8_t", "", nil
	case reflect.Uint16:
		return "uint16_t", "", nil
	case reflect.Uint32:
		return "uint32_t", "", nil
	case reflect.Uint64:
		return "uint64_t", "", nil
	case reflect.Int8:
		return "int8_t", "", nil
	case reflect.Int16:
		return "int16_t", "", nil
	case reflect.Int32:
		return "int32_t", "", nil
	case reflect.Int64:
		return "int64_t", "", nil
	case reflect.Float32:
		return "float", "", nil
	case reflect.Float64:
		return "double", "", nil
	case reflect.Array:
		e, dims, err := cType(cNames, t.Elem())
		return e, fmt.Sprintf("[%d]", t.Len()) + dims, err
	}
	return "", "", fmt.Errorf("type %s has no C form (add its struct to the generator's list first)", t)
}

// snake converts a Go field name to the C field name: TypeID → type_id,
// TimestampNS → timestamp_ns, SlotSize → slot_size.
func snake(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prevLower := unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1])
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if prevLower || (unicode.IsUpper(r[i-1]) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}
