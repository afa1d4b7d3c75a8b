package supervision_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/supervision"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestStrategyWithoutLoggerLogsThroughTheActorSystem(t *testing.T) {
	// slog.Default is a trap: it writes somewhere this test would not see.
	var def lockedBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	var sysLog lockedBuffer
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(&sysLog, nil))
	}))
	t.Cleanup(sys.Shutdown)
	sup := newFakeSupervisor()
	child := sys.NewLocalPID("kernel-log")
	reason := &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda"}

	supervision.NewStrategy().HandleFailure(sys, sup, child, actor.NewRestartStatistics(), reason, nil)
	onlyPID(t, recvPIDs(t, sup.stopped, "StopChildren"), child)

	got := sysLog.String()
	if !strings.Contains(got, "stopping kernel actor") || !strings.Contains(got, "error=") {
		t.Errorf("actor system log = %q, want the stop with an error key", got)
	}
	if strings.Contains(def.String(), "stopping kernel actor") {
		t.Errorf("the strategy logged to slog.Default: %q", def.String())
	}
}
