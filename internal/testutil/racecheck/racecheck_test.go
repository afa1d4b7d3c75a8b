package racecheck

import "testing"

// TestDependencyOnly checks the filter of children's race reports: a race
// between the dependencies' goroutines (Proto.Actor, protobuf; through a
// runtime map access or not) passes, one with an access in ringactor's
// code fails.
func TestDependencyOnly(t *testing.T) {
	const depRace = `==================
WARNING: DATA RACE
Read at 0x00c003cedd10 by goroutine 18:
  runtime.mapaccess2_faststr()
      /usr/local/go/src/internal/runtime/maps/runtime_faststr.go:117 +0x0
  github.com/asynkron/gofun/set.(*ImmutableSet[go.shape.string]).Contains()
      /root/go/pkg/mod/x.go:1 +0x1

Previous write at 0x00c003cedd10 by goroutine 23:
  github.com/asynkron/protoactor-go/remote.(*BlockList).Block()
      /root/go/pkg/mod/y.go:2 +0x2
  github.com/ringactor/ringactor/cluster.(*PeersProvider).publish()
      /work/main/cluster/peers.go:317 +0xc3d
==================
`
	const ourRace = `==================
WARNING: DATA RACE
Read at 0x00c000106a38 by goroutine 23:
  github.com/ringactor/ringactor/cluster.(*Member).lookup()
      /work/main/cluster/client.go:1 +0x1

Previous write at 0x00c000106a38 by goroutine 99:
  github.com/asynkron/protoactor-go/cluster.NewRendezvous()
      /root/go/pkg/mod/z.go:3 +0x3
==================
`
	const protobufRace = `==================
WARNING: DATA RACE
Write at 0x00c00029f238 by goroutine 1613:
  github.com/asynkron/protoactor-go/cluster.setKey()
      /root/go/pkg/mod/x.go:43 +0x3e4

Previous read at 0x00c00029f238 by goroutine 1610:
  google.golang.org/protobuf/internal/impl.appendInt64NoZero()
      /root/go/pkg/mod/y.go:1899 +0x56
  github.com/asynkron/protoactor-go/remote.Serialize()
      /root/go/pkg/mod/z.go:24 +0xa1
==================
`
	if err := DependencyOnly(protobufRace); err != nil {
		t.Errorf("race between Proto.Actor and protobuf rejected: %v", err)
	}
	if err := DependencyOnly("log line\n" + depRace); err != nil {
		t.Errorf("race inside Proto.Actor rejected: %v", err)
	}
	if err := DependencyOnly(depRace + ourRace); err == nil {
		t.Error("race in ringactor's code accepted")
	}
	if err := DependencyOnly("no races\n"); err != nil {
		t.Error(err)
	}
}
