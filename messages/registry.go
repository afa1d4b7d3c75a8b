package messages

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
)

// TypeID is the stable 32-bit id of a registered message type: the FNV-1a
// 32-bit hash of the name it was registered under. Id 0 is reserved and
// never names a type.
type TypeID uint32

// String formats the id as 0x followed by 8 hexadecimal digits.
func (id TypeID) String() string { return fmt.Sprintf("0x%08x", uint32(id)) }

// Info describes one registered message type.
type Info struct {
	// ID is the type id, derived from Name.
	ID TypeID
	// Name is the name the type was registered under.
	Name string
	// Type is the registered Go type.
	Type reflect.Type
}

// registryState is an immutable snapshot of the registry. Readers load it
// without locking; Register replaces it (copy on write) under regMu.
type registryState struct {
	byType map[reflect.Type]Info
	byID   map[TypeID]Info
	byName map[string]Info
}

var (
	regMu sync.Mutex // serialises writers of registry
	// registry is set up by a variable initializer, not init, so that
	// package-level MustRegister calls in this package see it too.
	registry = newRegistry()
)

func newRegistry() *atomic.Pointer[registryState] {
	p := new(atomic.Pointer[registryState])
	p.Store(&registryState{
		byType: map[reflect.Type]Info{},
		byID:   map[TypeID]Info{},
		byName: map[string]Info{},
	})
	return p
}

// typeIDOf hashes name into its type id.
func typeIDOf(name string) TypeID {
	h := fnv.New32a()
	h.Write([]byte(name))
	return TypeID(h.Sum32())
}

// Register gives T a stable type id derived from name. Registering the same
// (T, name) pair again is idempotent and returns the same id.
//
// It fails if name is empty or hashes to the reserved id 0, if T is an
// interface, func, chan or unsafe pointer type ([*InvalidTypeError]), and if
// name is taken by another type, T is registered under another name, or
// name collides with another name's id ([*DuplicateTypeError]).
func Register[T any](name string) (TypeID, error) {
	return register(reflect.TypeFor[T](), name)
}

// MustRegister is like [Register] but panics on error. It is meant for
// package-level variables.
func MustRegister[T any](name string) TypeID {
	id, err := Register[T](name)
	if err != nil {
		panic(err)
	}
	return id
}

func register(t reflect.Type, name string) (TypeID, error) {
	switch t.Kind() {
	case reflect.Interface:
		return 0, &InvalidTypeError{Type: t, Reason: "interface types have no concrete wire form"}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return 0, &InvalidTypeError{Type: t, Reason: t.Kind().String() + " values cannot be serialised"}
	}
	if name == "" {
		return 0, &InvalidTypeError{Type: t, Reason: "empty name"}
	}
	id := typeIDOf(name)
	if id == 0 {
		return 0, &InvalidTypeError{Type: t, Reason: fmt.Sprintf("name %q hashes to the reserved type id 0; choose another name", name)}
	}

	regMu.Lock()
	defer regMu.Unlock()
	old := registry.Load()
	if info, ok := old.byType[t]; ok {
		if info.Name == name {
			return info.ID, nil
		}
		return 0, &DuplicateTypeError{Name: name, ExistingName: info.Name, Existing: t, New: t}
	}
	if info, ok := old.byName[name]; ok {
		return 0, &DuplicateTypeError{Name: name, ExistingName: info.Name, Existing: info.Type, New: t}
	}
	if info, ok := old.byID[id]; ok {
		return 0, &DuplicateTypeError{Name: name, ExistingName: info.Name, Existing: info.Type, New: t, Collision: true}
	}

	info := Info{ID: id, Name: name, Type: t}
	next := &registryState{
		byType: make(map[reflect.Type]Info, len(old.byType)+1),
		byID:   make(map[TypeID]Info, len(old.byID)+1),
		byName: make(map[string]Info, len(old.byName)+1),
	}
	maps.Copy(next.byType, old.byType)
	maps.Copy(next.byID, old.byID)
	maps.Copy(next.byName, old.byName)
	next.byType[t] = info
	next.byID[id] = info
	next.byName[name] = info
	registry.Store(next)
	return id, nil
}

// IDOf returns the type id of T, or an [*UnregisteredTypeError] if T is not
// registered. It does not lock or allocate when T is registered.
func IDOf[T any]() (TypeID, error) {
	return idOfType(reflect.TypeFor[T]())
}

// IDOfValue returns the type id of the dynamic type of v. It returns
// [ErrNilMessage] for a nil v and an [*UnregisteredTypeError] if the type is
// not registered.
func IDOfValue(v any) (TypeID, error) {
	if v == nil {
		return 0, ErrNilMessage
	}
	return idOfType(reflect.TypeOf(v))
}

func idOfType(t reflect.Type) (TypeID, error) {
	if info, ok := registry.Load().byType[t]; ok {
		return info.ID, nil
	}
	return 0, &UnregisteredTypeError{Type: t}
}

// Lookup returns the type registered under id.
func Lookup(id TypeID) (Info, bool) {
	info, ok := registry.Load().byID[id]
	return info, ok
}

// LookupName returns the type registered under name.
func LookupName(name string) (Info, bool) {
	info, ok := registry.Load().byName[name]
	return info, ok
}

// Registered returns every registered type, sorted by name.
func Registered() []Info {
	st := registry.Load()
	out := make([]Info, 0, len(st.byName))
	for _, info := range st.byName {
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b Info) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
