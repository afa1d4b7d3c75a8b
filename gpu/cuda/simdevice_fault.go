//go:build linux && cgo

package cuda

var _ launchFaultReporter = (*fakeDevice)(nil)

// launchFault reports the sticky error of stream s (a launch that failed,
// e.g. a kernel that trapped) without clearing it.
func (f *fakeDevice) launchFault(s Stream) error {
	fs, err := f.stream(s)
	if err != nil || fs == nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.err
}
