//go:build !race

package cluster_test

import (
	"crypto/tls"
	"errors"
	"testing"

	"github.com/ringactor/ringactor/cluster"
	"github.com/ringactor/ringactor/internal/testutil/testcerts"
)

// TestTLSRefusalsNamed: a member or client whose TLS handshake with its
// only seed is refused learns it at once, as a *TLSError naming the seed
// and the reason, and a member does not become ready; one with the right
// certificate joins.
func TestTLSRefusalsNamed(t *testing.T) {
	ca := testcerts.NewCA(t, "cluster CA")
	other := testcerts.NewCA(t, "another CA")
	seedCert := ca.Issue(t, "seed")
	seed := startIsolatedMember(t, "tlsref", cluster.Peers(nil), kinds(), cluster.WithTLS(cluster.MutualTLS(ca.Pool(), seedCert.Cert)))
	// A seed whose certificate does not name 127.0.0.1.
	misnamed := startIsolatedMember(t, "tlsref2", cluster.Peers(nil), kinds(),
		cluster.WithTLS(cluster.MutualTLS(ca.Pool(), ca.Issue(t, "misnamed", "seed.example").Cert)))
	plain := startIsolatedMember(t, "tlsref3", cluster.Peers(nil), kinds())
	intruder := other.Issue(t, "intruder")
	for _, c := range []struct {
		name, cluster, seed string
		cfg                 *tls.Config
		client              bool
		reason              string
		byPeer              bool
	}{
		{"MemberCertFromOtherCA", "tlsref", seed.Address(), cluster.MutualTLS(other.Pool(), intruder.Cert), false, cluster.TLSUnknownAuthority, false},
		{"MemberCertFromCANotListedByPeer", "tlsref", seed.Address(), &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: ca.Pool(), Certificates: []tls.Certificate{intruder.Cert}}, false, cluster.TLSNoClientCertificate, true},
		{"ClientWithoutCertificate", "tlsref", seed.Address(), &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: ca.Pool()}, true, cluster.TLSNoClientCertificate, true},
		{"PlaintextClient", "tlsref", seed.Address(), nil, true, cluster.TLSNotTLS, true},
		{"PlaintextMember", "tlsref", seed.Address(), nil, false, cluster.TLSNotTLS, true},
		{"MemberTLSToPlaintextSeed", "tlsref3", plain.Address(), cluster.MutualTLS(ca.Pool(), ca.Issue(t, "m3").Cert), false, cluster.TLSNotTLS, false},
		{"MemberNameMismatch", "tlsref2", misnamed.Address(), cluster.MutualTLS(ca.Pool(), ca.Issue(t, "m").Cert), false, cluster.TLSNameMismatch, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testCtx(t) // a hang guard: the refusal must end the wait, not a deadline
			var opts []cluster.Option
			if c.cfg != nil {
				opts = append(opts, cluster.WithTLS(c.cfg))
			}
			var ks []*cluster.Kind
			if c.client {
				opts = append(opts, cluster.AsClient())
			} else {
				ks = kinds()
			}
			m := startIsolatedMember(t, c.cluster, cluster.Peers([]string{c.seed}), ks, opts...)
			var err error
			if c.client {
				_, err = cluster.Request[sum](ctx, m, "add", "x", pair{A: []float64{1}, B: []float64{1}})
			} else {
				err = m.WaitReady(ctx)
			}
			var te *cluster.TLSError
			if !errors.Is(err, cluster.ErrTLSRefused) || !errors.As(err, &te) {
				t.Fatalf("got %v, want a *TLSError", err)
			}
			if te.Peer != c.seed || te.Reason != c.reason || te.ByPeer != c.byPeer {
				t.Fatalf("got %q (peer %s, reason %q, by peer %v), want peer %s, reason %q, by peer %v",
					err, te.Peer, te.Reason, te.ByPeer, c.seed, c.reason, c.byPeer)
			}
			if !c.client && !errors.Is(m.Ready(), cluster.ErrNotReady) {
				t.Fatalf("Ready = %v after the refusal, want ErrNotReady", m.Ready())
			}
			t.Logf("%v", err)
		})
	}
	t.Run("Accepted", func(t *testing.T) {
		m := startIsolatedMember(t, "tlsref", cluster.Peers([]string{seed.Address()}), kinds(),
			cluster.WithTLS(cluster.MutualTLS(ca.Pool(), ca.Issue(t, "good").Cert)))
		if err := m.WaitReady(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		if err := seed.WaitMembers(testCtx(t), 2); err != nil {
			t.Fatal(err)
		}
	})
}
