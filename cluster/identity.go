package cluster

import (
	"errors"
	"fmt"
)

// ProtocolVersion is the version of ringactor's cluster protocol: what
// members and clients exchange in greetings, placement and hand-off
// messages and requests. Nodes of different versions refuse each other.
// Version 2 added the cluster name to every message, placement by the
// owner's own topology and the state hand-off; version 3 sends requests to
// activations without a Proto.Actor sender, their replies going to the
// ReplyTo of the request's envelope (a version 2 member would not answer);
// version 4 adds the request's idempotency key (a version 3 member would
// apply a retried request again) and the state store's error kinds.
const ProtocolVersion = 4

// ErrClusterMismatch: a node of another cluster (another name, or another
// ProtocolVersion) was reached. The error names both clusters.
var ErrClusterMismatch = errors.New("ringactor/cluster: cluster mismatch")

// wireKindClusterMismatch is the WireError kind of a request refused for
// coming from another cluster; wireKindMoved the kind of a request that
// reached an activation that is moving (it was not handled: the client
// looks the identity up again and resends it).
const (
	wireKindClusterMismatch = "cluster_mismatch"
	wireKindMoved           = "moved"
	// wireKindGone is the WireError kind of a request that became a dead
	// letter (the process it was sent to is gone, or it could not be
	// sent): it was not handled, and the client looks the identity up
	// again.
	wireKindGone = "gone"
	// placementRetry is the PlacementReply error kind of a transient
	// refusal: the member is not ready, fenced, leaving, or the identity's
	// hand-off is pending.
	placementRetry = "retry"
)

// sameCluster reports whether a message from the cluster theirs speaking
// protocol proto may be served by a node of the cluster ours.
func sameCluster(ours, theirs string, proto uint32) bool {
	return theirs == ours && proto == ProtocolVersion
}

// mismatchError returns the error naming both clusters: the local node's
// (ours) and the one of the node at addr (theirs, speaking proto).
func mismatchError(ours, theirs string, proto uint32, addr string) error {
	return fmt.Errorf("%w: this node is in cluster %q (protocol %d), the node at %s is in cluster %q (protocol %d)",
		ErrClusterMismatch, ours, ProtocolVersion, addr, theirs, proto)
}
