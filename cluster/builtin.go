package cluster

import (
	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/internal/demo/demomsg"
	"github.com/ringactor/ringactor/messages"
)

// Object is a JSON object as a message: the request and reply of the echo
// demo kind.
//
// Deprecated: the demo kinds belong to the ringactor CLI; package cluster
// no longer registers them at init. Kept until a tagged release.
type Object = demomsg.Object

// AddRequest is the request of the add demo kind.
//
// Deprecated: see Object.
type AddRequest = demomsg.AddRequest

// AddReply is the reply of the add demo kind.
//
// Deprecated: see Object.
type AddReply = demomsg.AddReply

// BuiltinKinds returns fresh declarations of the demo kinds every `ringactor
// serve` member hosts (echo and add), registering their message types and
// JSON forms first.
//
// Deprecated: the demo kinds belong to the ringactor CLI; package cluster
// registers nothing at init any more. Declare your own kinds with NewKind.
// Kept until a tagged release.
func BuiltinKinds() []*Kind {
	messages.MustRegister[demomsg.Object](demomsg.ObjectName)
	messages.MustRegister[demomsg.AddRequest](demomsg.AddRequestName)
	messages.MustRegister[demomsg.AddReply](demomsg.AddReplyName)
	RegisterJSON[demomsg.Object, demomsg.Object]("echo")
	RegisterJSON[demomsg.AddRequest, demomsg.AddReply]("add")
	return []*Kind{
		NewKind("echo", func() actors.Handler[demomsg.Object, demomsg.Object] { return demomsg.Echo }),
		NewKind("add", func() actors.Handler[demomsg.AddRequest, demomsg.AddReply] { return demomsg.Add }),
	}
}
