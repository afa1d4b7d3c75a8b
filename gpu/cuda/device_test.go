//go:build linux && cgo

package cuda

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// storePTX is a minimal kernel, written by hand so the test needs no nvcc:
// *out = val.
const storePTX = `
.version 7.0
.target sm_70
.address_size 64

.visible .entry rc_store(
	.param .u64 rc_store_param_0,
	.param .u32 rc_store_param_1
)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<3>;

	ld.param.u64 %rd1, [rc_store_param_0];
	ld.param.u32 %r1, [rc_store_param_1];
	cvta.to.global.u64 %rd2, %rd1;
	st.global.u32 [%rd2], %r1;
	ret;
}
`

// TestContextOnDevice runs the driver chain the backend relies on: primary
// context on a locked thread, mapped pinned memory, PTX JIT with logs, a
// launch writing into mapped host memory, streams and events. It needs a
// CUDA device and skips without one.
func TestContextOnDevice(t *testing.T) {
	l, _ := installedDriver(t)
	r := l.probe()
	if len(r.Devices) == 0 {
		t.Skipf("needs a CUDA device: %v", r.Err)
	}
	c, err := l.newContext(0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	d := c.Driver()
	const val = 0xC0FFEE
	err = c.Do(func() error {
		free, total, err := d.MemGetInfo()
		if err != nil {
			return err
		}
		t.Logf("device memory: %d MiB free of %d MiB", free>>20, total>>20)

		dp, err := d.MemAlloc(1 << 20)
		if err != nil {
			return err
		}
		if err := d.MemFree(dp); err != nil {
			return err
		}

		host, err := d.MemHostAlloc(4096, MemHostAllocPortable|MemHostAllocDeviceMap)
		if err != nil {
			return err
		}
		defer func() { _ = d.MemFreeHost(host) }()
		word := (*uint32)(host)
		*word = 0
		mapped, err := d.MemHostGetDevicePointer(host, 0)
		if err != nil {
			return err
		}

		mod, log, err := d.ModuleLoadData([]byte(storePTX), true)
		t.Logf("JIT info log: %s", log.Info)
		if err != nil {
			return errors.Join(err, errors.New(log.Error))
		}
		defer func() { _ = d.ModuleUnload(mod) }()
		fn, err := d.ModuleGetFunction(mod, "rc_store")
		if err != nil {
			return err
		}

		s, err := d.StreamCreate(StreamNonBlocking)
		if err != nil {
			return err
		}
		defer func() { _ = d.StreamDestroy(s) }()
		start, err := d.EventCreate(EventDefault)
		if err != nil {
			return err
		}
		defer func() { _ = d.EventDestroy(start) }()
		end, err := d.EventCreate(EventDefault)
		if err != nil {
			return err
		}
		defer func() { _ = d.EventDestroy(end) }()

		if err := d.EventRecord(start, s); err != nil {
			return err
		}
		if err := d.LaunchKernel(fn, Dim3{X: 1}, Dim3{X: 1}, 0, s, ArgPtr(mapped), ArgU32(val)); err != nil {
			return err
		}
		if err := d.EventRecord(end, s); err != nil {
			return err
		}
		if err := d.EventSynchronize(end); err != nil {
			return err
		}
		ms, err := d.EventElapsedTime(start, end)
		if err != nil {
			return err
		}
		t.Logf("launch: %.3f ms", ms)
		if got := atomic.LoadUint32(word); got != val {
			t.Errorf("mapped word = %#x, want %#x", got, val)
		}

		// A bad PTX image fails with the JIT's error log.
		_, log, err = d.ModuleLoadData([]byte(".version 7.0\n.target sm_70\n.address_size 64\nnot ptx"), false)
		var de *DriverError
		if !errors.As(err, &de) || log.Error == "" {
			t.Errorf("bad PTX: err %v, error log %q", err, log.Error)
		} else {
			t.Logf("bad PTX: %v; log: %s", err, strings.TrimSpace(log.Error))
		}
		return d.CtxSynchronize()
	})
	if err != nil {
		t.Fatal(err)
	}
}
