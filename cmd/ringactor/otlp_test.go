package main

import (
	"bytes"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/testutil/otlptest"
	"github.com/ringactor/ringactor/internal/testutil/racecheck"
	"github.com/ringactor/ringactor/telemetry"
)

// TestServeAndCallExportOTLP starts a member and a client (`serve`, `call`)
// in processes of their own with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an
// in-process OTLP/HTTP receiver: the receiver gets the member's metrics
// (the kernel latency histogram among them) and spans from both, and one
// trace id spans the client's request, the member's handling and the
// kernel's handler.
func TestServeAndCallExportOTLP(t *testing.T) {
	recv := otlptest.New()
	defer recv.Close()
	env := []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL(),
		"OTEL_METRIC_EXPORT_INTERVAL=200",
		"OTEL_BSP_SCHEDULE_DELAY=50",
		"OTEL_TRACES_SAMPLER=always_on",
		"OTEL_SERVICE_NAME=ringactor-otlp-test",
	}
	name := fmt.Sprintf("otlp-%d", time.Now().UnixNano())
	member, _ := startServeAdmin(t, env, "--cluster", name, "--peers", "")

	cmd := commandProcess(t, "call", "--cluster", name, "--peers", member, "--kind", "echo", "--identity", "o1", "--data", `{"x":1}`)
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatal(err)
		}
		t.Fatalf("call: %v\n%s", err, errb.String())
	}
	if err := racecheck.DependencyOnly(errb.String()); err != nil {
		t.Error(err)
	}
	if out.String() != "{\"x\":1}\n" {
		t.Errorf("call printed %q", out.String())
	}

	ctx := testCtx(t)
	sameTrace := func(r *otlptest.Receiver) (string, bool) {
		names := r.SpanNames()
		for _, id := range names[cluster.SpanRequest] {
			inHandle, inHandler := false, false
			for _, h := range names[cluster.SpanHandle] {
				inHandle = inHandle || h == id
			}
			for _, h := range names[actors.SpanHandle] {
				inHandler = inHandler || h == id
			}
			if inHandle && inHandler {
				return id, true
			}
		}
		return "", false
	}
	err := recv.Wait(ctx, func(r *otlptest.Receiver) bool {
		_, ok := sameTrace(r)
		m := r.MetricNames()
		return ok && m[telemetry.MessageLatency] && m[telemetry.MessagesProcessed]
	})
	if err != nil {
		t.Fatalf("receiver: spans %v, metrics %v: %v", recv.SpanNames(), recv.MetricNames(), err)
	}
	if got := recv.ResourceAttr("service.name"); got != "ringactor-otlp-test" {
		t.Errorf("service.name = %q", got)
	}
	if got := recv.ResourceAttr(telemetry.ResourceCluster); got != name {
		t.Errorf("%s = %q, want %q", telemetry.ResourceCluster, got, name)
	}
}
