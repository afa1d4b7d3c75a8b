package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/messages"
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

func init() {
	messages.MustRegister[Object]("ringactor.cluster.Object")
	messages.MustRegister[AddRequest]("ringactor.cluster.AddRequest")
	messages.MustRegister[AddReply]("ringactor.cluster.AddReply")
	RegisterJSON[Object, Object]("echo")
	RegisterJSON[AddRequest, AddReply]("add")
}

// BuiltinKinds returns fresh declarations of the kinds every `ringactor
// serve` member hosts: echo (replies with the object it is sent) and add
// ({"a":[…],"b":[…]} → {"sum":[…]}).
func BuiltinKinds() []*Kind {
	return []*Kind{
		NewKind("echo", func() actors.Handler[Object, Object] {
			return func(_ context.Context, o Object) (Object, error) { return o, nil }
		}),
		NewKind("add", func() actors.Handler[AddRequest, AddReply] { return addVectors }),
	}
}

func addVectors(_ context.Context, r AddRequest) (AddReply, error) {
	if len(r.A) != len(r.B) {
		return AddReply{}, fmt.Errorf("add: vectors of lengths %d and %d", len(r.A), len(r.B))
	}
	sum := make([]float64, len(r.A))
	for i := range r.A {
		sum[i] = r.A[i] + r.B[i]
	}
	return AddReply{Sum: sum}, nil
}

// jsonCaller sends a JSON request to a kind and returns its reply as JSON.
type jsonCaller func(ctx context.Context, m *Member, kind, identity string, req []byte) ([]byte, error)

var jsonKinds sync.Map // kind name → jsonCaller

// RegisterJSON gives kind a JSON form for RequestJSON (and `ringactor
// call`): requests are decoded from JSON into Req, replies encoded from
// Resp. The built-in kinds are registered.
func RegisterJSON[Req, Resp any](kind string) {
	jsonKinds.Store(kind, jsonCaller(func(ctx context.Context, m *Member, kind, identity string, raw []byte) ([]byte, error) {
		var req Req
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("ringactor/cluster: %w: request for kind %q: %w", messages.ErrDecode, kind, err)
		}
		resp, err := Request[Resp](ctx, m, kind, identity, req)
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	}))
}

// RequestJSON sends the JSON request req to the identity of kind, whose
// JSON form was registered with RegisterJSON, and returns the reply as
// JSON. A kind without a JSON form here is ErrUnknownKind; malformed JSON
// is messages.ErrDecode; the other errors are those of Request.
func RequestJSON(ctx context.Context, m *Member, kind, identity string, req []byte) ([]byte, error) {
	c, ok := jsonKinds.Load(kind)
	if !ok {
		return nil, fmt.Errorf("%w: %q has no JSON form here (RegisterJSON)", ErrUnknownKind, kind)
	}
	return c.(jsonCaller)(ctx, m, kind, identity, req)
}
