package messages

import (
	"errors"
	"reflect"
	"testing"
)

type fixedOK struct {
	N    uint32
	Flag bool
	X    [4]float32
	In   struct{ A, B int64 }
}

type fixedBad struct {
	N uint32
	S []float32
}

func TestCheckFixed(t *testing.T) {
	if err := CheckFixed(reflect.TypeFor[fixedOK]()); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[fixedBad](), reflect.TypeFor[string](), reflect.TypeFor[*int32](),
		reflect.TypeFor[[2]map[int]int](), reflect.TypeFor[int](), reflect.TypeFor[struct{ E any }](),
	} {
		if err := CheckFixed(typ); !errors.Is(err, ErrNotFixedLayout) {
			t.Errorf("%v: %v, want ErrNotFixedLayout", typ, err)
		}
	}
}

func TestFixedRoundTrip(t *testing.T) {
	v := fixedOK{N: 7, Flag: true, X: [4]float32{1, 2, 3, 4}}
	v.In.A, v.In.B = -1, 1<<40
	b := FixedBytes(&v)
	got, err := DecodeFixed[fixedOK](append([]byte(nil), b...))
	if err != nil || got != v {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if _, err := DecodeFixed[fixedOK](b[:len(b)-1]); !errors.Is(err, ErrDecode) {
		t.Fatalf("short input: %v, want ErrDecode", err)
	}
}
