package multiproc

import (
	"testing"

	"github.com/ringactor/ringactor/internal/testutil/testproc"
)

// startEtcd starts a single-node etcd (testproc.StartEtcd) and returns its
// client endpoint; the test fails when there is no etcd binary (.ci/run
// installs etcd-server).
func startEtcd(t *testing.T) string {
	t.Helper()
	return testproc.StartEtcd(t, "ringactor-multiproc")
}
