//go:build linux && cgo

package ringrt

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/ringactor/ringactor/gpu/ringmsg"
)

type builtinKey struct {
	b  *Runtime
	op ringmsg.Op
}

// builtinPrograms keeps each backend's loaded built-in programs, so a test
// that launches a second ring loads nothing beside the first (a module
// load beside live rings runs in a device epoch).
var builtinPrograms sync.Map // builtinKey -> *Program

// builtinProgram loads the device ring program of one of gpu/ringmsg's
// built-in handlers (as actors.NewDeviceKernel builds it) on b.
func builtinProgram[Req, Resp any](t testing.TB, b *Runtime, op ringmsg.Op) *Program {
	t.Helper()
	if p, ok := builtinPrograms.Load(builtinKey{b, op}); ok {
		return p.(*Program)
	}
	spec := ProgramSpec{Name: "ringmsg-" + op.String(), Code: ringmsg.DeviceCode, Handler: op.DeviceEntry(),
		Req: reflect.TypeFor[Req](), Resp: reflect.TypeFor[Resp]()}
	for _, v := range ringmsg.DeviceTypes {
		spec.Types = append(spec.Types, reflect.TypeOf(v))
	}
	src, err := NewProgramSource(spec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Load(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	builtinPrograms.Store(builtinKey{b, op}, p)
	return p
}

// sumProgram is the built-in sum handler's program (ringmsg.Sum).
func sumProgram(t testing.TB, b *Runtime) *Program {
	t.Helper()
	return builtinProgram[ringmsg.ReduceMsg, ringmsg.ScalarReply](t, b, ringmsg.Sum)
}
