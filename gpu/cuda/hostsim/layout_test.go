//go:build linux && cgo

package hostsim

import (
	"crypto/sha256"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/ringactor/ringactor/gpu/ring"
)

func goLayout(t reflect.Type) StructLayout {
	l := StructLayout{Size: t.Size(), Fields: map[string]FieldLayout{}}
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.Name != "_" {
			l.Fields[f.Name] = FieldLayout{Offset: f.Offset, Size: f.Type.Size()}
		}
	}
	return l
}

// TestSharedStructLayouts compares every struct of the generated header
// (its RC_ABI_LAYOUT table: the ring protocol's and the program grid's)
// with its Go type: size, and each field's offset and size.
func TestSharedStructLayouts(t *testing.T) {
	c := CLayouts()
	types := map[string]reflect.Type{
		"rc_padded_u64":    reflect.TypeFor[ring.Word](),
		"rc_control_block": reflect.TypeFor[ring.ControlBlock](),
		"rc_ring_header":   reflect.TypeFor[ring.RingHeader](),
		"rc_slot_header":   reflect.TypeFor[ring.SlotHeader](),
		"rc_grid_header":   reflect.TypeFor[ring.GridHeader](),
		"rc_mailbox_entry": reflect.TypeFor[ring.MailboxEntry](),
		"rc_doorbell_slot": reflect.TypeFor[ring.DoorbellSlot](),
		"rc_grid_words":    reflect.TypeFor[ring.GridWords](),
		"rc_ready_slot":    reflect.TypeFor[ring.ReadySlot](),
		"rc_lane_header":   reflect.TypeFor[ring.LaneHeader](),
		"rc_lane_slot":     reflect.TypeFor[ring.LaneSlot](),
		"rc_lane_set":      reflect.TypeFor[ring.LaneSet](),
	}
	for name, typ := range types {
		cl, ok := c[name]
		if !ok {
			t.Errorf("no C layout rows for %s", name)
			continue
		}
		if !reflect.DeepEqual(goLayout(typ), cl) {
			t.Errorf("%s vs %s:\nGo %+v\nC  %+v", typ, name, goLayout(typ), cl)
		}
	}
	for name := range c {
		if _, ok := types[name]; !ok {
			t.Errorf("C struct %s has no Go type in this test", name)
		}
	}
}

func TestConstants(t *testing.T) {
	want := map[string]uint64{
		"RC_TERMINATE_NONE": uint64(ring.TerminateNone), "RC_TERMINATE_DRAIN": uint64(ring.TerminateDrain), "RC_TERMINATE_NOW": uint64(ring.TerminateNow),
		"RC_TERMINATED": ring.Terminated, "RC_TERMINATED_BAD_LAUNCH": ring.TerminatedBadLaunch,
		"RC_FLAG_REPLY": uint64(ring.FlagReply), "RC_FLAG_ERROR": uint64(ring.FlagError),
		"RC_STATUS_OK": uint64(ring.StatusOK), "RC_STATUS_UNKNOWN_TYPE": uint64(ring.StatusUnknownType),
		"RC_STATUS_BAD_LENGTH": uint64(ring.StatusBadLength), "RC_STATUS_BAD_ARGS": uint64(ring.StatusBadArgs),
	}
	if got := CConstants(); !reflect.DeepEqual(got, want) {
		t.Errorf("C constants %v\nGo mirrors  %v", got, want)
	}
	if ring.GateOpen != 1 || ring.GateClosed != 0 {
		t.Error("the kernel treats any non-zero gate as open and 0 as closed")
	}
}

// stampFiles is the list go:generate in doc.go hashes, relative to gpu/cuda.
var stampFiles = []string{"abi.h", "kernels/host_shim.h", "kernels/oneshot.cu", "kernels/ring_abi_gen.h"}

// TestKernelStamp fails when the kernel sources changed since
// kernels_stamp.h was generated: cgo would otherwise test a stale build.
func TestKernelStamp(t *testing.T) {
	var list []byte
	for _, f := range stampFiles {
		b, err := os.ReadFile("../" + f)
		if err != nil {
			t.Fatal(err)
		}
		list = fmt.Appendf(list, "%x  %s\n", sha256.Sum256(b), f)
	}
	want := fmt.Sprintf("%x", sha256.Sum256(list))
	h, err := os.ReadFile("kernels_stamp.h")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`RC_KERNELS_SHA256 "([0-9a-f]{64})"`).FindSubmatch(h)
	if m == nil || string(m[1]) != want {
		t.Fatalf("kernels_stamp.h is stale: run go generate ./gpu/cuda/hostsim (want %s)", want)
	}
	if got := KernelsStamp(); got != want {
		t.Fatalf("compiled with stamp %s, sources are %s", got, want)
	}
	if !slices.IsSorted(stampFiles) {
		t.Fatal("keep stampFiles sorted like the go:generate line")
	}
}
