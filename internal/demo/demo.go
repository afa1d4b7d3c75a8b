// Package demo declares the demo cluster kinds that every `ringactor serve`
// member hosts: echo (replies with the JSON object it is sent), add
// ({"a":[…],"b":[…]} → {"sum":[…]}) and counter ({} or {"by":n} →
// {"count":…,"activation":…}, the identity's count after the request; a
// stateful kind whose count moves with the identity) and devscale (a
// device ring kernel placed only on members with a device: {} or {"by":n}
// → {"calls":…,"placement":"HOST:PORT/cuda:sim1"}). The CLI and the
// multi-process cluster tests use them; library packages register nothing
// at init.
package demo

import (
	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/demo/demomsg"
	"github.com/ringactor/ringactor/messages"
)

// Register registers the demo kinds' message types and their JSON forms
// (cluster.RegisterJSON, for `ringactor call`), and those of `ringactor
// demo`'s kernels. It may be called any number of times.
func Register() {
	messages.MustRegister[demomsg.Object](demomsg.ObjectName)
	messages.MustRegister[demomsg.AddRequest](demomsg.AddRequestName)
	messages.MustRegister[demomsg.AddReply](demomsg.AddReplyName)
	cluster.RegisterJSON[demomsg.Object, demomsg.Object]("echo")
	cluster.RegisterJSON[demomsg.AddRequest, demomsg.AddReply]("add")
	messages.MustRegister[demomsg.CounterRequest](demomsg.CounterRequestName)
	messages.MustRegister[demomsg.CounterReply](demomsg.CounterReplyName)
	cluster.RegisterJSON[demomsg.CounterRequest, demomsg.CounterReply]("counter")
	messages.MustRegister[demomsg.Value](demomsg.ValueName)
	messages.MustRegister[demomsg.Sum](demomsg.SumName)
	messages.MustRegister[demomsg.Vector](demomsg.VectorName)
	messages.MustRegister[demomsg.Scalar](demomsg.ScalarName)
	messages.MustRegister[demomsg.DevscaleRequest](demomsg.DevscaleRequestName)
	messages.MustRegister[demomsg.DevscaleReply](demomsg.DevscaleReplyName)
	cluster.RegisterJSON[demomsg.DevscaleRequest, demomsg.DevscaleReply]("devscale")
}

// Kinds registers the demo kinds (Register) and returns fresh declarations
// of them. member names the member in the counter's replies (its address);
// it is called at each activation.
func Kinds(member func() string) []*cluster.Kind {
	Register()
	devscale, err := cluster.NewDeviceKind("devscale", actors.DeviceSource{Code: demomsg.DevscaleCUDA, Entry: demomsg.DevscaleEntry, State: demomsg.DevscaleState{}},
		func() actors.Handler[demomsg.DevscaleRequest, demomsg.DevscaleReply] {
			return demomsg.NewDevscaleFallback()
		})
	if err != nil {
		panic(err) // a fixed declaration: a test fails on it
	}
	return []*cluster.Kind{
		devscale.Require(cluster.DeviceOnly),
		cluster.NewKind("echo", func() actors.Handler[demomsg.Object, demomsg.Object] { return demomsg.Echo }),
		cluster.NewKind("add", func() actors.Handler[demomsg.AddRequest, demomsg.AddReply] { return demomsg.Add }),
		cluster.NewStatefulKind("counter", func(_ string, state []byte) (cluster.Stateful[demomsg.CounterRequest, demomsg.CounterReply], error) {
			return demomsg.NewCounter(member(), state)
		}),
	}
}
