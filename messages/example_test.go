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

// A caller that keeps its buffers encodes a payload into one with
// AppendPayload and decodes into a value it holds with UnmarshalInto: neither
// allocates for the message itself.
func ExampleUnmarshalInto() {
	buf := make([]byte, 0, 64)
	buf, err := messages.AppendPayload(buf, Ping{Seq: 8, Note: "typed"})
	if err != nil {
		panic(err)
	}
	var p Ping
	if err := messages.UnmarshalInto(buf, &p); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", p)

	var q Pong
	err = messages.UnmarshalInto([]byte{0xc1}, &q)
	var de *messages.DecodeError
	fmt.Println(errors.As(err, &de), errors.Is(err, messages.ErrDecode))

	// Output:
	// {Seq:8 Note:typed}
	// true true
}
