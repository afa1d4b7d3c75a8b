package supervision_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/supervision"
)

func TestDefaultDecider(t *testing.T) {
	cases := []struct {
		name   string
		reason any
		want   supervision.Directive
	}{
		{"panic", &gpu.ExecutionError{Kernel: "k", Err: errors.New("handler panicked"), Panic: "boom"}, supervision.Restart},
		{"wrapped panic", fmt.Errorf("actor: %w", &gpu.ExecutionError{Kernel: "k", Panic: 42}), supervision.Restart},
		{"returned error", &gpu.ExecutionError{Kernel: "k", Err: errors.New("bad input")}, supervision.Resume},
		{"wrapped returned error", fmt.Errorf("actor: %w", &gpu.ExecutionError{Kernel: "k", Err: errors.New("bad")}), supervision.Resume},
		{"device unavailable", &gpu.DeviceError{Kind: gpu.DeviceUnavailable, Backend: "cuda"}, supervision.Stop},
		{"wrapped device unavailable", fmt.Errorf("x: %w", &gpu.DeviceError{Kind: gpu.DeviceUnavailable}), supervision.Stop},
		{"handler error caused by a lost device", &gpu.ExecutionError{Kernel: "k", Err: &gpu.DeviceError{Kind: gpu.DeviceUnavailable}}, supervision.Stop},
		{"device failed", &gpu.DeviceError{Kind: gpu.DeviceFailed}, supervision.Restart},
		{"plain error", errors.New("something"), supervision.Restart},
		{"string reason", "panic: oops", supervision.Restart},
		{"int reason", 7, supervision.Restart},
		{"nil reason", nil, supervision.Restart},
	}
	for _, c := range cases {
		if got := supervision.DefaultDecider(c.reason); got != c.want {
			t.Errorf("%s: DefaultDecider(%v) = %v, want %v", c.name, c.reason, got, c.want)
		}
	}
}

func TestRestartOnError(t *testing.T) {
	for _, reason := range []any{
		&gpu.ExecutionError{Panic: "boom"},
		&gpu.ExecutionError{Err: errors.New("bad")},
		&gpu.DeviceError{Kind: gpu.DeviceUnavailable},
		errors.New("plain"),
		"not an error",
		nil,
	} {
		if got := supervision.RestartOnError(reason); got != supervision.Restart {
			t.Errorf("RestartOnError(%v) = %v, want Restart", reason, got)
		}
	}
}
