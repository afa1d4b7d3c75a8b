package messages

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// DecodeAllocFactor bounds what decoding a payload may allocate: at most the
// size of the target type plus DecodeAllocFactor bytes per input byte plus
// [DecodeAllocSlack]. A payload the msgpack decoder would need more for (say
// nils standing for large structs in a slice) fails with a [*DecodeError]
// wrapping [ErrAllocBudget] before anything is allocated, so a payload of at
// most [MaxPayloadSize] bytes never makes a decode allocate more than
// DecodeAllocFactor × MaxPayloadSize.
const DecodeAllocFactor = 64

// DecodeAllocSlack is the fixed allowance of a decode's allocation budget
// (see [DecodeAllocFactor]).
const DecodeAllocSlack = 64 << 10

// ErrAllocBudget is wrapped by the [*DecodeError] of a payload whose decoding
// would allocate more than its budget (see [DecodeAllocFactor]).
var ErrAllocBudget = errors.New("payload would allocate more than its decode budget")

// decodeBudget returns the most bytes decoding n bytes into a t may allocate.
func decodeBudget(t reflect.Type, n int) int64 {
	return int64(t.Size()) + DecodeAllocFactor*int64(n) + DecodeAllocSlack
}

// checkDecodeBudget estimates, from above, what the msgpack decoder
// allocates decoding data (already checked by validateMsgpack) into a t, and
// fails if that exceeds decodeBudget. It reads data once and allocates
// nothing per element.
func checkDecodeBudget(data []byte, t reflect.Type) error {
	w := budgetWalker{limit: decodeBudget(t, len(data))}
	if _, err := w.value(data, t, 0); err != nil {
		return err
	}
	return nil
}

type budgetWalker struct {
	used, limit int64
}

// charge adds n elements of size bytes each to the estimate.
func (w *budgetWalker) charge(n uint64, size uintptr) error {
	if n != 0 && uint64(size) > uint64(w.limit)/n {
		return w.over(uint64(w.limit) + 1)
	}
	w.used += int64(n * uint64(size))
	if w.used > w.limit {
		return w.over(uint64(w.used))
	}
	return nil
}

func (w *budgetWalker) over(need uint64) error {
	return fmt.Errorf("%w: at least %d bytes, budget %d", ErrAllocBudget, need, w.limit)
}

// Sizes charged for values decoded into an interface (the msgpack decoder's
// defaults: []any, map[string]any, boxed scalars).
const (
	ifaceSize    = 16
	boxSize      = 16
	mapSlotExtra = 16 // per-entry overhead of a Go map beyond key and value
	mapFactor    = 3  // capacity slack and indirect storage of big entries
)

func skipBytes(b []byte, n uint64) ([]byte, error) {
	if n > uint64(len(b)) {
		return nil, errTruncated
	}
	return b[n:], nil
}

var (
	customDecoderType = reflect.TypeFor[msgpack.CustomDecoder]()
	unmarshalerType   = reflect.TypeFor[msgpack.Unmarshaler]()
	binaryUnmarshaler = reflect.TypeFor[encoding.BinaryUnmarshaler]()
	textUnmarshaler   = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// opaque reports whether t decodes itself (so its allocation cannot be
// modelled from its type): such values are charged as if decoded into an
// interface.
func opaque(t reflect.Type) bool {
	if v, ok := opaqueTypes.Load(t); ok {
		return v.(bool)
	}
	o := implementsDecoder(t)
	opaqueTypes.Store(t, o)
	return o
}

var opaqueTypes sync.Map // reflect.Type → bool

func implementsDecoder(t reflect.Type) bool {
	for _, it := range [...]reflect.Type{customDecoderType, unmarshalerType, binaryUnmarshaler, textUnmarshaler} {
		if t.Implements(it) || reflect.PointerTo(t).Implements(it) {
			return true
		}
	}
	return false
}

// value walks the value b starts with, decoded into a t (nil: into an
// interface), and returns what follows it. worst, when not 0, is the charge
// for every element and every value: it models decoding into a type the
// walker cannot follow (an unresolved struct field).
func (w *budgetWalker) value(b []byte, t reflect.Type, worst uintptr) ([]byte, error) {
	kind, n, b, err := mpHeader(b)
	if err != nil {
		return nil, err
	}
	if worst != 0 {
		return w.generic(kind, n, b, worst)
	}
	return w.typed(kind, n, b, t)
}

// typed walks a value whose header (kind, n) has been read and whose content
// starts b, decoded into a t (nil: into an interface).
func (w *budgetWalker) typed(kind int, n uint64, b []byte, t reflect.Type) ([]byte, error) {
	for t != nil && t.Kind() == reflect.Pointer && kind != hNil && !opaque(t) {
		// The decoder allocates the pointee and decodes the same value
		// into it.
		if err := w.charge(1, t.Elem().Size()); err != nil {
			return nil, err
		}
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || opaque(t) {
		return w.generic(kind, n, b, 0)
	}
	if kind == hNil {
		return b, nil
	}
	switch t.Kind() {
	case reflect.Slice:
		switch kind {
		case hStr, hBin:
			if err := w.charge(2*n, 1); err != nil {
				return nil, err
			}
			return skipBytes(b, n)
		case hArray:
			// growSliceValue allocates the elements and copies them into a
			// new backing array: twice the slice.
			if err := w.charge(2*n, t.Elem().Size()); err != nil {
				return nil, err
			}
			return w.children(b, n, t.Elem(), nil)
		}
	case reflect.Array:
		if kind == hArray {
			return w.children(b, n, t.Elem(), nil)
		}
	case reflect.Map:
		if kind == hMap {
			if err := w.charge(n, mapFactor*(t.Key().Size()+t.Elem().Size()+mapSlotExtra)); err != nil {
				return nil, err
			}
			return w.children(b, n, t.Key(), t.Elem())
		}
	case reflect.Struct:
		switch kind {
		case hMap:
			return w.structMap(b, n, t)
		case hArray:
			info := structInfoOf(t)
			var err error
			for i := range n {
				if i < uint64(len(info.list)) {
					b, err = w.value(b, info.list[i], 0)
				} else {
					b, err = w.value(b, nil, info.worst)
				}
				if err != nil {
					return nil, err
				}
			}
			return b, nil
		}
	}
	// A scalar, a string, or a mismatch the decoder rejects: charge it as
	// if decoded into an interface.
	return w.generic(kind, n, b, 0)
}

// children walks n values (n pairs when val is not nil) of the given types.
func (w *budgetWalker) children(b []byte, n uint64, key, val reflect.Type) ([]byte, error) {
	var err error
	for range n {
		if b, err = w.value(b, key, 0); err != nil {
			return nil, err
		}
		if val != nil {
			if b, err = w.value(b, val, 0); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// generic walks a value decoded into an interface (worst == 0) or into a
// type the walker does not follow (worst, charged for every value and
// element).
func (w *budgetWalker) generic(kind int, n uint64, b []byte, worst uintptr) ([]byte, error) {
	if err := w.charge(1, max(worst, boxSize)); err != nil {
		return nil, err
	}
	var err error
	switch kind {
	case hStr, hBin, hExt:
		if err := w.charge(2*n, 1); err != nil {
			return nil, err
		}
		return skipBytes(b, n)
	case hArray:
		if err := w.charge(2*n, max(worst, ifaceSize)); err != nil {
			return nil, err
		}
		for range n {
			if b, err = w.value(b, nil, worst); err != nil {
				return nil, err
			}
		}
	case hMap:
		if err := w.charge(n, max(worst, mapFactor*(16+ifaceSize+mapSlotExtra))); err != nil {
			return nil, err
		}
		for range 2 * n {
			if b, err = w.value(b, nil, worst); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// structMap walks a struct encoded as a map of field names to values.
func (w *budgetWalker) structMap(b []byte, n uint64, t reflect.Type) ([]byte, error) {
	info := structInfoOf(t)
	for range n {
		kind, klen, rest, err := mpHeader(b)
		if err != nil {
			return nil, err
		}
		if kind != hStr {
			// The decoder rejects a non-string field name.
			return w.generic(kind, klen, rest, 0)
		}
		if klen > uint64(len(rest)) {
			return nil, errTruncated
		}
		ft, known := info.fields[string(rest[:klen])]
		b = rest[klen:]
		switch {
		case known:
			b, err = w.value(b, ft, 0)
		case info.exact:
			// The decoder skips a field the struct does not have.
			b, err = w.value(b, nil, 1)
		default:
			b, err = w.value(b, nil, info.worst)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// structInfo is what the walker knows of a struct type.
type structInfo struct {
	// fields maps the msgpack name of each modelled field to its type.
	fields map[string]reflect.Type
	// list holds the modelled fields' types in order (the array encoding).
	list []reflect.Type
	// exact is true when every decoded field is modelled, so that a name
	// not in fields is skipped by the decoder.
	exact bool
	// worst is the most any value or element inside the struct may
	// allocate per input byte.
	worst uintptr
}

var structInfos sync.Map // reflect.Type → *structInfo

func structInfoOf(t reflect.Type) *structInfo {
	if v, ok := structInfos.Load(t); ok {
		return v.(*structInfo)
	}
	info := &structInfo{fields: make(map[string]reflect.Type), exact: true}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous || opts != "" && opts != "omitempty" || f.Name == "_msgpack" {
			// Inlined fields, aliases, interning, struct options: not
			// modelled.
			info.exact = false
			if f.Anonymous {
				continue
			}
		}
		if f.PkgPath != "" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := info.fields[name]; dup {
			info.exact = false
			continue
		}
		info.fields[name] = f.Type
		info.list = append(info.list, f.Type)
	}
	if !info.exact {
		// The array encoding follows msgpack's own field list, which
		// this one may not match.
		info.list = nil
	}
	info.worst = worstOf(t, map[reflect.Type]bool{})
	v, _ := structInfos.LoadOrStore(t, info)
	return v.(*structInfo)
}

// worstOf returns an upper bound on what one value or element decoded
// anywhere inside a t may allocate.
func worstOf(t reflect.Type, seen map[reflect.Type]bool) uintptr {
	worst := uintptr(mapFactor * (16 + ifaceSize + mapSlotExtra))
	if seen[t] {
		return worst
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer:
		worst = max(worst, t.Elem().Size(), worstOf(t.Elem(), seen))
	case reflect.Slice:
		worst = max(worst, 2*t.Elem().Size(), worstOf(t.Elem(), seen))
	case reflect.Array:
		worst = max(worst, worstOf(t.Elem(), seen))
	case reflect.Map:
		worst = max(worst, mapFactor*(t.Key().Size()+t.Elem().Size()+mapSlotExtra),
			worstOf(t.Key(), seen), worstOf(t.Elem(), seen))
	case reflect.Struct:
		for i := range t.NumField() {
			worst = max(worst, worstOf(t.Field(i).Type, seen))
		}
	}
	return worst
}
