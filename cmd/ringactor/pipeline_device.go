package main

import (
	"fmt"
	"io"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/stream/sensor"
)

// deviceFlag is --device[=MODE] of the pipeline command: "" (not given),
// "auto" (--device: the machine's GPU where one can run device ring
// kernels, else the fallback) or "sim" (--device=sim: the simulated
// device, so a machine without a GPU runs the device path end to end).
type deviceFlag struct{ mode string }

func (f *deviceFlag) String() string { return f.mode }

func (f *deviceFlag) Set(v string) error {
	switch v {
	case "true", "auto", "cuda":
		f.mode = "auto"
	case "sim":
		f.mode = "sim"
	case "false":
		f.mode = ""
	default:
		return fmt.Errorf("want --device, --device=sim or --device=false, got %q", v)
	}
	return nil
}

// closingBackend is a backend the command closes after the run.
type closingBackend interface {
	gpu.Backend
	Close() error
}

// IsBoolFlag lets --device stand alone.
func (f *deviceFlag) IsBoolFlag() bool { return true }

// pipelineDevice configures cfg for --device: the scale stage becomes a
// device ring kernel, and every stage's placement is printed on stderr as
// "stage NAME: PLACEMENT". It returns the runtime options the mode needs
// and a function that releases what they hold.
func pipelineDevice(mode string, cfg *sensor.Config, stderr io.Writer) ([]actors.Option, func(), error) {
	if mode == "" {
		return nil, func() {}, nil
	}
	cfg.DeviceScale = true
	cfg.OnStage = func(stage, placement string) { fmt.Fprintf(stderr, "stage %s: %s\n", stage, placement) }
	if mode != "sim" {
		return nil, func() {}, nil
	}
	b, err := simulatedBackend()
	if err != nil {
		return nil, nil, err
	}
	return []actors.Option{actors.WithBackends(b)}, func() { _ = b.Close() }, nil
}
