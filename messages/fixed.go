package messages

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"
)

// ErrNotFixedLayout: a type given to the fixed-layout codec holds a
// pointer, slice, string, map, interface, channel or function somewhere,
// so its bytes are not its value and cannot be shared with device code.
var ErrNotFixedLayout = errors.New("ringactor/messages: not a fixed-layout type")

// CheckFixed reports whether t is a fixed-layout type: booleans, integers
// and floats of explicit size, arrays and structs of those. Such a value is
// exactly its bytes, which is what device payloads need (docs/DESIGN.md: the Go
// layout is compared with the C struct of the .cu side in tests).
func CheckFixed(t reflect.Type) error {
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return nil
	case reflect.Array:
		if err := CheckFixed(t.Elem()); err != nil {
			return fmt.Errorf("%v: %w", t, err)
		}
		return nil
	case reflect.Struct:
		for i := range t.NumField() {
			if err := CheckFixed(t.Field(i).Type); err != nil {
				return fmt.Errorf("%v.%s: %w", t, t.Field(i).Name, err)
			}
		}
		return nil
	}
	return fmt.Errorf("%w: %v (kind %v)", ErrNotFixedLayout, t, t.Kind())
}

// FixedBytes returns the bytes of *v, without copying: they alias v. T
// must be a fixed-layout type (CheckFixed).
func FixedBytes[T any](v *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
}

// DecodeFixed copies b into a value of the fixed-layout type T; b must be
// exactly as long as T.
func DecodeFixed[T any](b []byte) (T, error) {
	var v T
	if len(b) != int(unsafe.Sizeof(v)) {
		return v, &DecodeError{Err: fmt.Errorf("%d bytes for %v, which has %d", len(b), reflect.TypeFor[T](), unsafe.Sizeof(v))}
	}
	copy(FixedBytes(&v), b)
	return v, nil
}
