//go:build linux && cgo

package cuda_test

import (
	"context"
	"fmt"
	"log"
	"reflect"

	"github.com/ringactor/ringactor/gpu/cuda"
	"github.com/ringactor/ringactor/gpu/cuda/simdevice"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// A persistent ring kernel never returns, so the backend makes no driver
// call that would wait for it; the few that must (loading a module while
// rings run, growing the pinned arena) run in a device epoch, which parks
// the rings and relaunches them on their memory. DeviceEpoch runs an empty
// one, to measure what that costs; EpochStats counts them all. The
// simulated device here checks every driver call against the hazard model
// in strict mode.
func ExampleBackend_DeviceEpoch() {
	b := simdevice.NewBackend(64<<20, cuda.WithArenaBytes(8<<20))
	defer func() {
		if err := b.Close(); err != nil {
			log.Fatal(err)
		}
	}()
	ctx := context.Background()
	// The built-in sum handler of gpu/ringmsg as a device ring program.
	spec := cuda.RingProgramSpec{Name: "sum", Code: ringmsg.DeviceCode, Handler: ringmsg.Sum.DeviceEntry(),
		Req: reflect.TypeFor[ringmsg.ReduceMsg](), Resp: reflect.TypeFor[ringmsg.ScalarReply]()}
	for _, v := range ringmsg.DeviceTypes { // the other structs DeviceCode uses
		spec.Types = append(spec.Types, reflect.TypeOf(v))
	}
	src, err := cuda.NewRingProgramSource(spec)
	if err != nil {
		log.Fatal(err)
	}
	p, err := b.LoadRingProgram(ctx, src)
	if err != nil {
		log.Fatal(err)
	}
	k, err := b.LaunchRingProgram(p, cuda.RingConfig{Capacity: 16, Threads: 2})
	if err != nil {
		log.Fatal(err)
	}
	k.Activate()
	if _, err := b.DeviceEpoch(ctx); err != nil {
		log.Fatal(err)
	}
	st := b.EpochStats()
	fmt.Println("epochs:", st.Count, "rings parked:", st.RingsParked)
	fmt.Println("hazards:", len(simdevice.Hazards(b).Raised()))
	if err := k.Close(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// epochs: 1 rings parked: 1
	// hazards: 0
}
