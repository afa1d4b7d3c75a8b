package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// ErrTLSConfig: a TLS configuration could not be built (unreadable or
// invalid certificate, key or CA file).
var ErrTLSConfig = errors.New("ringactor/cluster: bad TLS configuration")

// WithTLS secures the member's traffic with the other members (Proto.Actor
// remoting over gRPC) with cfg, in both directions: the member's gRPC server
// presents cfg's certificate and, when cfg.ClientAuth asks for it, verifies
// the calling member's certificate against cfg.ClientCAs; its connections to
// other members verify their certificates against cfg.RootCAs (by the IP or
// host name of the member's address, unless cfg.ServerName is set) and
// present cfg's certificate as client certificate.
//
// Every member of a cluster must use TLS, with certificates the others
// trust: a member without TLS, or whose certificate the others do not trust,
// cannot reach them (its requests fail with ErrTimeout), and the others
// cannot reach it. (The gRPC connections of such failed attempts are closed
// by closeFailedConnects, which Start applies to every member.) [MutualTLS] and [LoadMutualTLS] build a configuration for
// mutual TLS from a CA and the member's certificate, which is what keeps a
// member without a certificate from the cluster's CA from calling in.
//
// cfg is cloned; a nil cfg leaves the member on plaintext gRPC (Proto.Actor's
// default).
func WithTLS(cfg *tls.Config) Option {
	return func(c *memberConfig) {
		if cfg == nil {
			return
		}
		c.tls = cfg.Clone()
		server := credentials.NewTLS(cfg.Clone())
		client := credentials.NewTLS(cfg.Clone())
		c.remoteOptions = append(c.remoteOptions, func(rc *remote.Config) {
			// Appended, not set with remote.WithServerOptions and
			// remote.WithDialOptions, which replace the whole lists: the
			// default dial options hold grpc.WithInsecure(), and a later
			// grpc.WithTransportCredentials overrides it, as the last
			// credentials option wins.
			rc.ServerOptions = append(rc.ServerOptions, grpc.Creds(server))
			rc.DialOptions = append(rc.DialOptions, grpc.WithTransportCredentials(client))
		})
	}
}

// MutualTLS returns a configuration for WithTLS with which a member presents
// cert (as server and as client) and accepts only peers whose certificates
// chain to a CA in ca, in both directions. The certificate should be valid
// for both server and client authentication (extended key usages serverAuth
// and clientAuth) and name the member's advertised host (an IP SAN for an IP
// address). It requires TLS 1.3.
func MutualTLS(ca *x509.CertPool, cert tls.Certificate) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		RootCAs:      ca,
		ClientCAs:    ca,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}
}

// LoadMutualTLS is MutualTLS with the CA certificates and the member's
// certificate and key read from PEM files. Its errors match ErrTLSConfig.
func LoadMutualTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("%w: CA file: %w", ErrTLSConfig, err)
	}
	ca := x509.NewCertPool()
	if !ca.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrTLSConfig, caFile)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: member certificate: %w", ErrTLSConfig, err)
	}
	return MutualTLS(ca, cert), nil
}
