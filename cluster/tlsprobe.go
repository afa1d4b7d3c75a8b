package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// ErrTLSRefused matches every *TLSError: a TLS handshake with another node
// failed, so the two cannot talk.
var ErrTLSRefused = errors.New("ringactor/cluster: TLS handshake refused")

// TLS refusal reasons: the Reason of a *TLSError.
const (
	// TLSUnknownAuthority: a certificate is not signed by a CA the other
	// side trusts.
	TLSUnknownAuthority = "unknown authority"
	// TLSNoClientCertificate: the peer requires a client certificate and
	// this node sent none.
	TLSNoClientCertificate = "no client certificate"
	// TLSNameMismatch: the peer's certificate is not valid for the host
	// this node dialled.
	TLSNameMismatch = "name mismatch"
	// TLSCertificateInvalid: a certificate is expired, not yet valid or
	// not valid for its use.
	TLSCertificateInvalid = "certificate invalid"
	// TLSNotTLS: one side speaks TLS and the other plaintext.
	TLSNotTLS = "not TLS"
	// TLSHandshakeFailed: any other handshake failure.
	TLSHandshakeFailed = "handshake failed"
)

// TLSError is a TLS handshake with the node at Peer that failed: Reason is
// one of the TLS* reasons, ByPeer says the peer refused this node (its
// certificate, or its lack of one) rather than this node the peer's, and
// Err is the crypto/tls or crypto/x509 error. It matches ErrTLSRefused and
// unwraps to Err.
type TLSError struct {
	Peer   string
	Reason string
	ByPeer bool
	Err    error
}

// Error implements error: "ringactor/cluster: TLS handshake with ADDR
// refused: REASON (what it means): ERR".
func (e *TLSError) Error() string {
	var why string
	switch {
	case e.Reason == TLSUnknownAuthority && e.ByPeer:
		why = "the peer does not trust this node's certificate (signed by another CA?)"
	case e.Reason == TLSUnknownAuthority:
		why = "this node does not trust the peer's certificate (signed by another CA?)"
	case e.Reason == TLSNoClientCertificate:
		why = "the peer requires a client certificate and this node sent none it accepts: none, or one from a CA the peer does not list"
	case e.Reason == TLSNameMismatch:
		why = "the peer's certificate does not name the address dialled"
	case e.Reason == TLSCertificateInvalid && e.ByPeer:
		why = "the peer refused this node's certificate"
	case e.Reason == TLSCertificateInvalid:
		why = "the peer's certificate is not valid now or for this use"
	case e.Reason == TLSNotTLS && e.ByPeer:
		why = "the peer requires TLS and this node has none configured"
	case e.Reason == TLSNotTLS:
		why = "the peer does not speak TLS (a member without TLS?)"
	default:
		why = "see the error"
	}
	return fmt.Sprintf("ringactor/cluster: TLS handshake with %s refused: %s (%s): %v", e.Peer, e.Reason, why, e.Err)
}

// Unwrap returns Err.
func (e *TLSError) Unwrap() error { return e.Err }

// Is matches ErrTLSRefused.
func (e *TLSError) Is(target error) bool { return target == ErrTLSRefused }

// probeTLS runs a TLS handshake with cfg over conn, a fresh connection to
// addr (closed on return), and reads the first bytes of the peer's answer,
// within timeout: in TLS 1.3 a server refuses a client's certificate only
// after the client's handshake has completed, and the client learns it at
// its first read. It returns a *TLSError when the handshake was refused,
// nil when it went through or no conclusion could be drawn (a timeout).
func probeTLS(conn net.Conn, addr string, cfg *tls.Config, timeout time.Duration) error {
	defer conn.Close()
	c := cfg.Clone()
	if c.ServerName == "" {
		host, _, _ := net.SplitHostPort(addr)
		c.ServerName = host
	}
	c.NextProtos = []string{"h2"} // what gRPC negotiates
	_ = conn.SetDeadline(time.Now().Add(timeout))
	tc := tls.Client(conn, c)
	err := tc.Handshake()
	if err == nil {
		var b [1]byte
		_, err = tc.Read(b[:])
	}
	if err == nil {
		return nil
	}
	return classifyTLS(addr, err)
}

// probePlaintext finds out whether the node at addr, which this plaintext
// node is about to greet over conn (closed on return), requires TLS: it
// offers a TLS handshake, which a plaintext peer drops at its first bytes
// and a TLS peer answers. It returns a *TLSError (TLSNotTLS, by the peer)
// when the peer answered, nil otherwise.
func probePlaintext(conn net.Conn, addr string, timeout time.Duration) error {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	// Only whether the peer speaks TLS matters here; nothing is sent
	// over this connection after the handshake.
	tc := tls.Client(conn, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12}) //nolint:gosec // a probe, no data
	if err := tc.Handshake(); err != nil {
		return nil
	}
	return &TLSError{Peer: addr, Reason: TLSNotTLS, ByPeer: true,
		Err: errors.New("the peer answered a TLS handshake; this node has no TLS configured (WithTLS)")}
}

// classifyTLS returns the *TLSError that err, from a TLS client handshake
// or its first read, is, or nil when err is no refusal (a timeout, a
// connection closed without an alert).
func classifyTLS(addr string, err error) error {
	refused := func(reason string, byPeer bool) error {
		return &TLSError{Peer: addr, Reason: reason, ByPeer: byPeer, Err: err}
	}
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		header   tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &unknown):
		return refused(TLSUnknownAuthority, false)
	case errors.As(err, &hostname):
		return refused(TLSNameMismatch, false)
	case errors.As(err, &invalid):
		return refused(TLSCertificateInvalid, false)
	case errors.As(err, &header):
		return refused(TLSNotTLS, false)
	}
	msg := err.Error()
	i := strings.Index(msg, "remote error: tls: ")
	if i < 0 {
		return nil
	}
	switch alert := msg[i+len("remote error: tls: "):]; {
	case strings.HasPrefix(alert, "unknown certificate authority"), strings.HasPrefix(alert, "bad certificate"):
		return refused(TLSUnknownAuthority, true)
	case strings.HasPrefix(alert, "certificate required"):
		return refused(TLSNoClientCertificate, true)
	case strings.Contains(alert, "certificate"):
		return refused(TLSCertificateInvalid, true)
	}
	return refused(TLSHandshakeFailed, true)
}
