package cluster

import (
	"fmt"
	"math"
	"testing"
)

// devNodes builds a view of members at addresses "m0:1", "m1:1", … with
// the given device counts, all listing kind.
func devNodes(kind string, devices ...int) view {
	var v view
	for i, d := range devices {
		v.nodes = append(v.nodes, nodeInfo{addr: fmt.Sprintf("m%d:1", i), devices: d, kinds: map[string]bool{kind: true}})
	}
	v.reqs = map[string]Requirement{kind: DeviceOnly}
	return v
}

// owners places n identities of kind in v.
func owners(v view, kind string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = v.placeDevice(v.reqs[kind], kind, fmt.Sprintf("id-%d", i)).addr
	}
	return out
}

// band is the binomial mean ± 6 standard deviations of n draws with p.
func band(n int, p float64) (lo, hi float64) {
	sd := math.Sqrt(float64(n) * p * (1 - p))
	return float64(n)*p - 6*sd, float64(n)*p + 6*sd
}

// TestWeightedRendezvousSplit: 1,000 identities of a device-only kind on
// members with 1 and 3 devices and one without: none on the member
// without, the others about 1:3 (the hash is fixed, so the split is the
// same at every run; the bound is the binomial's ±6σ all the same).
func TestWeightedRendezvousSplit(t *testing.T) {
	const n = 1000
	v := devNodes("dev", 1, 3, 0)
	count := map[string]int{}
	for _, o := range owners(v, "dev", n) {
		count[o]++
	}
	if count["m2:1"] != 0 || count["m0:1"]+count["m1:1"] != n {
		t.Fatalf("split %v: the member without a device got identities", count)
	}
	lo, hi := band(n, 0.75)
	if c := float64(count["m1:1"]); c < lo || c > hi {
		t.Fatalf("3-device member owns %v of %d, want %.0f..%.0f", c, n, lo, hi)
	}
	t.Logf("split of %d identities, devices 1:3:0 → %d : %d : %d (ideal 250 : 750 : 0)", n, count["m0:1"], count["m1:1"], count["m2:1"])
}

// TestWeightedRendezvousMovement: a member that joins takes only
// identities to itself, about its share; one that leaves gives away only
// its own, each to another capable member.
func TestWeightedRendezvousMovement(t *testing.T) {
	const n = 1000
	before := owners(devNodes("dev", 1, 3, 0), "dev", n)
	// m3 joins with 2 devices: ideal share 2/6.
	joined := devNodes("dev", 1, 3, 0, 2)
	after := owners(joined, "dev", n)
	moved := 0
	for i := range before {
		if before[i] != after[i] {
			moved++
			if after[i] != "m3:1" {
				t.Fatalf("identity %d moved from %s to %s, not to the member that joined", i, before[i], after[i])
			}
		}
	}
	lo, hi := band(n, 2.0/6)
	if float64(moved) < lo || float64(moved) > hi {
		t.Fatalf("join moved %d of %d, want %.0f..%.0f", moved, n, lo, hi)
	}
	t.Logf("join of a 2-device member to devices 1:3: moved %d of %d (%.1f%%; ideal share %.1f%%)", moved, n, 100*float64(moved)/n, 100*2.0/6)
	// m1 (3 devices) leaves: exactly its identities move, none to m2.
	left := joined
	left.nodes = append(left.nodes[:1:1], left.nodes[2:]...)
	gone := owners(left, "dev", n)
	moved, had := 0, 0
	for i := range after {
		if after[i] == "m1:1" {
			had++
		}
		if after[i] != gone[i] {
			moved++
			if after[i] != "m1:1" {
				t.Fatalf("identity %d moved from %s though only m1 left", i, after[i])
			}
			if gone[i] == "m2:1" {
				t.Fatalf("identity %d moved to the member without a device", i)
			}
		}
	}
	if moved != had {
		t.Fatalf("leave moved %d, the member had %d", moved, had)
	}
	t.Logf("leave of the 3-device member (devices 1:3:2): moved %d of %d (%.1f%%; ideal share %.1f%%)", moved, n, 100*float64(moved)/n, 100*3.0/6)
}

// TestRequirementFallbacks: without a member with a device, a
// device-preferred kind goes to members without one (a fallback) and a
// device-only kind has no capacity; members that do not list the kind
// never host it.
func TestRequirementFallbacks(t *testing.T) {
	v := devNodes("k", 0, 0)
	v.nodes = append(v.nodes, nodeInfo{addr: "other:1", devices: 4, kinds: map[string]bool{"else": true}})
	if p := v.placeDevice(DeviceOnly, "k", "a"); p.addr != "" || !p.noCapacity {
		t.Fatalf("device-only without a device member: %+v", p)
	}
	p := v.placeDevice(DevicePreferred, "k", "a")
	if p.addr == "" || p.addr == "other:1" || !p.fallback || p.noCapacity {
		t.Fatalf("device-preferred without a device member: %+v", p)
	}
	v.nodes[1].devices = 1
	if p := v.placeDevice(DevicePreferred, "k", "a"); p.addr != "m1:1" || p.fallback {
		t.Fatalf("device-preferred with one device member: %+v", p)
	}
	if p := (view{}).placeDevice(DeviceOnly, "k", "a"); p.noCapacity || p.addr != "" {
		t.Fatalf("nobody lists the kind: %+v, want no owner (an unknown kind)", p)
	}
}

// TestNodeAdRoundTrip: the advertisement survives its pseudo-kind name,
// which has no comma (the Kubernetes annotation joins kinds with commas).
func TestNodeAdRoundTrip(t *testing.T) {
	a := nodeAd{devices: []deviceAd{{Name: "cuda:sim0", ComputeCapability: "9.0", MemoryBytes: 1 << 30, FreeMailboxes: 1000},
		{Name: "cuda:sim1", ComputeCapability: "8.0", MemoryBytes: 2 << 30, FreeMailboxes: 7}},
		reqs: map[string]Requirement{"devscale": DeviceOnly, "a,b": DevicePreferred}}
	name := a.encode()
	for _, c := range name {
		if c == ',' {
			t.Fatalf("advertisement %q has a comma", name)
		}
	}
	got, ok := parseNodeAd([]string{"plain", name})
	if !ok || len(got.devices) != 2 || got.devices[1] != a.devices[1] || got.reqs["devscale"] != DeviceOnly || got.reqs["a,b"] != DevicePreferred {
		t.Fatalf("parsed %+v (%v) from %q", got, ok, name)
	}
	if k := userKinds([]string{"plain", name}); len(k) != 1 || k[0] != "plain" {
		t.Fatalf("userKinds %v", k)
	}
}
