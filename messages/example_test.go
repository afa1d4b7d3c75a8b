package messages_test

import (
	"fmt"

	"github.com/ringactor/ringactor/messages"
)

// Ping is an example message type.
type Ping struct {
	Seq  uint64
	Note string
}

// Register message types once, in package-level variables.
var pingID = messages.MustRegister[Ping]("example.Ping")

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
