//go:build !race

package cluster_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/messages"
)

// Greet and Greeting are the messages of the example's typed kind.
type Greet struct{ Name string }
type Greeting struct{ Text string }

// A typed kind, hosted by a member on loopback and reached from a client:
// the reference only takes a Greet and only returns a Greeting.
func ExampleDefine() {
	messages.MustRegister[Greet]("example.Greet")
	messages.MustRegister[Greeting]("example.Greeting")
	greeter := cluster.Define("greeter", func() actors.Handler[Greet, Greeting] {
		return func(_ context.Context, g Greet) (Greeting, error) {
			return Greeting{Text: "hello, " + strings.ToUpper(g.Name)}, nil
		}
	})
	ctx := context.Background()
	member, err := cluster.Start(ctx, "example-typed", cluster.Peers(nil), []*cluster.Kind{greeter.Kind()}, cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := member.Close(ctx); err != nil {
			log.Fatal(err)
		}
	}()
	// The client joins through the member and hosts nothing.
	client, err := cluster.Start(ctx, "example-typed", cluster.Peers([]string{member.Address()}), nil,
		cluster.AsClient(), cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := client.Close(ctx); err != nil {
			log.Fatal(err)
		}
	}()

	ref := greeter.Ref(client, "desk-1")
	r, err := ref.Request(ctx, Greet{Name: "ada"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Text)
	if err := ref.Send(ctx, Greet{Name: "grace"}); err != nil { // one-way
		log.Fatal(err)
	}
	// Output:
	// hello, ADA
}
