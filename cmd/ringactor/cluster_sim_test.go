//go:build linux && cgo

package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestServeSimDevicesDevscale: a member started with --sim-devices 2 hosts
// every identity of the device-only demo kind devscale, spread over its
// two devices, and `call --kind devscale` with {} shows where each landed
// ("HOST:PORT/cuda:simN"); the member without a device hosts none.
func TestServeSimDevicesDevscale(t *testing.T) {
	dev := startServe(t, "--cluster", "devs", "--peers", "", "--sim-devices", "2")
	cpu := startServe(t, "--cluster", "devs", "--peers", dev)
	per := map[string]int{}
	for i := range 8 {
		out, errs, code := call(t, "--cluster", "devs", "--peers", cpu+","+dev, "--kind", "devscale", "--identity", fmt.Sprintf("g%d", i), "--data", `{}`)
		if code != 0 {
			t.Fatalf("devscale g%d: exit %d: %s", i, code, errs)
		}
		var rep struct {
			Calls     uint64 `json:"calls"`
			Placement string `json:"placement"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Calls != 1 {
			t.Fatalf("devscale g%d printed %q (%v)", i, out, err)
		}
		where, found := strings.CutPrefix(rep.Placement, dev+"/")
		if !found || (where != "cuda:sim0" && where != "cuda:sim1") {
			t.Fatalf("devscale g%d placed at %q, want %s/cuda:simN", i, rep.Placement, dev)
		}
		per[where]++
	}
	if per["cuda:sim0"] == 0 || per["cuda:sim1"] == 0 {
		t.Fatalf("placements %v: one device got nothing", per)
	}
}
