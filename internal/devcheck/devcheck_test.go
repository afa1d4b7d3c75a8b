package devcheck

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

// TestMain fails the package when a step leaves goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, testproc.ProtoActorThrottles()...)
}

// TestStepsOnSimulatedDevice runs every step on the simulated device, in
// this process, each with a generous hang guard: they pass (the hazard
// model and the fault included), and each reports figures.
func TestStepsOnSimulatedDevice(t *testing.T) {
	for _, s := range Steps() {
		if s.Hidden {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var log strings.Builder
			r := Run(ctx, s, Config{Sim: true, Quick: true, Log: &log})
			t.Logf("%s: %s %.2fs %v", r.Name, r.Status, r.Seconds, r.Figures)
			if r.Status != Pass {
				t.Fatalf("%s: %s: %s\nprogress:\n%s", r.Name, r.Status, r.Reason, log.String())
			}
			if len(r.Figures) == 0 && s.Name != "hazard-model" {
				t.Errorf("%s reported no figures", s.Name)
			}
		})
	}
}
