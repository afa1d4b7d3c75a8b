package cluster

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestProtoActorLogLevels: Proto.Actor's records reach the member's logger
// from WARN up by default; its reports of a connection that ended, which it
// logs as errors, are debug records; WithProtoActorLogLevel lowers the
// floor.
func TestProtoActorLogLevels(t *testing.T) {
	for _, c := range []struct {
		floor *slog.Level
		want  []string
		not   []string
	}{
		{nil, []string{"level=WARN msg=warned", "level=ERROR msg=failed"}, []string{"started", "EndpointWriter"}},
		{ptr(slog.LevelDebug), []string{"level=INFO msg=started", "level=DEBUG msg=\"EndpointWriter lost connection\"", "level=ERROR msg=failed"}, nil},
	} {
		var buf bytes.Buffer
		member := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		l := protoLogger(member, c.floor).With(slog.String("lib", "protoactor"))
		l.Info("started")
		l.Warn("warned")
		l.Error("EndpointWriter lost connection", slog.String("address", "127.0.0.1:9"))
		l.Error("failed")
		out := buf.String()
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("floor %v: no %q in\n%s", c.floor, w, out)
			}
		}
		for _, n := range c.not {
			if strings.Contains(out, n) {
				t.Errorf("floor %v: %q logged:\n%s", c.floor, n, out)
			}
		}
		if strings.Contains(out, "level=ERROR msg=\"EndpointWriter") {
			t.Errorf("a disconnection logged as an error:\n%s", out)
		}
	}
}

func ptr[T any](v T) *T { return &v }
