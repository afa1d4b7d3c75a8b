// Package ringtest holds the helpers of the tests that drive a device ring
// kernel of gpu/ringmsg's built-in sum handler, shared by the tests of
// gpu/cuda (the backend) and gpu/cuda/internal/ringrt (the ring runtime). It
// imports neither, so that ringrt's own tests may use it.
package ringtest

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/hostsim"
	"github.com/ringactor/ringactor/gpu/ring"
	"github.com/ringactor/ringactor/gpu/ringmsg"
	"github.com/ringactor/ringactor/internal/testutil/hangguard"
)

// Ring is the host side of a ring kernel as these helpers drive it
// (gpu/cuda's RingKernel, ringrt's Kernel).
type Ring interface {
	TrySubmit(typeID uint32, correlationID uint64, payload []byte) (bool, error)
	TryPoll() (h ring.SlotHeader, payload []byte, ok bool)
	Control() *ring.ControlBlock
}

// SumMsg encodes a MsgSum request of one value: its reply's value is v.
func SumMsg(v float32) []byte {
	var m ringmsg.ReduceMsg
	m.N = 1
	m.X[0] = v
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&m)), unsafe.Sizeof(m))...)
}

// Exchange sends n messages through k from one goroutine while this one
// collects the replies, and fails unless every reply comes back once, in
// order, with its value. Test goroutine only (see ExchangeErr).
func Exchange(t testing.TB, k Ring, n int, base float32) {
	t.Helper()
	if err := ExchangeErr(k, n, base); err != nil {
		t.Fatal(err)
	}
}

// exchangeHang bounds an exchange: a hang guard, not a speed limit.
const exchangeHang = 2 * time.Minute

// ExchangeErr is Exchange returning its failure, for any goroutine.
func ExchangeErr(k Ring, n int, base float32) error {
	errc := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := range n {
			msg := SumMsg(base + float32(i))
			for {
				ok, err := k.TrySubmit(ringmsg.Sum.TypeID(), uint64(i), msg)
				if err != nil {
					errc <- err
					return
				}
				if ok {
					break
				}
				select {
				case <-stop:
					errc <- nil
					return
				default:
				}
				runtime.Gosched()
			}
		}
		errc <- nil
	}()
	deadline := time.Now().Add(exchangeHang)
	for i := 0; i < n; {
		h, p, ok := k.TryPoll()
		if !ok {
			if time.Now().After(deadline) {
				return fmt.Errorf("reply %d of %d not received within %v (processed %d)", i, n, exchangeHang, k.Control().Processed.Load())
			}
			runtime.Gosched()
			continue
		}
		r, err := hostsim.Decode[ringmsg.ScalarReply](p)
		if err != nil || h.CorrelationID != uint64(i) || h.Status != ring.StatusOK || r.Value != float64(base+float32(i)) {
			return fmt.Errorf("reply %d: corr %d status %d value %v (%v)", i, h.CorrelationID, h.Status, r.Value, err)
		}
		i++
	}
	return <-errc
}

// PollReply waits for k's next reply (until the test's hang guard).
func PollReply(t testing.TB, k Ring) (ring.SlotHeader, []byte) {
	t.Helper()
	ctx := hangguard.Context(t) // a hang guard, not a bound on speed
	for ctx.Err() == nil {
		if h, p, ok := k.TryPoll(); ok {
			return h, p
		}
		runtime.Gosched()
	}
	t.Fatal("no reply: hung")
	return ring.SlotHeader{}, nil
}

// Spec has the fields of a device ring program spec (gpu/cuda/internal/ringrt's
// ProgramSpec, in the same order, so that one converts to the other).
type Spec struct {
	Name      string
	Code      string
	Handler   string
	Req, Resp reflect.Type
	State     reflect.Type
	Types     []reflect.Type
}

// builtinKey names a built-in program loaded by one loader.
type builtinKey struct {
	loader any
	op     ringmsg.Op
}

// builtins keeps each loader's built-in programs, so a test that launches
// a second ring loads nothing beside the first (a module load beside live
// rings runs in a device epoch).
var builtins sync.Map // builtinKey -> the loaded program

// Builtin returns the device ring program of gpu/ringmsg's built-in
// handler op with request req and reply resp (as actors.NewDeviceKernel
// builds it), loaded by load once per loader (a backend or a runtime).
func Builtin[P any](t testing.TB, loader any, op ringmsg.Op, req, resp reflect.Type, load func(Spec) (P, error)) P {
	t.Helper()
	key := builtinKey{loader, op}
	if p, ok := builtins.Load(key); ok {
		return p.(P)
	}
	spec := Spec{Name: "ringmsg-" + op.String(), Code: ringmsg.DeviceCode, Handler: op.DeviceEntry(), Req: req, Resp: resp}
	for _, v := range ringmsg.DeviceTypes {
		spec.Types = append(spec.Types, reflect.TypeOf(v))
	}
	p, err := load(spec)
	if err != nil {
		t.Fatal(err)
	}
	builtins.Store(key, p)
	return p
}

// CloseAtEnd closes k (TerminateNow and Wait) when the test ends.
func CloseAtEnd(t testing.TB, k interface{ Close(context.Context) error }) {
	ctx := hangguard.Context(t) // its own cleanup, registered first, runs after this one
	t.Cleanup(func() {
		if err := k.Close(ctx); err != nil {
			t.Errorf("closing ring: %v", err)
		}
	})
}
