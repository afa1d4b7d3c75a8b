package cuda

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// ptxFiles are the generated PTX files, their sources and the embedded
// copies.
var ptxFiles = []struct {
	ptx, src string
	embedded []byte
	entries  []string
}{
	{"kernels/oneshot.ptx", "kernels/oneshot.cu", OneShotPTX, []string{
		"rc_add_f32", "rc_sub_f32", "rc_mul_f32", "rc_scale_f32", "rc_relu_f32", "rc_leaky_relu_f32",
		"rc_add_f64", "rc_sub_f64", "rc_mul_f64", "rc_scale_f64", "rc_relu_f64", "rc_leaky_relu_f64",
		"rc_sum_f32_partial", "rc_sum_f64_partial", "rc_min_f32_partial", "rc_min_f64_partial",
		"rc_max_f32_partial", "rc_max_f64_partial",
		"rc_matmul_f32", "rc_matmul_f64",
		"rc_blur_rows_f32", "rc_blur_cols_f32", "rc_blur_rows_f64", "rc_blur_cols_f64",
		"rc_smem_probe",
	}},
}

// TestPTXInSync regenerates every PTX file with the go:generate command of
// ptx.go and compares it with the committed (and embedded) file.
func TestPTXInSync(t *testing.T) {
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not found: install the CUDA toolkit (gpu/cuda/kernels/INSTALL.txt) to check the PTX is in sync")
	}
	dir := t.TempDir()
	for _, f := range ptxFiles {
		committed, err := os.ReadFile(f.ptx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(committed, f.embedded) {
			t.Errorf("%s: embedded copy differs from the file (rebuild)", f.ptx)
		}
		out := filepath.Join(dir, filepath.Base(f.ptx))
		cmd := exec.Command(nvcc, "-ptx", "-arch=compute_70", "-std=c++17", "-o", out, f.src)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
		}
		fresh, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fresh, committed) {
			t.Errorf("%s is stale: run go generate ./gpu/cuda and commit the result", f.ptx)
		}
	}
}

// TestPTXAssembles runs ptxas on every PTX file for each target GPU.
func TestPTXAssembles(t *testing.T) {
	ptxas, err := exec.LookPath("ptxas")
	if err != nil {
		t.Skip("ptxas not found: install the CUDA toolkit (gpu/cuda/kernels/INSTALL.txt) to assemble the PTX")
	}
	for _, f := range ptxFiles {
		for _, arch := range []string{"sm_70", "sm_80", "sm_90"} {
			cmd := exec.Command(ptxas, "-arch="+arch, "-o", os.DevNull, f.ptx)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%v: %v\n%s", cmd.Args, err, b)
			}
		}
	}
}

var entryRE = regexp.MustCompile(`(?m)^\.visible \.entry (\w+)\(`)

// TestPTXEntries checks every embedded PTX declares exactly the expected
// entry points (the names the backend looks up with cuModuleGetFunction).
func TestPTXEntries(t *testing.T) {
	for _, f := range ptxFiles {
		var got []string
		for _, m := range entryRE.FindAllSubmatch(f.embedded, -1) {
			got = append(got, string(m[1]))
		}
		want := slices.Clone(f.entries)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s entries = %v, want %v", f.ptx, got, want)
		}
		if !bytes.Contains(f.embedded, []byte(".target sm_70")) {
			t.Errorf("%s does not target sm_70 (compute_70)", f.ptx)
		}
	}
}
