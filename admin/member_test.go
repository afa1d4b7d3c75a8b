package admin_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/admin"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/stream"
)

// getJSON decodes GET base+path into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestMemberEndpoints: with WithMember, /kernels tells a stream stage, a
// cluster activation and a plain kernel apart (Kind), /api/graphs serves
// the member runtime's graph (topology, every instance's counters, one
// fill per edge), /api/cluster the member's Status with its identities.
func TestMemberEndpoints(t *testing.T) {
	f := startFixture(t)
	f.traffic(t, 10)

	kinds := map[string]string{}
	for _, k := range f.kernels(t).Kernels {
		kinds[k.Name] = k.Kind
	}
	for name, want := range map[string]string{"square": admin.KindKernel, "echo/alice": "echo", f.g.ID() + "/enrich/1": admin.KindStream, f.g.ID() + "/store/0": admin.KindStream} {
		if kinds[name] != want {
			t.Errorf("kernel %s: kind %q, want %q (all: %v)", name, kinds[name], want, kinds)
		}
	}

	var graphs struct{ Graphs []admin.Graph }
	getJSON(t, f.base+"/api/graphs", &graphs)
	if len(graphs.Graphs) != 1 {
		t.Fatalf("graphs %+v", graphs)
	}
	g := graphs.Graphs[0]
	if g.ID != f.g.ID() || g.Phase != "started" || len(g.Nodes) != 3 || len(g.Edges) != 2 || len(g.Fill) != 2 || len(g.Stages) != 4 {
		t.Fatalf("graph %+v", g)
	}
	if g.Nodes[0].Kind != stream.NodeSource || g.Nodes[1].Parallelism != 2 || g.Nodes[2].Kind != stream.NodeSink {
		t.Errorf("nodes %+v", g.Nodes)
	}
	var in uint64
	for _, s := range g.Stages {
		if s.Stage == "enrich" {
			in += s.In
		}
	}
	if in != 10 {
		t.Errorf("enrich took %d elements, want 10: %+v", in, g.Stages)
	}
	for i, fill := range g.Fill {
		if fill < 0 || fill > 2 {
			t.Errorf("edge %d fill %v", i, fill)
		}
	}

	var st struct {
		Member bool
		cluster.Status
	}
	getJSON(t, f.base+"/api/cluster", &st)
	if !st.Member || st.Address != f.m.Address() || len(st.Members) != 1 || len(st.Members[0].Identities["echo"]) != len(identities) || len(st.Moves) != len(identities) {
		t.Errorf("cluster %+v", st)
	}
	self := st.Members[0]
	// The member's kinds are its own: not Proto.Actor's pubsub topic kind.
	if !slices.Equal(self.Kinds, []string{"echo"}) {
		t.Errorf("self kinds %q, want [echo]", self.Kinds)
	}
	// Its devices are the usable ones; the backend without a device is on
	// /api/devices only, unavailable, with its reason.
	var devs struct{ Devices []admin.Device }
	getJSON(t, f.base+"/api/devices", &devs)
	var usable []string
	seen := false
	for _, d := range devs.Devices {
		if d.Available {
			usable = append(usable, d.Name)
		}
		if d.Name == noDeviceName {
			seen = true
			if d.Available || !strings.Contains(d.Reason, noDeviceReason) {
				t.Errorf("/api/devices: %s %+v, want unavailable: %s", noDeviceName, d, noDeviceReason)
			}
		}
	}
	if !seen {
		t.Errorf("/api/devices %+v lists no %s", devs.Devices, noDeviceName)
	}
	slices.Sort(usable)
	if got := slices.Sorted(slices.Values(self.Devices)); !slices.Equal(got, usable) {
		t.Errorf("self devices %q, want the usable backends of /api/devices %q", self.Devices, usable)
	}
}
