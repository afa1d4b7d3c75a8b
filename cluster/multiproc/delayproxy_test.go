package multiproc

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A delayProxy is a TCP proxy in front of a member that delays every
// byte it forwards, both ways, by its current delay: the network-fault
// tests' latency, since this machine's kernel has no netem. Each chunk is
// stamped when it is read and written once its delay has passed, in
// order: lowering the delay never reorders what is already queued.
type delayProxy struct {
	ln      net.Listener
	backend string
	delay   atomic.Int64 // ns

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// proxyEnv, when set for a member, is the address its delay proxy
// listens on (and the member advertises); the member binds bindEnv
// behind it.
const proxyEnv = "RINGACTOR_NETFAULT_PROXY"

// startDelayProxy listens on listen and forwards every connection to
// backend.
func startDelayProxy(listen, backend string) (*delayProxy, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, err
	}
	p := &delayProxy{ln: ln, backend: backend, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// setDelay sets the delay of what is read from now on.
func (p *delayProxy) setDelay(d time.Duration) { p.delay.Store(int64(d)) }

func (p *delayProxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		out, err := net.Dial("tcp", p.backend)
		if err != nil {
			_ = in.Close()
			continue
		}
		if !p.track(in, out) {
			return
		}
		p.wg.Add(2)
		go p.pipe(out, in)
		go p.pipe(in, out)
	}
}

// track records a connection pair, false once the proxy is closed.
func (p *delayProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *delayProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c) // a no-op once closed (nil map)
	}
}

type stamped struct {
	due  time.Time
	data []byte
}

// pipe copies from src to dst, each chunk held until its due time; at
// the end of either side it closes both.
func (p *delayProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	q := make(chan stamped, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			if w := time.Until(c.due); w > 0 {
				<-time.After(w) // the delay itself
			}
			if _, err := dst.Write(c.data); err != nil {
				break
			}
		}
		_ = dst.Close()
		_ = src.Close()
		p.untrack(dst, src)
		for range q { // drain so that the reader never blocks
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			q <- stamped{due: time.Now().Add(time.Duration(p.delay.Load())), data: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				_ = src.Close()
			}
			break
		}
	}
	close(q)
	<-done
}

// close stops accepting, closes every connection and waits for the
// copies to end.
func (p *delayProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
