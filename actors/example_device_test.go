package actors_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu/ringmsg"
)

// A device ring kernel: the built-in "add" handler as a persistent CUDA
// kernel where a usable GPU allows it, on the CPU otherwise — the same
// code either way. Placement says where it runs ("cpu" on this machine).
func ExampleNewDeviceKernel() {
	ctx := context.Background()
	rt, err := actors.NewRuntime(actors.WithLogger(actors.DiscardLogger()))
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := rt.Close(ctx); err != nil {
			log.Fatal(err)
		}
	}()

	def, err := actors.NewDeviceKernel[ringmsg.VecMsg, ringmsg.VecReply]("device_add", ringmsg.Add)
	if err != nil {
		log.Fatal(err)
	}
	k, err := actors.Launch(ctx, rt, def)
	if err != nil {
		log.Fatal(err)
	}
	if err := k.Activate(ctx); err != nil {
		log.Fatal(err)
	}
	msg := ringmsg.VecMsg{N: 3}
	copy(msg.A[:], []float32{1, 2, 3})
	copy(msg.B[:], []float32{10, 20, 30})
	r, err := k.Request(ctx, msg)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Y[:r.N])
	// Output: [11 22 33]
}
