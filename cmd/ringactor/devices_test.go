package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/gpu/cuda"
)

func TestDevicesCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"devices", "-json"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r devicesReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.CPU.Cores < 1 || r.CPU.GOMAXPROCS < 1 {
		t.Fatalf("%+v", r.CPU)
	}
	p := cuda.Probe()
	if r.CUDA.Usable != (p.Err == nil && len(p.Devices) > 0) {
		t.Fatalf("cuda usable %v, probe %v", r.CUDA.Usable, p)
	}
	if !r.CUDA.Usable && r.CUDA.Reason == "" {
		t.Fatal("cuda unusable without a reason")
	}
	if !r.NVML.Usable && r.NVML.Reason == "" {
		t.Fatal("nvml unusable without a reason")
	}
	_, nerr := cuda.LoadNVRTC()
	if r.NVRTC.Usable != (nerr == nil) || (!r.NVRTC.Usable && r.NVRTC.Reason == "") || (r.NVRTC.Usable && r.NVRTC.Version == "") {
		t.Fatalf("nvrtc %+v, LoadNVRTC: %v", r.NVRTC, nerr)
	}
	out.Reset()
	if code := run(context.Background(), []string{"devices"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"cpu ", "cuda ", "nvrtc ", "nvml "} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("text output lacks %q:\n%s", want, out.String())
		}
	}
	if code := run(context.Background(), []string{"devices", "extra"}, &out, &errb); code != exitUsage {
		t.Fatalf("extra argument: exit %d", code)
	}
}
