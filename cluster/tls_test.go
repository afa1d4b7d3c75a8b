//go:build !race

// Built without -race like cluster_test.go: several members in one process.

package cluster_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"testing"
	"time"

	pcluster "github.com/asynkron/protoactor-go/cluster"
	ptest "github.com/asynkron/protoactor-go/cluster/clusterproviders/test"

	"github.com/ringactor/ringactor/actors"
	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/testutil/testcerts"
)

// startIsolatedMember starts a member of the cluster name with provider,
// closed at the end of the test (if the test has not closed it already).
func startIsolatedMember(t *testing.T, name string, provider pcluster.ClusterProvider, ks []*cluster.Kind, opts ...cluster.Option) *cluster.Member {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t)) // a hang guard, not a speed bound
	defer cancel()
	opts = append([]cluster.Option{cluster.WithLogger(actors.DiscardLogger())}, opts...)
	m, err := cluster.Start(ctx, name, provider, ks, opts...)
	if err != nil {
		t.Fatalf("starting member: %v", err)
	}
	t.Cleanup(func() { closeMember(t, m) })
	return m
}

// closeMember closes m within a deadline.
func closeMember(t *testing.T, m *cluster.Member) {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t)) // a hang guard, not a speed bound
	defer cancel()
	if err := m.Close(ctx); err != nil {
		t.Errorf("closing member: %v", err)
	}
}

// requestSpread sends requests for n identities of kind "add" from m and
// checks the replies.
func requestSpread(t *testing.T, ctx context.Context, m *cluster.Member, prefix string, n int) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf("%s-%d", prefix, i)
		got, err := cluster.Request[sum](ctx, m, "add", id, pair{A: []float64{float64(i)}, B: []float64{1}})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if len(got.Sum) != 1 || got.Sum[0] != float64(i+1) {
			t.Fatalf("%s: got %v, want [%d]", id, got.Sum, i+1)
		}
	}
}

func TestTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "ringactor cluster CA")
	certA := ca.Issue(t, "member-a").Cert
	issuedB := ca.Issue(t, "member-b")
	files := writeFiles(t, map[string][]byte{"ca.pem": ca.PEM, "b.pem": issuedB.CertPEM, "b-key.pem": issuedB.KeyPEM})
	cfgB, err := cluster.LoadMutualTLS(files["ca.pem"], files["b.pem"], files["b-key.pem"])
	if err != nil {
		t.Fatal(err)
	}

	agent := ptest.NewInMemAgent()
	a := startIsolatedMember(t, "tls", ptest.NewTestProvider(agent), kinds(), cluster.WithTLS(cluster.MutualTLS(ca.Pool(), certA)))
	b := startIsolatedMember(t, "tls", ptest.NewTestProvider(agent), kinds(), cluster.WithTLS(cfgB))
	ctx, cancel := context.WithCancel(testCtx(t)) // a hang guard, not a speed bound
	defer cancel()
	for _, m := range []*cluster.Member{a, b} {
		if err := m.WaitMembers(ctx, 2); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("MutualTLS", func(t *testing.T) {
		requestSpread(t, ctx, a, "from-a", 24)
		requestSpread(t, ctx, b, "from-b", 24)
		// Identities were placed on both members, so requests crossed
		// between them over TLS in both directions.
		if a.Activations() == 0 || b.Activations() == 0 {
			t.Fatalf("activations A=%d B=%d: want identities on both members", a.Activations(), b.Activations())
		}
	})

	otherCA := testcerts.NewCA(t, "another CA")
	otherCert := otherCA.Issue(t, "intruder").Cert
	intruders := []struct {
		name string
		opt  cluster.Option
	}{
		// Trusts the cluster's CA, so it accepts the members' certificates,
		// but presents one from another CA: the members reject it.
		{"CertificateFromOtherCA", cluster.WithTLS(&tls.Config{
			MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{otherCert}, RootCAs: ca.Pool(),
			ClientCAs: otherCA.Pool(), ClientAuth: tls.RequireAndVerifyClientCert,
		})},
		// Presents no certificate at all.
		{"TLSWithoutCertificate", cluster.WithTLS(&tls.Config{MinVersion: tls.VersionTLS13, RootCAs: ca.Pool()})},
		// Plaintext gRPC.
		{"NoTLS", cluster.WithLogger(actors.DiscardLogger())},
	}
	for _, in := range intruders {
		t.Run(in.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testCtx(t)) // a hang guard, not a speed bound
			defer cancel()
			// The intruder learns the members' addresses from the shared
			// provider, as a member joining the cluster would, but hosts
			// none of their kinds, so every "sum" identity is placed on A
			// or B and its requests have to reach them.
			x := startIsolatedMember(t, "tls", ptest.NewTestProvider(agent), []*cluster.Kind{cluster.NewKind("intruder", runningSum)}, in.opt)
			if err := x.WaitMembers(ctx, 3); err != nil {
				t.Fatal(err)
			}
			// The requests run together: each waits out its deadline.
			const deadline = 1500 * time.Millisecond
			ids := []string{unique("guarded"), unique("guarded"), unique("guarded")}
			errs := make(chan error, len(ids))
			for _, id := range ids {
				go func() {
					rctx, rcancel := context.WithTimeout(context.Background(), deadline)
					defer rcancel()
					start := time.Now()
					_, err := cluster.Request[total](rctx, x, "sum", id, add{N: 100})
					switch d := time.Since(start); {
					case err == nil:
						errs <- fmt.Errorf("%s: request from the intruder succeeded", id)
					case !errors.Is(err, cluster.ErrTimeout) && !errors.Is(err, cluster.ErrMemberUnavailable):
						errs <- fmt.Errorf("%s: got %w, want ErrTimeout or ErrMemberUnavailable", id, err)
					case d > deadline+30*time.Second: // a bound for a hang, not a speed: the machine may be busy
						errs <- fmt.Errorf("%s: failed after %v, deadline %v", id, d, deadline)
					default:
						errs <- nil
					}
				}()
			}
			for range ids {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			closeMember(t, x)
			// No request of the intruder reached a handler: each identity
			// starts fresh when a member of the cluster asks.
			for _, id := range ids {
				got, err := cluster.Request[total](ctx, a, "sum", id, add{N: 1})
				if err != nil {
					t.Fatalf("%s from A: %v", id, err)
				}
				if want := (total{Total: 1, Calls: 1}); got != want {
					t.Fatalf("%s: got %+v, want %+v (the intruder's request was handled)", id, got, want)
				}
			}
		})
	}
}

func TestLoadMutualTLSErrors(t *testing.T) {
	ca := testcerts.NewCA(t, "ca")
	m := ca.Issue(t, "m")
	files := writeFiles(t, map[string][]byte{"ca.pem": ca.PEM, "m.pem": m.CertPEM, "m-key.pem": m.KeyPEM, "junk.pem": []byte("not a certificate")})
	cases := []struct{ name, ca, cert, key string }{
		{"missing CA", files["ca.pem"] + ".missing", files["m.pem"], files["m-key.pem"]},
		{"CA without certificate", files["junk.pem"], files["m.pem"], files["m-key.pem"]},
		{"key of another file", files["ca.pem"], files["m.pem"], files["junk.pem"]},
	}
	for _, c := range cases {
		if _, err := cluster.LoadMutualTLS(c.ca, c.cert, c.key); !errors.Is(err, cluster.ErrTLSConfig) {
			t.Errorf("%s: got %v, want ErrTLSConfig", c.name, err)
		}
	}
	cfg, err := cluster.LoadMutualTLS(files["ca.pem"], files["m.pem"], files["m-key.pem"])
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClientAuth != tls.RequireAndVerifyClientCert || len(cfg.Certificates) != 1 || cfg.RootCAs == nil || cfg.ClientCAs == nil {
		t.Fatalf("not a mutual TLS configuration: %+v", cfg)
	}
}
