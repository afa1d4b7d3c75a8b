package messages

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

func TestTypeIDIsFNV1a32OfName(t *testing.T) {
	type fooBar struct{ A int }
	id, err := Register[fooBar]("foobar")
	if err != nil {
		t.Fatal(err)
	}
	// Published FNV-1a 32 test vector for "foobar".
	if id != 0xbf9cf968 {
		t.Fatalf("id = %v, want 0xbf9cf968", id)
	}
	if got := id.String(); got != "0xbf9cf968" {
		t.Fatalf("String() = %q", got)
	}
	if got := TypeID(0x1f).String(); got != "0x0000001f" {
		t.Fatalf("String() = %q, want zero padding", got)
	}
}

func TestRegisterIsIdempotent(t *testing.T) {
	id, err := Register[testPing]("ringactor.messages.test.Ping")
	if err != nil || id != testPingID {
		t.Fatalf("Register again = %v, %v; want %v, nil", id, err, testPingID)
	}
	if got := MustRegister[testPing]("ringactor.messages.test.Ping"); got != testPingID {
		t.Fatalf("MustRegister again = %v", got)
	}
}

func TestRegisterLookups(t *testing.T) {
	id, err := IDOf[testPoint]()
	if err != nil || id != testPointID {
		t.Fatalf("IDOf = %v, %v", id, err)
	}
	if id, err := IDOfValue(testPoint{}); err != nil || id != testPointID {
		t.Fatalf("IDOfValue = %v, %v", id, err)
	}
	if id, err := IDOfValue(&testPoint{}); err != nil || id != testPtrID {
		t.Fatalf("IDOfValue(pointer) = %v, %v; want the pointer type's id %v", id, err, testPtrID)
	}
	want := Info{ID: testPointID, Name: "ringactor.messages.test.Point", Type: reflect.TypeFor[testPoint]()}
	if info, ok := Lookup(testPointID); !ok || info != want {
		t.Fatalf("Lookup = %+v, %v", info, ok)
	}
	if info, ok := LookupName(want.Name); !ok || info != want {
		t.Fatalf("LookupName = %+v, %v", info, ok)
	}
	if _, ok := Lookup(0); ok {
		t.Fatal("Lookup(0) found a type")
	}
	if _, ok := LookupName("no such name"); ok {
		t.Fatal("LookupName found an unknown name")
	}
	all := Registered()
	if !slices.IsSortedFunc(all, func(a, b Info) int { return strings.Compare(a.Name, b.Name) }) {
		t.Fatal("Registered() is not sorted by name")
	}
	if !slices.Contains(all, want) {
		t.Fatalf("Registered() lacks %+v", want)
	}
}

func TestRegisterDuplicateName(t *testing.T) {
	type other struct{}
	_, err := Register[other]("ringactor.messages.test.Ping")
	var de *DuplicateTypeError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want *DuplicateTypeError", err)
	}
	if de.Collision || de.Existing != reflect.TypeFor[testPing]() || de.New != reflect.TypeFor[other]() || de.Name != "ringactor.messages.test.Ping" {
		t.Fatalf("err = %+v", de)
	}
	if !strings.Contains(err.Error(), "already registered for type messages.testPing") {
		t.Fatalf("message = %q", err)
	}
}

func TestRegisterDuplicateType(t *testing.T) {
	_, err := Register[testPing]("ringactor.messages.test.Ping2")
	var de *DuplicateTypeError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want *DuplicateTypeError", err)
	}
	if de.Collision || de.ExistingName != "ringactor.messages.test.Ping" || de.Existing != de.New {
		t.Fatalf("err = %+v", de)
	}
	if _, ok := LookupName("ringactor.messages.test.Ping2"); ok {
		t.Fatal("failed registration left a name behind")
	}
}

func TestRegisterHashCollision(t *testing.T) {
	// "costarring" and "liquid" are a known FNV-1a 32 collision.
	if typeIDOf("costarring") != typeIDOf("liquid") {
		t.Fatal("test vector is not a collision")
	}
	type first struct{}
	type second struct{}
	if _, err := Register[first]("costarring"); err != nil {
		t.Fatal(err)
	}
	_, err := Register[second]("liquid")
	var de *DuplicateTypeError
	if !errors.As(err, &de) || !de.Collision || de.ExistingName != "costarring" {
		t.Fatalf("err = %#v, want a collision with costarring", err)
	}
	if !strings.Contains(err.Error(), "collision") {
		t.Fatalf("message = %q", err)
	}
}

func TestRegisterInvalid(t *testing.T) {
	cases := []struct {
		name string
		reg  func() (TypeID, error)
	}{
		{"any", func() (TypeID, error) { return Register[any]("t.any") }},
		{"error", func() (TypeID, error) { return Register[error]("t.error") }},
		{"func", func() (TypeID, error) { return Register[func()]("t.func") }},
		{"chan", func() (TypeID, error) { return Register[chan int]("t.chan") }},
		{"unsafe.Pointer", func() (TypeID, error) { return Register[unsafe.Pointer]("t.unsafe") }},
		{"empty name", func() (TypeID, error) { return Register[struct{ Z int }]("") }},
		// The FNV-1a 32 hash of this name is the reserved id 0.
		{"zero id", func() (TypeID, error) { return Register[struct{ Y int }]("zero-29154430J") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := c.reg()
			var ie *InvalidTypeError
			if !errors.As(err, &ie) || id != 0 {
				t.Fatalf("Register = %v, %v; want *InvalidTypeError", id, err)
			}
			if ie.Reason == "" || ie.Type == nil {
				t.Fatalf("err = %+v", ie)
			}
		})
	}
}

func TestMustRegisterPanics(t *testing.T) {
	defer func() {
		err, _ := recover().(error)
		var de *DuplicateTypeError
		if !errors.As(err, &de) {
			t.Fatalf("recovered %v, want *DuplicateTypeError", err)
		}
	}()
	MustRegister[testPoint]("ringactor.messages.test.Ping")
}

func TestUnregistered(t *testing.T) {
	type unknown struct{}
	_, err := IDOf[unknown]()
	var ue *UnregisteredTypeError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnregistered) || ue.Type != reflect.TypeFor[unknown]() {
		t.Fatalf("err = %v", err)
	}
	want := "messages: type messages.unknown is not registered (call messages.Register[messages.unknown](name))"
	if err.Error() != want {
		t.Fatalf("message = %q, want %q", err, want)
	}
	if _, err := IDOfValue(unknown{}); !errors.Is(err, ErrUnregistered) {
		t.Fatalf("IDOfValue err = %v", err)
	}
	if _, err := IDOfValue(nil); err != ErrNilMessage {
		t.Fatalf("IDOfValue(nil) err = %v", err)
	}
}

func TestIDOfDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := IDOf[testRich](); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("IDOf allocates %v times per call", allocs)
	}
	allocs = testing.AllocsPerRun(1000, func() {
		if _, err := IDOfValue(&testPoint{}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("IDOfValue allocates %v times per call", allocs)
	}
}

func TestConcurrentRegisterAndIDOf(t *testing.T) {
	const writers, perWriter = 8, 50
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if id, err := IDOf[testPoint](); err != nil || id != testPointID {
					t.Errorf("IDOf = %v, %v", id, err)
					return
				}
				Registered()
				Lookup(testPingID)
			}
		})
	}
	var writersWG sync.WaitGroup
	ids := make([][]TypeID, writers)
	for w := range writers {
		writersWG.Go(func() {
			for i := range perWriter {
				// Distinct array types give each registration its own type.
				typ := reflect.ArrayOf(w*perWriter+i+1, reflect.TypeFor[uint8]())
				name := fmt.Sprintf("ringactor.messages.test.concurrent.%d", w*perWriter+i)
				id, err := register(typ, name)
				if err != nil {
					t.Error(err)
					return
				}
				// Every goroutine also re-registers one shared pair.
				shared, err := Register[testPointList]("ringactor.messages.test.PointList")
				if err != nil || shared != testPointListID {
					t.Errorf("shared Register = %v, %v", shared, err)
				}
				ids[w] = append(ids[w], id)
			}
		})
	}
	writersWG.Wait()
	close(stop)
	wg.Wait()
	for w := range writers {
		for i, id := range ids[w] {
			info, ok := Lookup(id)
			if !ok || info.Type != reflect.ArrayOf(w*perWriter+i+1, reflect.TypeFor[uint8]()) {
				t.Fatalf("Lookup(%v) = %+v, %v", id, info, ok)
			}
		}
	}
}
