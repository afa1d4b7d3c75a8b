//go:build !race && linux && cgo

package multiproc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDevicePlacementAcrossProcesses: four processes — members with 1 and
// 3 simulated devices, one without, a client. The device-only kind
// (devscale; RINGACTOR_DEVICE_IDENTITIES identities, 300 by default, 1000
// for the size) lands only on the two device members, about 1:3,
// on every device of each; after a SIGKILL of the 3-device member every
// identity answers again from the other device member, none from the
// member without; after a SIGKILL of that one too, the device-only kind
// gets ErrNoCapacity at its deadline and the device-preferred kind (devpref) answers from
// the member without a device, on its fallback, and PlacementOf says so.
// Hang guards only: each phase may take minutes on a loaded machine.
func TestDevicePlacementAcrossProcesses(t *testing.T) {
	one := startProc(t, "member", nil, simDevicesEnv+"=1")
	oneAddr := one.expect(t, "ADDR ", 2*time.Minute)
	three := startProc(t, "member", []string{oneAddr}, simDevicesEnv+"=3")
	threeAddr := three.expect(t, "ADDR ", 2*time.Minute)
	cpu := startProc(t, "member", []string{oneAddr, threeAddr})
	cpuAddr := cpu.expect(t, "ADDR ", 2*time.Minute)
	client := startProc(t, "devices", []string{oneAddr, threeAddr, cpuAddr})
	phase := func(n int) (dev, pref devicesPhase) {
		t.Helper()
		for _, into := range []*devicesPhase{&dev, &pref} {
			line := client.expect(t, fmt.Sprintf("PHASE%d ", n), 5*time.Minute)
			if err := json.Unmarshal([]byte(line), into); err != nil {
				t.Fatal(err)
			}
		}
		return dev, pref
	}
	noErrors := func(p devicesPhase) {
		t.Helper()
		if p.Failed > 0 {
			t.Fatalf("%s: %d calls failed: %v", p.Kind, p.Failed, p.Errors)
		}
	}

	dev, pref := phase(0)
	noErrors(dev)
	noErrors(pref)
	total := dev.ByMember[oneAddr] + dev.ByMember[threeAddr]
	t.Logf("device-only split over %d identities: 1-device member %d, 3-device member %d, member without a device %d; per device %v",
		total, dev.ByMember[oneAddr], dev.ByMember[threeAddr], dev.ByMember[cpuAddr], dev.ByDevice)
	if dev.ByMember[cpuAddr] != 0 || dev.NoCapacity != 0 || total == 0 {
		t.Fatalf("device-only kind: %+v", dev)
	}
	if share := float64(dev.ByMember[threeAddr]) / float64(total); share < 0.6 || share > 0.9 {
		t.Fatalf("3-device member's share %.2f, want about 0.75", share)
	}
	for i := range 3 {
		if d := fmt.Sprintf("%s/cuda:sim%d", threeAddr, i); dev.ByDevice[d] == 0 {
			t.Fatalf("device %s hosts nothing: %v", d, dev.ByDevice)
		}
	}
	if dev.ByDevice[oneAddr+"/cuda:sim"] != dev.ByMember[oneAddr] {
		t.Fatalf("the 1-device member's identities are not all on cuda:sim: %v", dev.ByDevice)
	}
	if pref.ByMember[cpuAddr] != 0 || pref.Fallback != 0 {
		t.Fatalf("device-preferred kind with device members up: %+v", pref)
	}

	three.kill(t)
	client.send(t, "next "+threeAddr)
	dev, pref = phase(1)
	noErrors(dev)
	noErrors(pref)
	t.Logf("after the 3-device member's SIGKILL: %v (%d requests asked again after ErrMemberUnavailable)", dev.ByDevice, dev.Retried+pref.Retried)
	if dev.ByMember[oneAddr] != total || pref.ByMember[oneAddr] != devPrefIDs {
		t.Fatalf("after the kill: device-only %v, device-preferred %v, want all on %s", dev.ByMember, pref.ByMember, oneAddr)
	}

	one.kill(t)
	client.send(t, "next "+oneAddr)
	dev, pref = phase(2)
	noErrors(pref)
	if dev.NoCapacity != devNoCapacityIDs || dev.Failed != 0 {
		t.Fatalf("device-only kind with no device member: %d of %d ErrNoCapacity, failures %v", dev.NoCapacity, devNoCapacityIDs, dev.Errors)
	}
	t.Logf("without device members: device-only %d ErrNoCapacity; device-preferred %v, %d fallbacks", dev.NoCapacity, pref.ByDevice, pref.Fallback)
	if pref.ByMember[cpuAddr] != devPrefIDs || pref.Fallback != devPrefIDs {
		t.Fatalf("device-preferred kind with no device member: %+v, want all on %s as fallbacks", pref, cpuAddr)
	}
	for d := range pref.ByDevice {
		if !strings.HasSuffix(d, "/cpu") {
			t.Fatalf("device-preferred identity placed at %q without a device member", d)
		}
	}
	client.send(t, "done")
	client.stop(t)
}
