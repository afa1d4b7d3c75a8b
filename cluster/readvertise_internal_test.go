package cluster

import "testing"

// TestCapacityBuckets: the thresholds a member re-advertises at.
func TestCapacityBuckets(t *testing.T) {
	for _, c := range []struct{ free, capacity, want int }{
		{0, 0, 4}, {0, 1024, 0}, {50, 1024, 1}, {102, 1024, 1}, {103, 1024, 2},
		{255, 1024, 2}, {256, 1024, 3}, {511, 1024, 3}, {512, 1024, 4}, {1024, 1024, 4},
	} {
		if got := capacityBucket(deviceAd{FreeMailboxes: c.free}, c.capacity); got != c.want {
			t.Errorf("%d free of %d: bucket %d, want %d", c.free, c.capacity, got, c.want)
		}
	}
}

// TestWorthAdvertising: a lost device is advertised at the next check; a
// capacity bucket that moved only once capacityAdvertiseChecks checks
// have passed since the last capacity advertisement; nothing else.
func TestWorthAdvertising(t *testing.T) {
	two := deviceState{names: []string{"cuda:sim0", "cuda:sim1"}, buckets: []int{4, 4}}
	fuller := deviceState{names: two.names, buckets: []int{3, 4}}
	one := deviceState{names: []string{"cuda:sim1"}, buckets: []int{4}}
	for _, c := range []struct {
		name          string
		last, now     deviceState
		since         int
		publish, capa bool
	}{
		{"unchanged", two, two, 100, false, false},
		{"device lost", two, one, 0, true, false},
		{"last device lost", one, deviceState{}, 0, true, false},
		{"capacity crossed, too soon", two, fuller, capacityAdvertiseChecks - 1, false, false},
		{"capacity crossed", two, fuller, capacityAdvertiseChecks, true, true},
	} {
		p, capa := worthAdvertising(c.last, c.now, c.since)
		if p != c.publish || capa != c.capa {
			t.Errorf("%s: publish %v capacity-only %v, want %v %v", c.name, p, capa, c.publish, c.capa)
		}
	}
}

// TestAdOfIncarnation: a member that rejoined as a new incarnation
// ("ID.2") keeps its latest advertisement, kept by its system id.
func TestAdOfIncarnation(t *testing.T) {
	ads := map[string]string{"abc": "ad-abc"}
	for id, want := range map[string]string{"abc": "ad-abc", "abc.2": "ad-abc", "abd": "", "x.abc": ""} {
		if got, _ := adOf(ads, id); got != want {
			t.Errorf("adOf(%q) = %q, want %q", id, got, want)
		}
	}
}
