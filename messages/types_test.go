package messages

import (
	"math"
	"reflect"
)

// Message types shared by the tests. Each is registered once, here.

type testPing struct {
	Seq  uint64
	Note string
}

type testPoint struct {
	X, Y float64
}

type testRich struct {
	Name    string
	Tags    []string
	Scores  map[string]float64
	F32     float32
	F64     float64
	Vec     []float32
	Points  []testPoint
	Matrix  [][]int32
	Meta    map[string][]string
	Origin  *testPoint
	Raw     []byte
	Flag    bool
	U       uint64
	I       int64
	Extra   map[string]any
	Counter int
}

type testBlob []byte

type testAnyList struct {
	Items []any
}

type testPointList struct {
	Points []testPoint
}

var (
	testPingID      = MustRegister[testPing]("ringactor.messages.test.Ping")
	testPointID     = MustRegister[testPoint]("ringactor.messages.test.Point")
	testRichID      = MustRegister[testRich]("ringactor.messages.test.Rich")
	testBlobID      = MustRegister[testBlob]("ringactor.messages.test.Blob")
	testAnyListID   = MustRegister[testAnyList]("ringactor.messages.test.AnyList")
	testPointListID = MustRegister[testPointList]("ringactor.messages.test.PointList")
	testPtrID       = MustRegister[*testPoint]("ringactor.messages.test.PointPtr")
	testFloatsID    = MustRegister[[]float32]("ringactor.messages.test.Floats")
)

func sampleRich() testRich {
	return testRich{
		Name:   "ring-κέρνελ-リング-🚀",
		Tags:   []string{"gpu", "", "ünïcödé"},
		Scores: map[string]float64{"a": 1.5, "b": -2.25, "π": math.Pi},
		F32:    float32(1) / 3,
		F64:    math.E,
		Vec:    []float32{0, -1.5, math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Inf(1))},
		Points: []testPoint{{1, 2}, {-3.5, 4e300}},
		Matrix: [][]int32{{1, 2, 3}, {}, {math.MinInt32, math.MaxInt32}},
		Meta:   map[string][]string{"k": {"v1", "v2"}, "empty": {}},
		Origin: &testPoint{X: 0.1, Y: 0.2},
		Raw:    []byte{0, 1, 0xff, 0xc1},
		Flag:   true,
		U:      math.MaxUint64,
		I:      math.MinInt64,
		Extra: map[string]any{
			"n": int64(-7), "f": 2.5, "s": "x", "b": false, "l": []any{int8(1), "two", nil},
			"m": map[string]any{"deep": uint16(300)},
		},
		Counter: 42,
	}
}

// samplePayloads holds one value of each registered test type.
func samplePayloads() []any {
	return []any{
		testPing{Seq: 1, Note: "hello"},
		testPing{},
		testPoint{X: math.Copysign(0, -1), Y: math.MaxFloat64},
		sampleRich(),
		testRich{},
		testBlob("blob\x00\xff"),
		testAnyList{Items: []any{int8(-1), uint32(7), "s", []byte("b"), float32(1.25), map[string]any{"a": nil}, true}},
		testPointList{Points: []testPoint{{1, 1}, {2, 2}, {3, 3}}},
		&testPoint{X: 9, Y: 8},
		[]float32{1, 2, 3.5},
	}
}

// deepEqual is reflect.DeepEqual, except that NaN equals NaN: a decoded
// value must equal what it was encoded from even if it holds a NaN.
func deepEqual(a, b any) bool {
	return deepEqualValue(reflect.ValueOf(a), reflect.ValueOf(b))
}

func deepEqualValue(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return deepEqualValue(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return false
		}
		fallthrough
	case reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !deepEqualValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for it := a.MapRange(); it.Next(); {
			v := b.MapIndex(it.Key())
			if !v.IsValid() || !deepEqualValue(it.Value(), v) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !deepEqualValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
}
