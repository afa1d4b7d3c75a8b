// Package demo declares the demo cluster kinds that every `ringactor serve`
// member hosts: echo (replies with the JSON object it is sent) and add
// ({"a":[…],"b":[…]} → {"sum":[…]}). The CLI and the multi-process cluster
// tests use them; library packages register nothing at init.
package demo

import (
	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/demo/demomsg"
	"github.com/ringactor/ringactor/messages"
)

// Register registers the demo kinds' message types and their JSON forms
// (cluster.RegisterJSON, for `ringactor call`). It may be called any number
// of times.
func Register() {
	messages.MustRegister[demomsg.Object](demomsg.ObjectName)
	messages.MustRegister[demomsg.AddRequest](demomsg.AddRequestName)
	messages.MustRegister[demomsg.AddReply](demomsg.AddReplyName)
	cluster.RegisterJSON[demomsg.Object, demomsg.Object]("echo")
	cluster.RegisterJSON[demomsg.AddRequest, demomsg.AddReply]("add")
}

// Kinds registers the demo kinds (Register) and returns fresh declarations
// of them.
func Kinds() []*cluster.Kind {
	Register()
	return []*cluster.Kind{
		cluster.NewKind("echo", func() actors.Handler[demomsg.Object, demomsg.Object] { return demomsg.Echo }),
		cluster.NewKind("add", func() actors.Handler[demomsg.AddRequest, demomsg.AddReply] { return demomsg.Add }),
	}
}
