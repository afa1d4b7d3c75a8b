package messages_test

import (
	"errors"
	"fmt"

	"github.com/ringactor/ringactor/messages"
)

// Ping is an example message type.
type Ping struct {
	Seq  uint64
	Note string
}

// Pong is another example message type.
type Pong struct{ Seq uint64 }

// Register message types once, in package-level variables.
var (
	pingID = messages.MustRegister[Ping]("example.Ping")
	_      = messages.MustRegister[Pong]("example.Pong")
)

func Example() {
	id, data, err := messages.Marshal(Ping{Seq: 7, Note: "héllo"})
	if err != nil {
		panic(err)
	}
	fmt.Println(id == pingID, id)

	v, err := messages.Unmarshal(id, data)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%T %+v\n", v, v)

	// Output:
	// true 0xc99c1501
	// messages_test.Ping {Seq:7 Note:héllo}
}

// A typed caller converts a message to and from the wire envelope of cluster
// traffic without boxing it; a payload of another type is a
// *TypeMismatchError.
func ExampleToWireOf() {
	w, err := messages.ToWireOf(Ping{Seq: 8, Note: "typed"}, messages.Header{ID: messages.NextID()}, 0)
	if err != nil {
		panic(err)
	}
	_, p, err := messages.FromWireAs[Ping](w, 0)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", p)

	_, _, err = messages.FromWireAs[Pong](w, 0)
	var mismatch *messages.TypeMismatchError
	fmt.Println(errors.As(err, &mismatch), errors.Is(err, messages.ErrDecode))

	// Output:
	// {Seq:8 Note:typed}
	// true true
}
