//go:build linux && cgo

package ringrt

import (
	"context"
	"reflect"
	"testing"

	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
)

// builtinProgram loads the device ring program of one of gpu/ringmsg's
// built-in handlers (as actors.NewDeviceKernel builds it) on b, once per
// runtime.
func builtinProgram[Req, Resp any](t testing.TB, b *Runtime, op ringmsg.Op) *Program {
	t.Helper()
	return ringtest.Builtin(t, b, op, reflect.TypeFor[Req](), reflect.TypeFor[Resp](), func(s ringtest.Spec) (*Program, error) {
		src, err := NewProgramSource(ProgramSpec(s))
		if err != nil {
			return nil, err
		}
		return b.Load(context.Background(), src)
	})
}

// sumProgram is the built-in sum handler's program (ringmsg.Sum).
func sumProgram(t testing.TB, b *Runtime) *Program {
	t.Helper()
	return builtinProgram[ringmsg.ReduceMsg, ringmsg.ScalarReply](t, b, ringmsg.Sum)
}

// launchRing launches a ring of the built-in sum handler on b, closed when
// the test ends.
func launchRing(t *testing.T, b *Runtime) *Kernel {
	t.Helper()
	k, err := b.Launch(sumProgram(t, b), Config{Capacity: 16, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	ringtest.CloseAtEnd(t, k)
	return k
}
