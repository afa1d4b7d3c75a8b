package actors_test

import (
	"context"
	"fmt"
	"log"
	"sync"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/messages"
)

// Celsius and Fahrenheit are the chain example's messages.
type Celsius struct{ C float64 }

// Fahrenheit is a converted reading.
type Fahrenheit struct{ F float64 }

func init() {
	messages.MustRegister[Celsius]("example.chain.celsius")
	messages.MustRegister[Fahrenheit]("example.chain.fahrenheit")
}

// A chain of two kernels: "calibrate" routes its replies into "convert",
// and requests to the head are answered by the tail — pipelined with
// actors.RequestAsync, in order.
func ExampleRequestAsync() {
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
	convert := actors.NewStatelessKernel("convert", func(_ context.Context, c Celsius) (Fahrenheit, error) {
		return Fahrenheit{F: c.C*9/5 + 32}, nil
	})
	calibrate := actors.NewStatelessKernel("calibrate", func(_ context.Context, c Celsius) (Celsius, error) {
		return Celsius{C: c.C + 0.5}, nil
	}, actors.WithDownstream("convert"))
	if _, err := actors.Launch(ctx, rt, convert, actors.Activated()); err != nil {
		log.Fatal(err)
	}
	if _, err := actors.Launch(ctx, rt, calibrate, actors.Activated()); err != nil {
		log.Fatal(err)
	}

	var wg sync.WaitGroup
	out := make([]float64, 3)
	for i, c := range []float64{-0.5, 19.5, 99.5} {
		wg.Add(1)
		err := actors.RequestAsync[Fahrenheit](ctx, rt, "calibrate", Celsius{C: c}, func(f Fahrenheit, err error) {
			defer wg.Done()
			if err != nil {
				log.Print(err)
				return
			}
			out[i] = f.F
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	wg.Wait()
	fmt.Println(out)
	// Output: [32 68 212]
}
