package devcore

import (
	"errors"
	"testing"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// plainStreams is a device without stream priorities: StreamCreate only
// (the rest of DeviceAPI is nil: a call panics).
type plainStreams struct {
	driverapi.DeviceAPI
	created []uint32 // flags of each StreamCreate
	next    [8]byte  // streams are addresses in here
}

func (p *plainStreams) StreamCreate(flags uint32) (driverapi.Stream, error) {
	p.created = append(p.created, flags)
	return driverapi.StreamFromRaw(unsafe.Pointer(&p.next[len(p.created)])), nil
}

// priorityStreams adds stream priorities to plainStreams.
type priorityStreams struct {
	plainStreams
	least, greatest int
	rangeErr        error
	asked           []int // priority of each StreamCreateWithPriority
}

func (p *priorityStreams) CtxGetStreamPriorityRange() (int, int, error) {
	return p.least, p.greatest, p.rangeErr
}

func (p *priorityStreams) StreamCreateWithPriority(flags uint32, priority int) (driverapi.Stream, error) {
	if flags != driverapi.StreamNonBlocking {
		return driverapi.Stream{}, errors.New("a blocking stream")
	}
	p.asked = append(p.asked, priority)
	return driverapi.StreamFromRaw(unsafe.Pointer(&p.next[7])), nil
}

// TestOneShotStreamPriority: with stream priorities the one-shot stream is
// created at the greatest and NewStream(Least) at the least, the range
// recorded; a driver without them, or whose range query fails, gets plain
// non-blocking streams and Supported false.
func TestOneShotStreamPriority(t *testing.T) {
	api := &priorityStreams{least: 0, greatest: -5}
	d := &Device{API: api}
	if err := d.openStream(); err != nil {
		t.Fatal(err)
	}
	if want := (StreamPriorities{Supported: true, Least: 0, Greatest: -5, OneShot: -5}); d.Priorities != want || d.Stream.IsDefault() {
		t.Fatalf("priorities %+v, stream %v; want %+v", d.Priorities, d.Stream, want)
	}
	if _, err := d.NewStream(d.Priorities.Least); err != nil {
		t.Fatal(err)
	}
	if len(api.asked) != 2 || api.asked[0] != -5 || api.asked[1] != 0 || len(api.created) != 0 {
		t.Fatalf("asked %v, plain %v", api.asked, api.created)
	}

	for name, api := range map[string]driverapi.DeviceAPI{
		"no priorities":      &plainStreams{},
		"range query failed": &priorityStreams{least: 0, greatest: -5, rangeErr: errors.New("CUDA_ERROR_NOT_SUPPORTED")},
	} {
		d := &Device{API: api}
		if err := d.openStream(); err != nil {
			t.Fatal(err)
		}
		if _, err := d.NewStream(d.Priorities.Least); err != nil {
			t.Fatal(err)
		}
		var plain []uint32
		switch a := api.(type) {
		case *plainStreams:
			plain = a.created
		case *priorityStreams:
			plain = a.created
			if len(a.asked) != 0 {
				t.Errorf("%s: StreamCreateWithPriority called: %v", name, a.asked)
			}
		}
		if d.Priorities != (StreamPriorities{}) || d.Stream.IsDefault() || len(plain) != 2 ||
			plain[0] != driverapi.StreamNonBlocking || plain[1] != driverapi.StreamNonBlocking {
			t.Errorf("%s: priorities %+v, plain streams %v", name, d.Priorities, plain)
		}
	}
}
