package cluster

import (
	"errors"
	"net"
	"strconv"

	"github.com/asynkron/protoactor-go/actor"
)

// advertise returns the address the member advertises ("" for the bind
// address itself, which Proto.Actor then uses) and the port to bind.
//
// A wildcard bind (0.0.0.0, ::, empty host) is never advertised: no other
// node could reach it. Without WithAdvertise such a member advertises the
// host's first non-loopback address (127.0.0.1 when there is none) and
// logs which. A port of 0 (bind or advertise) is resolved first, by binding
// it once, so that the advertised port is the one the member listens on.
func advertise(cfg memberConfig, host string, port int) (string, int, error) {
	wildcard := isWildcard(host)
	if cfg.advertise == "" && !wildcard {
		return "", port, nil
	}
	ahost, aport := "", 0
	if cfg.advertise != "" {
		h, n, err := splitAddress("advertise", cfg.advertise)
		if err != nil {
			return "", 0, err
		}
		if isWildcard(h) {
			return "", 0, &AddressError{Which: "advertise", Address: cfg.advertise, Malformed: true,
				Reason: errors.New("a wildcard, which no other node can reach")}
		}
		ahost, aport = h, n
	}
	if port == 0 {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return "", 0, &AddressError{Which: "bind", Address: net.JoinHostPort(host, "0"), Reason: bindReason(err)}
		}
		port = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	if aport == 0 {
		aport = port
	}
	if ahost == "" {
		ahost = hostAddress() // Start logs it (logWildcard)
	}
	return net.JoinHostPort(ahost, strconv.Itoa(aport)), port, nil
}

// isWildcard reports whether host is empty or an unspecified address.
func isWildcard(host string) bool {
	ip := net.ParseIP(host)
	return host == "" || (ip != nil && ip.IsUnspecified())
}

// hostAddress returns the host's first non-loopback unicast address of an
// interface that is up (IPv4 first), or 127.0.0.1.
func hostAddress() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "127.0.0.1"
	}
	var v6 string
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || !ipn.IP.IsGlobalUnicast() {
				continue
			}
			if ipn.IP.To4() != nil {
				return ipn.IP.String()
			}
			if v6 == "" {
				v6 = ipn.IP.String()
			}
		}
	}
	if v6 != "" {
		return v6
	}
	return "127.0.0.1"
}

// aliases returns the addresses other than the advertised one at which
// the member's remote can be reached: the bind address and, for a wildcard
// bind, every local address on the bind port. A message addressed to one
// of them (a seed given as 127.0.0.1:PORT for a member that advertises the
// host's address) is delivered locally; Proto.Actor would otherwise send
// it over the network again, to itself.
func aliases(host string, port int) map[string]bool {
	p := strconv.Itoa(port)
	out := map[string]bool{net.JoinHostPort(host, p): true}
	if !isWildcard(host) {
		return out
	}
	for _, h := range []string{"127.0.0.1", "::1", "localhost"} {
		out[net.JoinHostPort(h, p)] = true
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				out[net.JoinHostPort(ipn.IP.String(), p)] = true
			}
		}
	}
	return out
}

// resolveAliases makes sys deliver messages addressed to one of the
// aliases locally. It must be registered before the remote starts, so
// that it is asked before Proto.Actor's remote handler.
func resolveAliases(sys *actor.ActorSystem, aliases map[string]bool) {
	sys.ProcessRegistry.RegisterAddressResolver(func(pid *actor.PID) (actor.Process, bool) {
		if !aliases[pid.Address] {
			return nil, false
		}
		return sys.ProcessRegistry.GetLocal(pid.Id)
	})
}
