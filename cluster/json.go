package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ringactor/ringactor/messages"
)

// jsonCaller sends a JSON request to a kind and returns its reply as JSON.
type jsonCaller func(ctx context.Context, m *Member, kind, identity string, req []byte) ([]byte, error)

var jsonKinds sync.Map // kind name → jsonCaller

// RegisterJSON gives kind a JSON form for RequestJSON (and `ringactor
// call`): requests are decoded from JSON into Req, replies encoded from
// Resp.
func RegisterJSON[Req, Resp any](kind string) {
	jsonKinds.Store(kind, jsonCaller(func(ctx context.Context, m *Member, kind, identity string, raw []byte) ([]byte, error) {
		req, err := decodeJSON[Req](kind, raw)
		if err != nil {
			return nil, err
		}
		resp, err := Request[Resp](ctx, m, kind, identity, req)
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	}))
}

// decodeJSON decodes the JSON request raw for kind into a Req; malformed
// JSON, JSON of another shape, or a request the receiving member could not
// decode from the wire (JSON nested deeper than the msgpack codec takes)
// is messages.ErrDecode, found here rather than on the member.
func decodeJSON[Req any](kind string, raw []byte) (Req, error) {
	var req, zero Req
	if err := json.Unmarshal(raw, &req); err != nil {
		return zero, fmt.Errorf("ringactor/cluster: %w: request for kind %q: %w", messages.ErrDecode, kind, err)
	}
	b, err := messages.AppendPayload(nil, req)
	if err == nil {
		err = messages.UnmarshalInto(b, new(Req))
	}
	if err != nil {
		return zero, fmt.Errorf("ringactor/cluster: %w: request for kind %q cannot be sent: %w", messages.ErrDecode, kind, err)
	}
	return req, nil
}

// RequestJSON sends the JSON request req to the identity of kind, whose
// JSON form was registered with RegisterJSON, and returns the reply as
// JSON. A kind without a JSON form here is ErrUnknownKind; malformed JSON
// is messages.ErrDecode; the other errors are those of Request.
func RequestJSON(ctx context.Context, m *Member, kind, identity string, req []byte) ([]byte, error) {
	c, ok := jsonKinds.Load(kind)
	if !ok {
		return nil, fmt.Errorf("%w: %q has no JSON form here (RegisterJSON); kinds with one: %s", ErrUnknownKind, kind, jsonKindNames())
	}
	return c.(jsonCaller)(ctx, m, kind, identity, req)
}

// jsonKindNames lists the kinds registered with RegisterJSON, sorted and
// comma-separated ("none" when there are none).
func jsonKindNames() string {
	var names []string
	jsonKinds.Range(func(k, _ any) bool {
		names = append(names, k.(string))
		return true
	})
	if len(names) == 0 {
		return "none"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
