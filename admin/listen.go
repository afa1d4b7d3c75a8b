package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ErrBadAddress is returned by Listen and ListenAddress for an address that
// is neither PORT nor HOST:PORT.
var ErrBadAddress = errors.New("ringactor/admin: bad address")

// ListenAddress normalises an admin address: a bare port ("9090", ":9090")
// means loopback (127.0.0.1:9090); HOST:PORT is kept. A wildcard host must
// be written out (0.0.0.0:9090) to listen on every interface.
func ListenAddress(addr string) (string, error) {
	if p, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", strconv.FormatUint(p, 10)), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %w", ErrBadAddress, addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("%w: %q: port %q is not a number from 0 to 65535", ErrBadAddress, addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Server is a running admin endpoint.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error

	closeOnce sync.Once
	closeErr  error
}

// Listen serves h on addr (normalised by ListenAddress) until Close.
func Listen(ctx context.Context, addr string, h http.Handler) (*Server, error) {
	a, err := ListenAddress(addr)
	if err != nil {
		return nil, err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", a)
	if err != nil {
		return nil, fmt.Errorf("ringactor/admin: listening on %s: %w", a, err)
	}
	s := &Server{
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute},
		ln:  ln, done: make(chan error, 1),
	}
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// Addr returns the address the server listens on (HOST:PORT).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server: it stops accepting, lets requests in progress
// finish within ctx, then closes what remains. Later calls return the
// first call's result.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		err := s.srv.Shutdown(ctx)
		if err != nil {
			err = errors.Join(err, s.srv.Close())
		}
		s.closeErr = errors.Join(err, <-s.done)
	})
	return s.closeErr
}
