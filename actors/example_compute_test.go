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
	defer func() {
		if err := rt.Close(ctx); err != nil {
			log.Fatal(err)
		}
	}()

	a, err := gpu.NewBuffer([]float32{1, 2, 3, 4}, 2, 2)
	if err != nil {
		log.Fatal(err)
	}
	b, err := gpu.NewBuffer([]float32{1, 0, 0, 1}, 2, 2)
	if err != nil {
		log.Fatal(err)
	}
	var p actors.ExecProfile
	out, err := rt.Execute(ctx, "matmul", []*gpu.UnifiedBuffer{a, b}, gpu.Shape{2, 2}, actors.Profiled(&p))
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := out.Free(); err != nil { // back to the pool
			log.Fatal(err)
		}
	}()
	v, err := gpu.ToSlice[float32](ctx, out)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v, p.Backend)

	sum, err := actors.Reduce[float32](ctx, rt, "sum", a)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sum)

	// A pipeline keeps intermediates where they were computed.
	y, err := rt.NewPipeline().Then("scale", nil, actors.WithScalars(-2)).Then("relu", nil).Run(ctx, a)
	if err != nil {
		log.Fatal(err)
	}
	if v, err = gpu.ToSlice[float32](ctx, y); err != nil {
		log.Fatal(err)
	}
	fmt.Println(v)

	// A bad call is an error (a *gpu.ArgumentError here), not a panic.
	if _, err = rt.Execute(ctx, "add", []*gpu.UnifiedBuffer{a}, nil); err != nil {
		fmt.Println(err)
	}
	// Output:
	// [1 2 3 4] cpu
	// 10
	// [0 0 0 0]
	// kernel "add": inputs: takes 2 inputs, got 1
}
