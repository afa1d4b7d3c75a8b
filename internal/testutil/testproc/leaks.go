package testproc

import "go.uber.org/goleak"

// ProtoActorThrottles returns goleak options that ignore the goroutines of
// Proto.Actor's log throttles (dead letters, the gossip actor, the
// gossiper): they run on tickers that are never stopped, or end by
// themselves an interval after their last event, so a test that shut its
// actor systems down cleanly can still see them. Callers append what else
// their tests leave behind by design.
func ProtoActorThrottles() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/cluster.NewGossipActor.NewThrottleWithLogger.func2.1"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/cluster.(*Gossiper).StartGossiping.NewThrottle.func3.1"),
		goleak.IgnoreTopFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"),
	}
}
