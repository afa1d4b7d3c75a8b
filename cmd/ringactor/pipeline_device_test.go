//go:build linux && cgo

package main

import (
	"strings"
	"testing"
)

// TestPipelineDeviceSim: --device=sim runs the scale stage as a device ring
// kernel on the simulated device, prints each stage's placement, and
// writes the same output as the CPU run.
func TestPipelineDeviceSim(t *testing.T) {
	file := writeInput(t)
	code, wantOut, wantErr := runPipeline(t, "--scale", "2", "--offset", "1", file)
	if code != exitOK {
		t.Fatalf("CPU run: status %d\n%s", code, wantErr)
	}
	code, out, stderr := runPipeline(t, "--device=sim", "--scale", "2", "--offset", "1", file)
	if code != exitOK {
		t.Fatalf("device run: status %d\n%s", code, stderr)
	}
	stages := "stage parse: cpu\nstage scale: cuda:sim\nstage window: cpu\nstage sink: cpu\n"
	if !strings.HasPrefix(stderr, stages) {
		if strings.Contains(stderr, "stage scale: cpu") {
			t.Skip("the simulated device refused the kernel (no host compiler?):\n" + stderr)
		}
		t.Fatalf("stderr does not start with the stage lines:\n%s", stderr)
	}
	if out != wantOut || strings.TrimPrefix(stderr, stages) != wantErr {
		t.Fatalf("device run differs:\nstdout %q\nwant   %q\nstderr %q\nwant   %q", out, wantOut, stderr, wantErr)
	}
	// --device alone: placements are printed; on this machine the scale
	// stage falls back to the CPU unless a GPU can run it.
	if code, _, stderr := runPipeline(t, "--device", file); code != exitOK || !strings.Contains(stderr, "stage scale: ") {
		t.Fatalf("--device: status %d\n%s", code, stderr)
	}
	if code, _, stderr := runPipeline(t, "--device=gpu", file); code != exitUsage || !strings.Contains(stderr, "--device=sim") {
		t.Fatalf("--device=gpu: status %d\n%s", code, stderr)
	}
}

// TestPipelineDeviceSimOverflow: a value whose scaled result overflows is
// rejected by the device scale stage as by the CPU one, with the same line.
func TestPipelineDeviceSimOverflow(t *testing.T) {
	file := writeFile(t, "s,1,1\ns,2,1e308\ns,3,2\n")
	code, wantOut, wantErr := runPipeline(t, "--scale", "10", file)
	if code != exitOK || !strings.Contains(wantErr, "line 2: value 1e+308 × scale 10 + offset 0 overflows float64 (+Inf)\nrejected 1 row\n") {
		t.Fatalf("CPU run: status %d\n%s", code, wantErr)
	}
	code, out, stderr := runPipeline(t, "--device=sim", "--scale", "10", file)
	if code != exitOK {
		t.Fatalf("device run: status %d\n%s", code, stderr)
	}
	if strings.Contains(stderr, "stage scale: cpu") {
		t.Skip("the simulated device refused the kernel (no host compiler?):\n" + stderr)
	}
	_, rest, _ := strings.Cut(stderr, "stage sink: cpu\n")
	if out != wantOut || rest != wantErr {
		t.Fatalf("device run differs:\nstdout %q\nwant   %q\nstderr %q\nwant   %q", out, wantOut, stderr, wantErr)
	}
}
