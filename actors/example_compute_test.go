package actors_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
)

// Execute runs a named compute kernel on buffers; the orchestrator picks the
// backend (the CPU for small work), checks dtypes and shapes, recovers from
// device failures and profiles the call.
func ExampleRuntime_Execute() {
	ctx := context.Background()
	rt, err := actors.NewRuntime(actors.WithTelemetry(false))
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)

	a, _ := gpu.NewBuffer([]float32{1, 2, 3, 4}, 2, 2)
	b, _ := gpu.NewBuffer([]float32{1, 0, 0, 1}, 2, 2)
	var p actors.ExecProfile
	out, err := rt.Execute(ctx, "matmul", []*gpu.UnifiedBuffer{a, b}, gpu.Shape{2, 2}, actors.Profiled(&p))
	if err != nil {
		log.Fatal(err)
	}
	defer out.Free() // back to the pool
	v, _ := gpu.ToSlice[float32](ctx, out)
	fmt.Println(v, p.Backend)

	sum, _ := actors.Reduce[float32](ctx, rt, "sum", a)
	fmt.Println(sum)

	// A pipeline keeps intermediates where they were computed.
	y, _ := rt.NewPipeline().Then("scale", nil, actors.WithScalars(-2)).Then("relu", nil).Run(ctx, a)
	v, _ = gpu.ToSlice[float32](ctx, y)
	fmt.Println(v)

	_, err = rt.Execute(ctx, "add", []*gpu.UnifiedBuffer{a}, nil)
	fmt.Println(err)
	// Output:
	// [1 2 3 4] cpu
	// 10
	// [0 0 0 0]
	// kernel "add": inputs: takes 2 inputs, got 1
}
