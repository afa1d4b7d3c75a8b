package demomsg

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"sync/atomic"
)

// CounterRequest is the request of the counter kind: add By (1 when 0) to
// the identity's count.
type CounterRequest struct {
	By int64 `json:"by,omitempty" msgpack:"by"`
}

// CounterReply is the counter kind's reply: the identity's count after the
// request, and which activation answered ("HOST:PORT/PID#N": the member's
// address, its process id and the activation's sequence number in that
// process), so that a move, or a duplicate activation, is visible from
// outside.
type CounterReply struct {
	Count      int64  `json:"count" msgpack:"count"`
	Activation string `json:"activation" msgpack:"activation"`
}

// Message type names of the counter kind.
const (
	CounterRequestName = "ringactor.demo.CounterRequest"
	CounterReplyName   = "ringactor.demo.CounterReply"
)

// activations numbers the counter activations of this process.
var activations atomic.Uint64

// Counter is one activation of an identity of the counter kind: its count
// survives the identity's moves through the state hand-off.
type Counter struct {
	count int64
	name  string
}

// NewCounter starts an activation at member (its address) from the state
// the identity's previous activation handed off (nil: count 0).
func NewCounter(member string, state []byte) (*Counter, error) {
	c := &Counter{name: fmt.Sprintf("%s/%d#%d", member, os.Getpid(), activations.Add(1))}
	if state != nil {
		if len(state) != 8 {
			return nil, fmt.Errorf("counter: handed-off state of %d bytes, want 8", len(state))
		}
		c.count = int64(binary.BigEndian.Uint64(state))
	}
	return c, nil
}

// Handle adds to the count and replies with it.
func (c *Counter) Handle(_ context.Context, r CounterRequest) (CounterReply, error) {
	by := r.By
	if by == 0 {
		by = 1
	}
	c.count += by
	return CounterReply{Count: c.count, Activation: c.name}, nil
}

// Passivate returns the count as the state to hand off.
func (c *Counter) Passivate() ([]byte, error) {
	return binary.BigEndian.AppendUint64(nil, uint64(c.count)), nil
}

// Snapshot returns the count, as Passivate does: on a member with a state
// store (serve --state-store) the count is saved after every request
// (cluster.Snapshotter).
func (c *Counter) Snapshot() ([]byte, error) { return c.Passivate() }
