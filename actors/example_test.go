package actors_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/messages"
)

// VectorAddRequest and VectorAddResponse are the quick start's messages.
type VectorAddRequest struct{ A, B []float32 }

// VectorAddResponse carries the element-wise sum.
type VectorAddResponse struct{ Sum []float32 }

func init() {
	messages.MustRegister[VectorAddRequest]("example.vector_add.request")
	messages.MustRegister[VectorAddResponse]("example.vector_add.response")
}

// The quick start: declare a ring kernel with a typed handler, launch and
// activate it, send it messages and get replies, then shut it down.
func Example() {
	ctx := context.Background()
	rt, err := actors.NewRuntime()
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		if err := rt.Close(ctx); err != nil {
			log.Fatal(err)
		}
	}()

	vectorAdd := actors.NewStatelessKernel("vector_add",
		func(ctx context.Context, r VectorAddRequest) (VectorAddResponse, error) {
			if len(r.A) != len(r.B) {
				return VectorAddResponse{}, fmt.Errorf("lengths %d and %d differ", len(r.A), len(r.B))
			}
			sum := make([]float32, len(r.A))
			for i := range r.A {
				sum[i] = r.A[i] + r.B[i]
			}
			return VectorAddResponse{Sum: sum}, nil
		})
	k, err := actors.Launch(ctx, rt, vectorAdd)
	if err != nil {
		log.Fatal(err)
	}
	if err := k.Activate(ctx); err != nil {
		log.Fatal(err)
	}

	// Fire and forget, then read the receive stream.
	if _, err := k.Send(ctx, VectorAddRequest{A: []float32{1, 2, 3}, B: []float32{4, 5, 6}}); err != nil {
		log.Fatal(err)
	}
	resp, err := k.Receive(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Sum)

	// Request and wait for the typed reply, by id through the runtime.
	resp, err = actors.Request[VectorAddResponse](ctx, rt, "vector_add", VectorAddRequest{A: []float32{1}, B: []float32{1}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Sum)

	// A failing handler answers with an ExecutionError; the kernel keeps going.
	_, err = k.Request(ctx, VectorAddRequest{A: []float32{1}})
	if ee, ok := errors.AsType[*gpu.ExecutionError](err); ok {
		fmt.Println(ee.Kernel, ee.Err)
	} else {
		log.Fatalf("want an ExecutionError, got %v", err)
	}

	for _, step := range []func(context.Context, string) error{rt.Deactivate, rt.Reactivate, rt.Terminate} {
		if err := step(ctx, "vector_add"); err != nil {
			log.Fatal(err)
		}
	}
	st, err := rt.Status("vector_add")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.State, st.Processed, st.Errors)
	// Output:
	// [5 7 9]
	// [2]
	// vector_add lengths 1 and 0 differ
	// terminated 3 1
}
