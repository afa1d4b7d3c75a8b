package devcore

import (
	"errors"
	"math/bits"
	"unsafe"

	"github.com/ringactor/ringactor/gpu/cuda/internal/driverapi"
)

// Staging: host → device copies go through pinned buffers, since the
// driver reads the source after the asynchronous call returns and Go
// memory may not be kept by C. The buffers come from the pinned arena and
// are kept for reuse up to StagingKeep bytes; copies larger than
// StagingChunk go in chunks.
const (
	stagingMinClass = 12       // 4 KiB
	StagingChunk    = 16 << 20 // bytes per staged copy
	StagingKeep     = 64 << 20 // bytes of staging kept for reuse
)

// batch collects, during one Do, what must wait for the stream: staging
// buffers of enqueued copies and device scratch memory of enqueued
// kernels. InBatch synchronises the stream, then releases them.
type batch struct {
	staging []unsafe.Pointer
	classes []int
	scratch []driverapi.DevicePtr
}

// InBatch runs fn (inside Do) with copies and scratch memory collected,
// then synchronises the stream and releases them. It nests: an inner
// InBatch joins the outer one.
func (d *Device) InBatch(fn func() error) error {
	if d.batch != nil {
		return fn()
	}
	d.batch = &batch{}
	err := fn()
	serr := d.API.StreamSynchronize(d.Stream)
	b := d.batch
	d.batch = nil
	var errs []error
	for i, p := range b.staging {
		errs = append(errs, d.putStaging(p, b.classes[i]))
	}
	for _, p := range b.scratch {
		errs = append(errs, d.DevFree(p))
	}
	return errors.Join(err, serr, errors.Join(errs...))
}

// Scratch allocates device memory that lives until the end of the batch
// (inside InBatch).
func (d *Device) Scratch(bytes uint64) (driverapi.DevicePtr, error) {
	p, err := d.DevAlloc(bytes)
	if err != nil {
		return 0, err
	}
	d.batch.scratch = append(d.batch.scratch, p)
	return p, nil
}

func stagingClass(n int) int { return max(stagingMinClass, bits.Len(uint(n-1))) }

// getStaging returns a pinned buffer of at least n bytes and its class.
func (d *Device) getStaging(n int) (unsafe.Pointer, int, error) {
	c := stagingClass(n)
	if l := d.staging[c]; len(l) > 0 {
		p := l[len(l)-1]
		d.staging[c] = l[:len(l)-1]
		d.held -= 1 << c
		return p, c, nil
	}
	p, _, err := d.Pinned(1 << c)
	return p, c, err
}

// putStaging keeps a staging buffer for reuse, or frees it.
func (d *Device) putStaging(p unsafe.Pointer, class int) error {
	if d.closed || d.held+(1<<class) > StagingKeep {
		return d.Unpinned(p)
	}
	d.staging[class] = append(d.staging[class], p)
	d.held += 1 << class
	return nil
}

// CopyIn copies src to device memory dst on the backend's stream, through
// staging (inside Do). Inside a batch a single-chunk copy is left
// enqueued; otherwise it waits for each chunk.
func (d *Device) CopyIn(dst driverapi.DevicePtr, src []byte) error {
	for off := 0; off < len(src); off += StagingChunk {
		n := min(StagingChunk, len(src)-off)
		p, class, err := d.getStaging(n)
		if err != nil {
			return err
		}
		copy(unsafe.Slice((*byte)(p), n), src[off:off+n])
		if err := d.API.MemcpyHtoDAsync(dst+driverapi.DevicePtr(off), p, uint64(n), d.Stream); err != nil {
			return errors.Join(err, d.putStaging(p, class))
		}
		if d.batch != nil && len(src) <= StagingChunk {
			d.batch.staging = append(d.batch.staging, p)
			d.batch.classes = append(d.batch.classes, class)
			continue
		}
		if err := d.API.StreamSynchronize(d.Stream); err != nil {
			return err // the staging buffer may still be read: leak it
		}
		if err := d.putStaging(p, class); err != nil {
			return err
		}
	}
	return nil
}

// CopyOut copies device memory src to dst through staging (inside Do),
// waiting for the stream (and so for the kernels enqueued before).
func (d *Device) CopyOut(dst []byte, src driverapi.DevicePtr) error {
	for off := 0; off < len(dst); off += StagingChunk {
		n := min(StagingChunk, len(dst)-off)
		p, class, err := d.getStaging(n)
		if err != nil {
			return err
		}
		if err := d.API.MemcpyDtoHAsync(p, src+driverapi.DevicePtr(off), uint64(n), d.Stream); err != nil {
			return errors.Join(err, d.putStaging(p, class))
		}
		if err := d.API.StreamSynchronize(d.Stream); err != nil {
			return err // the copy may still write the buffer: leak it
		}
		copy(dst[off:off+n], unsafe.Slice((*byte)(p), n))
		if err := d.putStaging(p, class); err != nil {
			return err
		}
	}
	return nil
}
