package layering

import (
	"strings"
	"testing"
)

// simulator are the packages of the simulated device: the C++ simulator
// and its Go side.
var simulator = []string{"gpu/cuda/hostsim", "gpu/cuda/simdevice"}

// production are the library packages a user's program imports: the CUDA
// backend and everything built on it.
var production = []string{"./gpu/cuda", "./compute", "./actors", "./stream", "./stream/sensor", "./cluster",
	"./pagerank", "./admin"}

// deps returns the packages (module-relative where in the module) that a
// build of pkgs links, as `go list -deps` lists them.
func deps(t *testing.T, pkgs ...string) map[string]bool {
	t.Helper()
	out := goCmd(t, append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, pkgs...)...)
	got := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		got[strings.TrimPrefix(p, "github.com/ringactor/ringactor/")] = true
	}
	return got
}

// TestProductionBuildWithoutSimulator: a program that uses the real device
// only — it imports gpu/cuda, actors and the rest of the library, not
// gpu/cuda/simdevice — links neither the simulated device's Go side nor
// the C++ simulator (hostsim). The simulator package itself does link
// hostsim, so the names looked for are the right ones.
func TestProductionBuildWithoutSimulator(t *testing.T) {
	if d := deps(t, "./gpu/cuda/simdevice"); !d["gpu/cuda/hostsim"] {
		t.Skip("gpu/cuda/simdevice does not link hostsim in this build (no cgo?): nothing to check")
	}
	d := deps(t, production...)
	if !d["gpu/cuda"] {
		t.Fatalf("go list -deps %v lists no gpu/cuda", production)
	}
	for _, s := range simulator {
		if d[s] {
			t.Errorf("a build of %v links %s: the production build must not carry the simulator (import it from tests and commands only)", production, s)
		}
	}
}
