package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/gpu"
	"github.com/ringactor/ringactor/gpu/cpu"
)

// allDTypes and floatDTypes are the dtype lists the built-in kernels name.
var (
	allDTypes   = []string{"f32", "f64", "s32", "s64", "u32", "u8"}
	floatDTypes = []string{"f32", "f64"}
)

// wantKernels is what `ringactor kernels` must say about some built-ins.
var wantKernels = map[string]kernelInfo{
	"add":    {Name: "add", Inputs: 2, Scalars: []scalarInfo{}, DTypes: allDTypes, Backends: []string{"cpu"}, Elementwise: true},
	"matmul": {Name: "matmul", Inputs: 2, Scalars: []scalarInfo{}, DTypes: allDTypes, Backends: []string{"cpu"}},
	"blur": {Name: "blur", Inputs: 1, Scalars: []scalarInfo{{Name: "radius", Default: 1}, {Name: "sigma", Default: 1}},
		DTypes: allDTypes, Backends: []string{"cpu"}},
	"spmv":  {Name: "spmv", Inputs: 4, Scalars: []scalarInfo{}, DTypes: floatDTypes, Backends: []string{"cpu"}},
	"sum":   {Name: "sum", Inputs: 1, Scalars: []scalarInfo{}, DTypes: allDTypes, Backends: []string{"cpu"}},
	"mean":  {Name: "mean", Inputs: 1, Scalars: []scalarInfo{}, DTypes: allDTypes, Backends: []string{"cpu"}},
	"scale": {Name: "scale", Inputs: 1, Scalars: []scalarInfo{{Name: "factor", Default: 1}}, DTypes: allDTypes, Backends: []string{"cpu"}, Elementwise: true},
}

// TestKernelsJSON runs "ringactor kernels --json" and checks that stdout is
// one JSON array that lists the built-ins with their inputs, scalars,
// dtypes, backends and elementwise flag, sorted by name.
func TestKernelsJSON(t *testing.T) {
	code, stdout, stderr := runCLI(t, "kernels", "--json")
	if code != exitOK {
		t.Fatalf("kernels --json exit %d, stderr:\n%s", code, stderr)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	var got []kernelInfo
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("stdout is not a JSON array of kernels: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
	}
	names := make([]string, len(got))
	for i, k := range got {
		names[i] = k.Name
		if k.Description == "" {
			t.Errorf("kernel %q has no description", k.Name)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("kernels are not sorted by name: %q", names)
	}
	for name, want := range wantKernels {
		i := slices.Index(names, name)
		if i < 0 {
			t.Errorf("kernels --json lacks %q: %q", name, names)
			continue
		}
		k := got[i]
		k.Description = ""
		if !equalInfo(k, want) {
			t.Errorf("kernel %q = %+v, want %+v", name, k, want)
		}
	}
	// The raw JSON keeps every key, even empty arrays (not null).
	var raw []map[string]any
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range raw {
		for _, key := range []string{"name", "inputs", "scalars", "dtypes", "backends", "elementwise", "description"} {
			if v, ok := k[key]; !ok || v == nil {
				t.Errorf("kernel %v: key %q missing or null", k["name"], key)
			}
		}
	}
	if strings.Contains(stdout, `\u003e`) {
		t.Errorf("JSON escapes '>' as HTML:\n%s", stdout)
	}
}

// equalInfo compares two kernelInfos field by field.
func equalInfo(a, b kernelInfo) bool {
	return a.Name == b.Name && a.Inputs == b.Inputs && slices.Equal(a.Scalars, b.Scalars) &&
		slices.Equal(a.DTypes, b.DTypes) && slices.Equal(a.Backends, b.Backends) &&
		a.Elementwise == b.Elementwise && a.Description == b.Description
}

// TestKernelsTable runs "ringactor kernels" and checks the table's header
// and the rows of the built-ins.
func TestKernelsTable(t *testing.T) {
	code, stdout, stderr := runCLI(t, "kernels")
	if code != exitOK {
		t.Fatalf("kernels exit %d, stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if head := strings.Fields(lines[0]); !slices.Equal(head, []string{"NAME", "INPUTS", "SCALARS", "DTYPES", "BACKENDS", "ELEMENTWISE", "DESCRIPTION"}) {
		t.Fatalf("header = %q", lines[0])
	}
	rows := map[string][]string{}
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) < 7 {
			t.Fatalf("short row %q", line)
		}
		rows[f[0]] = f[:6]
	}
	all, floats := strings.Join(allDTypes, ","), strings.Join(floatDTypes, ",")
	for name, want := range map[string][]string{
		"add":    {"add", "2", "-", all, "cpu", "yes"},
		"matmul": {"matmul", "2", "-", all, "cpu", "no"},
		"blur":   {"blur", "1", "radius=1,sigma=1", all, "cpu", "no"},
		"spmv":   {"spmv", "4", "-", floats, "cpu", "no"},
		"sum":    {"sum", "1", "-", all, "cpu", "no"},
		"mean":   {"mean", "1", "-", all, "cpu", "no"},
		"scale":  {"scale", "1", "factor=1", all, "cpu", "yes"},
	} {
		if got := rows[name]; !slices.Equal(got, want) {
			t.Errorf("row %q = %q, want %q\n%s", name, got, want, stdout)
		}
	}
	if !strings.Contains(stdout, "elementwise a + b") {
		t.Errorf("table lacks add's description:\n%s", stdout)
	}
}

// partialBackend is a device backend that implements only matmul on f64.
type partialBackend struct{ *cpu.Backend }

func (partialBackend) Name() string          { return "fake:0" }
func (partialBackend) Kind() gpu.BackendKind { return "fake" }
func (partialBackend) Available() error      { return nil }
func (partialBackend) Supports(spec *gpu.KernelSpec, dt gpu.DType) bool {
	return spec.Name == "matmul" && dt == gpu.F64
}

// TestDescribeKernelsBackends checks that a backend is listed for a kernel
// when it supports any one of the kernel's dtypes, and only then, in the
// order of the runtime's backends.
func TestDescribeKernelsBackends(t *testing.T) {
	infos, err := listKernels(testCtx(t), actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false),
		actors.WithBackends(partialBackend{cpu.NewBackend()}))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range infos {
		want := []string{"cpu"}
		if k.Name == "matmul" {
			want = []string{"cpu", "fake:0"}
		}
		if !slices.Equal(k.Backends, want) {
			t.Errorf("%s: backends %q, want %q", k.Name, k.Backends, want)
		}
	}
}

// TestKernelsInterrupted checks that a cancelled context fails the command
// with exit status 1 and nothing on stdout.
func TestKernelsInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := listKernels(ctx, actors.WithLogger(actors.DiscardLogger()), actors.WithTelemetry(false)); !errors.Is(err, context.Canceled) {
		t.Fatalf("listKernels with a cancelled context = %v, want context.Canceled", err)
	}
	var stdout, stderr strings.Builder
	if code := run(ctx, []string{"kernels"}, &stdout, &stderr); code != exitFailure || stdout.Len() != 0 {
		t.Fatalf("kernels with a cancelled context: exit %d, stdout %q", code, stdout.String())
	}
}

// TestKernelsUsage checks the kernels command's help (exit 0) and bad
// command lines (exit 2), each with the usage on stderr and nothing on
// stdout.
func TestKernelsUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"kernels", "-h"}, exitOK},
		{[]string{"help", "kernels"}, exitOK},
		{[]string{"kernels", "--help"}, exitOK},
		{[]string{"kernels", "-x"}, exitUsage},
		{[]string{"kernels", "extra"}, exitUsage},
		{[]string{"kernels", "-json", "now"}, exitUsage},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d", tc.args, code, tc.code)
		}
		if stdout != "" {
			t.Errorf("%q: wrote to stdout: %q", tc.args, stdout)
		}
		if tc.code == exitUsage {
			checkUsageLine(t, tc.args, "kernels", stderr)
		} else if !strings.Contains(stderr, "Usage: ringactor kernels") {
			t.Errorf("%q: stderr has no usage:\n%s", tc.args, stderr)
		}
	}
}
