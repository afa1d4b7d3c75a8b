package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrBadAddress matches every *AddressError: an address of a member or
// client (where it binds, what it advertises, a seed) that cannot work.
var ErrBadAddress = errors.New("ringactor/cluster: bad address")

// AddressError is an address that cannot work: not HOST:PORT, a port out of
// range, a host that is neither an IP address nor a valid host name, a
// wildcard where other nodes must dial it (those are Malformed: they can
// never work), or a well-formed address that cannot be used now (a host name
// that does not resolve, a port another process holds). It matches
// ErrBadAddress and unwraps to Reason.
type AddressError struct {
	// Which names what the address is for: "bind" (WithAddress),
	// "advertise" (WithAdvertise), "seed" (a peer address), or the
	// command-line flag a caller gave (CheckHost's callers set it).
	Which string
	// Address is the address (or host) as given.
	Address string
	// Reason is why it cannot work.
	Reason error
	// Malformed says the address can never work as written (a usage
	// mistake), as opposed to one that may work elsewhere or later (a name
	// that does not resolve here, a port in use).
	Malformed bool
}

// Error implements error: "ringactor/cluster: bind address "x": reason".
func (e *AddressError) Error() string {
	which := e.Which
	if which == "" {
		which = "host"
	} else {
		which += " address"
	}
	return fmt.Sprintf("ringactor/cluster: %s %q: %v", which, e.Address, e.Reason)
}

// Unwrap returns Reason.
func (e *AddressError) Unwrap() error { return e.Reason }

// Is matches ErrBadAddress.
func (e *AddressError) Is(target error) bool { return target == ErrBadAddress }

// hostLookupTimeout bounds one host name lookup of CheckHost when ctx has
// no sooner deadline.
const hostLookupTimeout = 10 * time.Second

// CheckHost reports whether host can be the host of a member's address: an
// IP address (IPv6 without brackets, a zone allowed), or a host name of
// valid syntax that resolves (ctx bounds the lookup, at most ten seconds).
// wildcard says whether a wildcard host (empty, 0.0.0.0, ::) is acceptable,
// as it is for a bind address; an address other nodes dial (advertised, a
// seed) must not be one. Its errors are *AddressError (Which empty,
// Address the host), matching ErrBadAddress: Malformed for a host that can
// never work (a dotted number that is not an IPv4 address such as
// 256.0.0.1, a character no host name has, a refused wildcard), not for a
// name that does not resolve.
func CheckHost(ctx context.Context, host string, wildcard bool) error {
	bad := func(malformed bool, format string, args ...any) error {
		return &AddressError{Address: host, Reason: fmt.Errorf(format, args...), Malformed: malformed}
	}
	if isWildcard(host) {
		if !wildcard {
			return bad(true, "a wildcard address cannot be reached by other nodes; give a host's address")
		}
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	if err := hostNameSyntax(host); err != nil {
		return bad(true, "%w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, hostLookupTimeout)
		defer cancel()
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil {
		return bad(false, "does not resolve: %w", err)
	}
	if len(addrs) == 0 {
		return bad(false, "does not resolve: no address")
	}
	return nil
}

// hostNameSyntax reports whether host is a valid host name: labels of
// letters, digits, '-' and '_' (not starting or ending with '-'), 1 to 63
// bytes each, 253 at most in all, a trailing dot allowed; and not all
// digits and dots (what is left of a bad IPv4 address such as 256.0.0.1).
func hostNameSyntax(host string) error {
	name := strings.TrimSuffix(host, ".")
	if name == "" || len(name) > 253 {
		return errors.New("not a valid host name (empty or longer than 253 bytes)")
	}
	numeric := true
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return errors.New("not a valid host name (an empty label or one longer than 63 bytes)")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("not a valid host name (label %q starts or ends with '-')", label)
		}
		for _, r := range label {
			switch {
			case r >= '0' && r <= '9':
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '-', r == '_':
				numeric = false
			default:
				return fmt.Errorf("not a valid host name (%q is not allowed in one)", r)
			}
		}
	}
	if numeric {
		return errors.New("not a valid IP address")
	}
	return nil
}

// splitAddress splits addr (what which names) into host and port,
// checking the port: an *AddressError (Malformed) when it is not HOST:PORT
// with a port from 0 to 65535.
func splitAddress(which, addr string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, &AddressError{Which: which, Address: addr, Reason: fmt.Errorf("not HOST:PORT: %w", err), Malformed: true}
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return "", 0, &AddressError{Which: which, Address: addr, Reason: fmt.Errorf("port %q is not a number from 0 to 65535", portStr), Malformed: true}
	}
	return host, int(port), nil
}

// checkAddress checks addr (what which names) with splitAddress and
// CheckHost; its errors are *AddressError with Which and the whole
// address.
func checkAddress(ctx context.Context, which, addr string, wildcard bool) (string, int, error) {
	host, port, err := splitAddress(which, addr)
	if err != nil {
		return "", 0, err
	}
	if err := CheckHost(ctx, host, wildcard); err != nil {
		ae := err.(*AddressError)
		ae.Which, ae.Address = which, addr
		return "", 0, ae
	}
	return host, port, nil
}

// checkBindable reports whether host:port can be listened on now (a port
// of 0 always can, when the host is local): an *AddressError (not
// Malformed) naming the bind address when the port is held by another
// process or the host is not an address of this machine.
func checkBindable(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return &AddressError{Which: "bind", Address: addr, Reason: bindReason(err)}
	}
	return l.Close()
}

// bindReason names why a listen failed in the words an operator looks for
// (err may be only the text of Proto.Actor's listen error).
func bindReason(err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE), strings.Contains(err.Error(), "address already in use"):
		return fmt.Errorf("port in use (another process listens there): %w", err)
	case errors.Is(err, syscall.EADDRNOTAVAIL), strings.Contains(err.Error(), "assign requested address"):
		return fmt.Errorf("not an address of this host: %w", err)
	}
	return err
}

// checkSeeds checks the provider's seeds before the member starts: each must
// be HOST:PORT with a host other nodes can be dialled at (not a wildcard)
// and of valid syntax, and at least one must resolve. A malformed seed is a
// Malformed *AddressError (Which "seed"); when no seed resolves, the error
// names the first one (not Malformed); a seed that does not resolve while
// another does is only logged (a name may resolve later). The lookups run
// together, bounded by ctx and CheckHost's own bound.
func checkSeeds(ctx context.Context, logger *slog.Logger, seeds []string) error {
	if len(seeds) == 0 {
		return nil
	}
	for _, s := range seeds {
		host, _, err := splitAddress("seed", s)
		if err != nil {
			return err
		}
		if err := CheckHost(ctx, host, false); err != nil && err.(*AddressError).Malformed {
			ae := err.(*AddressError)
			ae.Which, ae.Address = "seed", s
			return ae
		}
	}
	errs := make([]error, len(seeds))
	var wg sync.WaitGroup
	for i, s := range seeds {
		wg.Go(func() {
			host, _, _ := net.SplitHostPort(s)
			if err := CheckHost(ctx, host, false); err != nil {
				ae := err.(*AddressError)
				ae.Which, ae.Address = "seed", s
				errs[i] = ae
			}
		})
	}
	wg.Wait()
	var bad []error
	for _, err := range errs {
		if err != nil {
			bad = append(bad, err)
		}
	}
	if len(bad) == len(seeds) {
		if len(bad) == 1 {
			return bad[0]
		}
		first := bad[0].(*AddressError)
		return &AddressError{Which: "seed", Address: first.Address,
			Reason: fmt.Errorf("%w (and no other seed resolves either)", first.Reason)}
	}
	for _, err := range bad {
		if logger != nil {
			logger.Warn("ringactor/cluster: a seed does not resolve; going on with the others", slog.Any("error", err))
		}
	}
	return nil
}
