// Package demomsg holds the messages of the demo cluster kinds that every
// `ringactor serve` member hosts (echo and add). It has no dependencies, so
// package cluster can keep its deprecated aliases of these types.
package demomsg

import (
	"context"
	"fmt"
)

// Object is a JSON object as a message: the request and reply of the echo
// kind.
type Object map[string]any

// AddRequest is the request of the add kind: two vectors of equal length.
type AddRequest struct {
	A []float64 `json:"a" msgpack:"a"`
	B []float64 `json:"b" msgpack:"b"`
}

// AddReply is the reply of the add kind: the elementwise sum.
type AddReply struct {
	Sum []float64 `json:"sum" msgpack:"sum"`
}

// Message type names of the demo kinds (messages.Register).
const (
	ObjectName     = "ringactor.cluster.Object"
	AddRequestName = "ringactor.cluster.AddRequest"
	AddReplyName   = "ringactor.cluster.AddReply"
)

// Echo is the echo kind's handler: it replies with the object it is sent.
func Echo(_ context.Context, o Object) (Object, error) { return o, nil }

// Add is the add kind's handler: the elementwise sum of two vectors of
// equal length.
func Add(_ context.Context, r AddRequest) (AddReply, error) {
	if len(r.A) != len(r.B) {
		return AddReply{}, fmt.Errorf("add: vectors of lengths %d and %d", len(r.A), len(r.B))
	}
	sum := make([]float64, len(r.A))
	for i := range r.A {
		sum[i] = r.A[i] + r.B[i]
	}
	return AddReply{Sum: sum}, nil
}
