package cluster

import (
	"context"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
)

// remoteReceiveMethod is the gRPC stream over which Proto.Actor's endpoint
// writer connects to another member.
const remoteReceiveMethod = "/remote.Remoting/Receive"

// closeFailedConnects makes the member close the gRPC connection of a failed
// connection attempt to another member. Proto.Actor's endpoint writer dials
// a new grpc.ClientConn for each of its attempts (remote.Config's
// MaxRetryCount) and abandons, without closing, the connection of an attempt
// whose Receive stream fails before the peer's connect response (a TLS
// handshake rejected by either side, a member that is down): such a
// connection would stay open and redial forever. A connection whose connect
// response arrived is left to Proto.Actor, which closes it when the
// endpoint stops.
func closeFailedConnects() remote.ConfigOption {
	return func(rc *remote.Config) {
		rc.DialOptions = append(rc.DialOptions, grpc.WithChainStreamInterceptor(closeOnFailedConnect))
	}
}

// closeOnFailedConnect is the stream interceptor of closeFailedConnects.
func closeOnFailedConnect(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if method != remoteReceiveMethod {
		return s, err
	}
	if err != nil {
		_ = cc.Close()
		return nil, err
	}
	return &connectingStream{ClientStream: s, cc: cc}, nil
}

// connectingStream closes its connection when sending or receiving fails
// before the first message (the connect response) is received.
type connectingStream struct {
	grpc.ClientStream
	cc        *grpc.ClientConn
	connected atomic.Bool
}

// SendMsg implements grpc.ClientStream.
func (s *connectingStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if err != nil && !s.connected.Load() {
		_ = s.cc.Close()
	}
	return err
}

// RecvMsg implements grpc.ClientStream.
func (s *connectingStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if !s.connected.Load() {
		if err != nil {
			_ = s.cc.Close()
		} else {
			s.connected.Store(true)
		}
	}
	return err
}
