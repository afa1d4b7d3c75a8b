package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/demo/demomsg"
)

// A kind without a JSON form names the kinds that have one, so a typo in
// `ringactor call --kind` says what would have worked.
func TestRequestJSONUnknownKindListsKinds(t *testing.T) {
	cluster.RegisterJSON[demomsg.Object, demomsg.Object]("json-kinds-test")
	_, err := cluster.RequestJSON(context.Background(), nil, "nope", "x", []byte(`{}`))
	if !errors.Is(err, cluster.ErrUnknownKind) {
		t.Fatalf("RequestJSON(nope) = %v, want ErrUnknownKind", err)
	}
	if !strings.Contains(err.Error(), "json-kinds-test") {
		t.Fatalf("RequestJSON(nope) = %v, want it to list the kinds with a JSON form", err)
	}
}
