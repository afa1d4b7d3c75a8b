//go:build linux && cgo

package cuda

import (
	"context"
	"reflect"
	"testing"

	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/internal/testutil/ringtest"
)

// builtinProgram loads the device ring program of one of gpu/ringmsg's
// built-in handlers (as actors.NewDeviceKernel builds it) on b, once per
// backend.
func builtinProgram[Req, Resp any](t testing.TB, b *Backend, op ringmsg.Op) *RingProgram {
	t.Helper()
	return ringtest.Builtin(t, b, op, reflect.TypeFor[Req](), reflect.TypeFor[Resp](), func(s ringtest.Spec) (*RingProgram, error) {
		src, err := NewRingProgramSource(RingProgramSpec(s))
		if err != nil {
			return nil, err
		}
		return b.LoadRingProgram(context.Background(), src)
	})
}

// sumProgram is the built-in sum handler's program (ringmsg.Sum).
func sumProgram(t testing.TB, b *Backend) *RingProgram {
	t.Helper()
	return builtinProgram[ringmsg.ReduceMsg, ringmsg.ScalarReply](t, b, ringmsg.Sum)
}

// launchRing launches a ring of the built-in sum handler on b, closed when
// the test ends.
func launchRing(t *testing.T, b *Backend) *RingKernel {
	t.Helper()
	k, err := b.LaunchRingProgram(sumProgram(t, b), RingConfig{Capacity: 16, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	ringtest.CloseAtEnd(t, k)
	return k
}
