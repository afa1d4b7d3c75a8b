//go:build !race && linux && cgo

package multiproc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ringactor/ringactor/actors"
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
// Hang guards only: each phase may take minutes on a loaded machine (the
// client prints a progress line every few calls; a phase fails when none
// comes for devPhaseIdle).
func TestDevicePlacementAcrossProcesses(t *testing.T) {
	c := startDeviceCluster(t)
	one, three, client := c.one, c.three, c.client
	oneAddr, threeAddr, cpuAddr := c.oneAddr, c.threeAddr, c.cpuAddr
	noErrors := func(p devicesPhase) {
		t.Helper()
		if p.Failed > 0 {
			t.Fatalf("%s: %d calls failed: %v", p.Kind, p.Failed, p.Errors)
		}
	}

	dev, pref := c.phase(t, 0)
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
	dev, pref = c.phase(t, 1)
	noErrors(dev)
	noErrors(pref)
	t.Logf("after the 3-device member's SIGKILL: %v (%d requests asked again after ErrMemberUnavailable)", dev.ByDevice, dev.Retried+pref.Retried)
	if dev.ByMember[oneAddr] != total || pref.ByMember[oneAddr] != devPrefIDs {
		t.Fatalf("after the kill: device-only %v, device-preferred %v, want all on %s", dev.ByMember, pref.ByMember, oneAddr)
	}

	one.kill(t)
	client.send(t, "next "+oneAddr)
	dev, pref = c.phase(t, 2)
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

// TestDeviceFaultAcrossProcesses is TestDevicePlacementAcrossProcesses
// with device faults instead of kills: the 3-device member's devices fault
// (a line on its stdin marks a simulated device failed, as a device ring
// kernel does when its launch faults). After one of its three faults, it
// advertises two devices: every identity still answers, none from the
// faulted device or the member without a device, and the 1-device member
// gains the share the other lost. After the other two fault too, the
// member advertises none and stays in the cluster: every identity of both
// kinds answers from the 1-device member, none from the CPU member.
func TestDeviceFaultAcrossProcesses(t *testing.T) {
	c := startDeviceCluster(t)
	three, client := c.three, c.client
	oneAddr, threeAddr, cpuAddr := c.oneAddr, c.threeAddr, c.cpuAddr
	phase := func(n int) (dev, pref devicesPhase) {
		t.Helper()
		dev, pref = c.phase(t, n)
		for _, p := range []devicesPhase{dev, pref} {
			if p.Failed > 0 || p.NoCapacity > 0 {
				t.Fatalf("phase %d, %s: %d calls failed, %d ErrNoCapacity: %v", n, p.Kind, p.Failed, p.NoCapacity, p.Errors)
			}
			if p.ByMember[cpuAddr] != 0 {
				t.Fatalf("phase %d, %s: %d identities on the member without a device", n, p.Kind, p.ByMember[cpuAddr])
			}
		}
		return dev, pref
	}
	dev0, _ := phase(0)
	total := dev0.ByMember[oneAddr] + dev0.ByMember[threeAddr]
	t.Logf("before the faults: 1-device member %d, 3-device member %d; per device %v", dev0.ByMember[oneAddr], dev0.ByMember[threeAddr], dev0.ByDevice)

	three.send(t, "fault cuda:sim0")
	three.expect(t, "FAULTED ", 2*time.Minute)
	client.send(t, "again")
	dev1, _ := phase(1)
	t.Logf("after one of three devices faulted: 1-device member %d, 3-device member %d; per device %v",
		dev1.ByMember[oneAddr], dev1.ByMember[threeAddr], dev1.ByDevice)
	if n := dev1.ByDevice[threeAddr+"/cuda:sim0"]; n != 0 {
		t.Fatalf("%d identities answered from the faulted device", n)
	}
	if dev1.ByMember[oneAddr] <= dev0.ByMember[oneAddr] || dev1.ByMember[threeAddr] == 0 {
		t.Fatalf("after the partial fault: %v, before %v: want the 3-device member's share to shrink, not vanish", dev1.ByMember, dev0.ByMember)
	}
	// The documented rule (docs/cluster.md, "Device faults move
	// identities"): the identities the 3-device member keeps stay where
	// their kernels were — those of the faulted device on their Go
	// fallbacks (a device-only kind too: the fault may be their handler's,
	// so none is carried to a healthy device), the others on sim1 and
	// sim2. No identity moves to the member, so none is new there.
	threeCPU := dev1.ByDevice[threeAddr+"/"+actors.PlacementCPU]
	if threeCPU == 0 || threeCPU > dev0.ByDevice[threeAddr+"/cuda:sim0"] {
		t.Fatalf("%d identities on the 3-device member's fallback, %d were on the faulted device: %v", threeCPU, dev0.ByDevice[threeAddr+"/cuda:sim0"], dev1.ByDevice)
	}
	for _, d := range []string{"cuda:sim1", "cuda:sim2"} {
		if n, was := dev1.ByDevice[threeAddr+"/"+d], dev0.ByDevice[threeAddr+"/"+d]; n > was {
			t.Fatalf("%s hosts %d identities after the fault, %d before: a kernel of the faulted device moved there: %v", d, n, was, dev1.ByDevice)
		}
	}
	if sum := threeCPU + dev1.ByDevice[threeAddr+"/cuda:sim1"] + dev1.ByDevice[threeAddr+"/cuda:sim2"]; sum != dev1.ByMember[threeAddr] {
		t.Fatalf("the 3-device member answered %d identities, %d from its fallback and healthy devices: %v", dev1.ByMember[threeAddr], sum, dev1.ByDevice)
	}

	three.send(t, "fault all")
	three.expect(t, "FAULTED ", 2*time.Minute)
	client.send(t, "again")
	dev2, pref2 := phase(2)
	t.Logf("after all three devices faulted: %v; device-preferred %v", dev2.ByDevice, pref2.ByDevice)
	if dev2.ByMember[oneAddr] != total || pref2.ByMember[oneAddr] != devPrefIDs {
		t.Fatalf("after the faults: device-only %v, device-preferred %v, want all on %s", dev2.ByMember, pref2.ByMember, oneAddr)
	}
	client.send(t, "done")
	client.stop(t)
}

// deviceCluster is the four processes of the devices scenarios: members
// with 1, 3 and no simulated devices, and the devices client, which knows
// all three.
type deviceCluster struct {
	one, three, cpu, client     *proc
	oneAddr, threeAddr, cpuAddr string
}

// startDeviceCluster starts the members one after the other, each knowing
// the ones before it, then the client.
func startDeviceCluster(t *testing.T) *deviceCluster {
	t.Helper()
	var c deviceCluster
	c.one = startProc(t, "member", nil, simDevicesEnv+"=1")
	c.oneAddr = c.one.expect(t, "ADDR ", 2*time.Minute)
	c.three = startProc(t, "member", []string{c.oneAddr}, simDevicesEnv+"=3")
	c.threeAddr = c.three.expect(t, "ADDR ", 2*time.Minute)
	c.cpu = startProc(t, "member", []string{c.oneAddr, c.threeAddr})
	c.cpuAddr = c.cpu.expect(t, "ADDR ", 2*time.Minute)
	c.client = startProc(t, "devices", []string{c.oneAddr, c.threeAddr, c.cpuAddr})
	return &c
}

// phase reads the client's two reports of phase n, the device-only kind's
// and the device-preferred kind's, and logs their slowest calls.
func (c *deviceCluster) phase(t *testing.T, n int) (dev, pref devicesPhase) {
	t.Helper()
	defer logSlowPhase(t, c.client, n, time.Now())
	for _, into := range []*devicesPhase{&dev, &pref} {
		line := c.client.expectProgressing(t, fmt.Sprintf("PHASE%d ", n), devPhaseIdle)
		if err := json.Unmarshal([]byte(line), into); err != nil {
			t.Fatal(err)
		}
		t.Logf("phase %d %s: the slowest call %v, %d over a second, %d asked again", n, into.Kind, into.Slowest.Round(time.Millisecond), into.OverASecond, into.Retried)
	}
	return dev, pref
}

// logSlowPhase logs how long phase n took, and the client's stderr (its
// slow calls) when that was over a minute.
func logSlowPhase(t *testing.T, client *proc, n int, began time.Time) {
	t.Helper()
	took := time.Since(began)
	t.Logf("phase %d took %v", n, took.Round(time.Millisecond))
	if took > time.Minute {
		t.Logf("the client's stderr:\n%s", client.stderr)
	}
}

// devPhaseIdle is how long a phase of the devices scenarios may go without
// a progress line from the client (one per devProgressEvery calls): a hang
// guard. A whole phase may take minutes on a loaded machine (every
// identity that moved is activated again, one call after the other: 300
// took 80-100 s at load 30, no call over 3 s); ten calls in a row that
// each stall towards their deadline (devCallDeadline) do reach it.
const devPhaseIdle = 3 * time.Minute
