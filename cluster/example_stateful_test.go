//go:build !race

package cluster_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/messages"
)

// Visit and Visits are the messages of the example's stateful kind.
type Visit struct{}
type Visits struct{ N int64 }

// visits is one activation of an identity: its count moves with the
// identity (Passivate's bytes reach the identity's next activation).
type visits struct{ n int64 }

func (v *visits) Handle(context.Context, Visit) (Visits, error) { v.n++; return Visits{v.n}, nil }
func (v *visits) Passivate() ([]byte, error)                    { return binary.AppendVarint(nil, v.n), nil }

// A stateful kind: each identity counts its visits, and the count survives
// the identity's passivation and moves between members.
func ExampleNewStatefulKind() {
	messages.MustRegister[Visit]("example.Visit")
	messages.MustRegister[Visits]("example.Visits")
	kind := cluster.NewStatefulKind("visits", func(identity string, state []byte) (cluster.Stateful[Visit, Visits], error) {
		v := &visits{}
		if state != nil { // handed over by the identity's previous activation
			n, read := binary.Varint(state)
			if read <= 0 {
				return nil, fmt.Errorf("visits %s: bad handed-over state %x", identity, state)
			}
			v.n = n
		}
		return v, nil
	})
	ctx := context.Background()
	m, err := cluster.Start(ctx, "example", cluster.Peers(nil), []*cluster.Kind{kind}, cluster.WithLogger(actors.DiscardLogger()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := m.Close(ctx); err != nil {
			log.Fatal(err)
		}
	}()
	for range 3 {
		r, err := cluster.Request[Visits](ctx, m, "visits", "home", Visit{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.N)
	}
	// Output:
	// 1
	// 2
	// 3
}
