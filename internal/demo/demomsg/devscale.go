package demomsg

import (
	"bytes"
	"context"
	"encoding/json"
)

// DevscaleRequest is the request of the devscale kind (a device ring
// kernel): add By to the identity's count on its device (0 counts as 1).
// The JSON request {} is valid.
type DevscaleRequest struct {
	By uint32 `json:"by" msgpack:"by"`
}

// DevscaleReply is the devscale kind's reply: the identity's count and
// where it was computed ("HOST:PORT/cuda:sim1"), stamped by its member.
type DevscaleReply struct {
	Calls     uint64
	Placement [64]byte
}

// DevscaleState is a devscale identity's device State.
type DevscaleState struct {
	Calls uint64
}

// Message type names of the devscale kind.
const (
	DevscaleRequestName = "ringactor.demo.DevscaleRequest"
	DevscaleReplyName   = "ringactor.demo.DevscaleReply"
)

// DevscaleEntry is the devscale kind's device handler in DevscaleCUDA.
const DevscaleEntry = "devscale"

// DevscaleCUDA is the devscale kind's device handler.
const DevscaleCUDA = `
__device__ uint32_t devscale(const rc_ctx *ctx, const DevscaleRequest *req, DevscaleReply *resp, DevscaleState *st) {
	if (ctx->thread == 0) {
		st->Calls += req->By ? req->By : 1;
		resp->Calls = st->Calls;
	}
	return RC_STATUS_OK;
}
`

// NewDevscaleFallback is the devscale kind's Go handler, for a kernel its
// device cannot run.
func NewDevscaleFallback() func(context.Context, DevscaleRequest) (DevscaleReply, error) {
	var calls uint64
	return func(_ context.Context, r DevscaleRequest) (DevscaleReply, error) {
		calls += uint64(max(r.By, 1))
		return DevscaleReply{Calls: calls}, nil
	}
}

// StampPlacement records where the reply was computed (cluster's
// PlacementStamper), cut to 64 bytes.
func (r *DevscaleReply) StampPlacement(where string) {
	r.Placement = [64]byte{}
	copy(r.Placement[:], where)
}

// PlacementText is the stamped placement.
func (r DevscaleReply) PlacementText() string {
	return string(bytes.TrimRight(r.Placement[:], "\x00"))
}

type devscaleJSON struct {
	Calls     uint64 `json:"calls"`
	Placement string `json:"placement"`
}

// MarshalJSON writes {"calls":…,"placement":"HOST:PORT/cuda:sim1"}.
func (r DevscaleReply) MarshalJSON() ([]byte, error) {
	return json.Marshal(devscaleJSON{Calls: r.Calls, Placement: r.PlacementText()})
}

// UnmarshalJSON reads MarshalJSON's form.
func (r *DevscaleReply) UnmarshalJSON(b []byte) error {
	var j devscaleJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	r.Calls = j.Calls
	r.StampPlacement(j.Placement)
	return nil
}
