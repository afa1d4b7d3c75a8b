//go:build !race

// Two cluster members in one process race inside Proto.Actor (gRPC's global
// logger, see cluster/cluster_test.go): this test is built without -race.

package bench

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/internal/testutil/hangguard"
)

// tinyOverload is a short overload run: two identities whose handler
// sleeps 5 ms, rings of 64, offered 4 × their capacity for 2 s. The
// deadline outlasts the run, so that a member which queued without bound
// would hold every request sent beyond its capacity until the end.
func tinyOverload(kind string) OverloadConfig {
	return OverloadConfig{
		Kind: kind, Identities: 2, Capacity: 64, Work: 5 * time.Millisecond, DeviceIters: 2000,
		InFlight: 8, Measure: 500 * time.Millisecond, Overload: 2 * time.Second, Factor: 4,
		Deadline: 10 * time.Second, Margin: time.Second, RecoveryLimit: 30 * time.Second,
	}
}

// checkOverload asserts what an overload run must show whatever the
// machine's speed: every request has exactly one outcome, a reply or a
// typed refusal or timeout, none later than its deadline and the margin;
// accepted requests' p99 within the documented bound (relative to the
// capacity measured in the same run);
// requests in flight and the heap stay within what the members' bounds
// allow (not what was offered); and the member serves normally afterwards.
func checkOverload(t *testing.T, r OverloadResult) {
	t.Helper()
	t.Logf("%+v", r)
	if r.Sent == 0 || r.Accepted == 0 {
		t.Fatalf("sent %d, accepted %d", r.Sent, r.Accepted)
	}
	if got := r.Accepted + r.Refused + r.TimedOut + r.Unavailable + r.Other; got != r.Sent || r.Missing != 0 {
		t.Errorf("%d outcomes (%d missing) for %d requests", got, r.Missing, r.Sent)
	}
	if r.Other != 0 {
		t.Errorf("%d untyped errors, e.g. %s", r.Other, r.OtherSample)
	}
	if r.Refused == 0 {
		t.Errorf("nothing refused at %.0f× capacity: the member queued everything", r.OfferedPS/r.CapacityPS)
	}
	if r.Late != 0 {
		t.Errorf("%d outcomes came later than the deadline and margin (longest wait %.0f ms)", r.Late, r.MaxWaitMS)
	}
	if r.AcceptedP99MS > r.P99BoundMS {
		t.Errorf("accepted requests' p99 %.0f ms, above the documented bound %.0f ms", r.AcceptedP99MS, r.P99BoundMS)
	}
	if r.MaxInFlight > r.InFlightBound {
		t.Errorf("%d requests in flight at once, the bounds allow %d (%d sent)", r.MaxInFlight, r.InFlightBound, r.Sent)
	}
	// Generous: 16 KiB per request the bounds allow in flight, and 64 MiB.
	if grew, limit := r.HeapPeakMB-r.HeapBeforeMB, float64(r.InFlightBound)*16/1024+64; grew > limit {
		t.Errorf("the heap grew by %.1f MiB under overload, bound %.1f MiB", grew, limit)
	}
	if !r.Recovered || !r.AfterwardsOK {
		t.Errorf("after the overload: recovered %v (best %.0f/s of %.0f/s), requests answered %v", r.Recovered, r.RecoveredPS, r.CapacityPS, r.AfterwardsOK)
	}
}

func TestOverloadCPUKind(t *testing.T) {
	defer goleak.VerifyNone(t, append(protoActorLeaks, goleak.IgnoreCurrent())...)
	ctx := hangguard.Context(t)
	r, err := RunOverload(ctx, tinyOverload(OverloadCPU))
	if err != nil {
		t.Fatal(err)
	}
	checkOverload(t, r)
}

func TestOverloadRejectsBadConfig(t *testing.T) {
	for _, cfg := range []OverloadConfig{
		func() OverloadConfig { c := tinyOverload(OverloadCPU); c.Factor = 0; return c }(),
		tinyOverload("nope"),
		tinyOverload(OverloadDevice), // no backend
	} {
		if _, err := RunOverload(context.Background(), cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
