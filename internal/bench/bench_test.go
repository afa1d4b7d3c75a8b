package bench

import (
	"context"
	"testing"
)

func TestRunSmall(t *testing.T) {
	res, err := Run(context.Background(), Config{RTTSamples: 500, PipelinedMsgs: 2000, InFlight: 8, WarmupRequests: 100})
	if err != nil {
		t.Fatal(err)
	}
	if res.RingRTTP50 <= 0 || res.ProtoActorRTTP50 <= 0 || res.ChanRTTP50 <= 0 || res.RingPipelinedMsgsPerS <= 0 || res.ChanPipelinedMsgsPerS <= 0 {
		t.Fatalf("missing measurement: %+v", res)
	}
}
