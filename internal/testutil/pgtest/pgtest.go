// Package pgtest runs a throwaway PostgreSQL server for tests: initdb on a
// temporary data directory, the server on a free loopback port, stopped and
// removed at the end.
//
// PostgreSQL refuses to run as root, so as root the server runs as Debian's
// postgres user (initdb through `runuser -u postgres --`, the server with
// that user's credentials); as another user it runs as that user. The
// binaries are found under /usr/lib/postgresql/*/bin (the newest version),
// or in $PGTEST_BIN. A test that needs a server and cannot have one is
// skipped, saying why.
//
// One server serves a whole test binary when its TestMain calls Main; each
// DSN call then creates a fresh database on it, so tests do not see each
// other's tables. Without Main, DSN starts a server for the calling test
// and stops it in the test's cleanup. The server is started as a child
// that the kernel kills if the test binary dies (a timeout's panic, a
// SIGKILL), so no server outlives its test.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a running PostgreSQL server.
type Server struct {
	// Port is the loopback TCP port the server listens on.
	Port int
	// Dir is the temporary directory holding the data directory and log.
	Dir string

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	dbs     atomic.Int64
	stop    sync.Once
}

// StartTimeout bounds initdb plus the server's start (generous: a busy CI
// machine).
const StartTimeout = 2 * time.Minute

var (
	mainMu     sync.Mutex
	mainActive bool
	shared     *Server
	sharedErr  error
	sharedDone bool
)

// Main runs the tests of m with one server shared by every DSN call (started
// on first use), stops it after them (also when tests failed), and returns
// m.Run's exit code. Use it from TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	mainMu.Lock()
	mainActive = true
	mainMu.Unlock()
	defer func() {
		mainMu.Lock()
		defer mainMu.Unlock()
		if shared != nil {
			shared.Stop()
		}
		mainActive, shared, sharedErr, sharedDone = false, nil, nil, false
	}()
	return m.Run()
}

// DSN returns the URL of a fresh, empty database (postgres://…) on the
// shared server (Main) or on a server started for t, and skips t when no
// server can run here (no binaries, no postgres user as root); a server that
// should start but does not fails t.
func DSN(t testing.TB) string {
	t.Helper()
	mainMu.Lock()
	if mainActive {
		if !sharedDone {
			sharedDone = true
			shared, sharedErr = Start()
		}
		srv, err := shared, sharedErr
		mainMu.Unlock()
		if err != nil {
			skipOrFail(t, err)
		}
		return srv.NewDatabase(t)
	}
	mainMu.Unlock()
	srv, err := Start()
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(srv.Stop)
	return srv.NewDatabase(t)
}

// ErrUnavailable is what Start returns when PostgreSQL cannot run here at
// all (the caller skips); other errors are failures.
var ErrUnavailable = errors.New("pgtest: PostgreSQL cannot run here")

func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	t.Fatal(err)
}

// Bin returns the directory of the PostgreSQL binaries: $PGTEST_BIN, else
// the newest /usr/lib/postgresql/*/bin holding initdb and postgres.
func Bin() (string, error) {
	if d := os.Getenv("PGTEST_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var found []string
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			found = append(found, d)
		}
	}
	if len(found) == 0 {
		return "", fmt.Errorf("%w: no /usr/lib/postgresql/*/bin/initdb (Debian's postgresql package; .ci/run installs it)", ErrUnavailable)
	}
	version := func(d string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		return v
	}
	sort.Slice(found, func(i, j int) bool { return version(found[i]) > version(found[j]) })
	return found[0], nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Start runs initdb and starts a new server; the caller stops it. An error
// wrapping ErrUnavailable means PostgreSQL cannot run here.
func Start() (*Server, error) {
	bin, err := Bin()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Credential
	var runAs []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("%w: running as root and there is no postgres user to run the server as: %v", ErrUnavailable, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if _, err := exec.LookPath("runuser"); err != nil {
			return nil, fmt.Errorf("%w: running as root without runuser: %v", ErrUnavailable, err)
		}
		runAs = []string{"runuser", "-u", "postgres", "--"}
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{Dir: dir, exited: make(chan struct{})}
	fail := func(err error) (*Server, error) {
		s.Stop()
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(fmt.Errorf("pgtest: chown %s to postgres: %w", dir, err))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	data := filepath.Join(dir, "data")
	initdb := append(append([]string(nil), runAs...), filepath.Join(bin, "initdb"),
		"-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "--encoding=UTF8", "--locale=C")
	if out, err := exec.CommandContext(ctx, initdb[0], initdb[1:]...).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("pgtest: %s: %w\n%s", strings.Join(initdb, " "), err, out))
	}
	for attempt := 0; ; attempt++ {
		err := s.launch(ctx, bin, data, cred)
		if err == nil {
			return s, nil
		}
		// A port taken between freePort and the server's bind: try another.
		if attempt < 3 && strings.Contains(err.Error(), "could not bind") {
			s.exited = make(chan struct{})
			continue
		}
		return fail(err)
	}
}

// launch starts the server on a free port and waits until it accepts
// connections.
func (s *Server) launch(ctx context.Context, bin, data string, cred *syscall.Credential) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Port = port
	logPath := filepath.Join(s.Dir, "postgres.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+s.Dir,
		"-c", "max_connections=100", "-c", "shared_buffers=16MB", "-c", "fsync=on",
		"-c", "logging_collector=off")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	started := make(chan error, 1)
	exited := s.exited
	go func() {
		// Pdeathsig fires when the thread that started the child exits:
		// keep this goroutine on its own thread until the server exits.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(exited)
			return
		}
		started <- nil
		s.waitErr = cmd.Wait()
		close(exited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s.cmd = cmd
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := pgx.Connect(cctx, s.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("pgtest: postgres exited while starting (%v):\n%s", s.waitErr, out)
		case <-ctx.Done():
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("pgtest: postgres did not accept connections within %v: %v\n%s", StartTimeout, err, out)
		case <-tick.C:
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// URL returns the URL of database db on the server (user postgres, trust
// authentication, no TLS).
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// NewDatabase creates a fresh database named after t and returns its URL.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := nonIdent.ReplaceAllString(strings.ToLower(t.Name()), "_")
	if len(name) > 40 {
		name = name[:40]
	}
	name = fmt.Sprintf("t%d_%s", s.dbs.Add(1), name)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return s.URL(name)
}

// Stop stops the server (a fast shutdown, then SIGKILL after 30 s) and
// removes its directory. It is idempotent.
func (s *Server) Stop() {
	s.stop.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-s.exited:
			case <-time.After(30 * time.Second):
				_ = s.cmd.Process.Kill()
				<-s.exited
			}
		}
		_ = os.RemoveAll(s.Dir)
	})
}

// Kill kills the server at once (SIGKILL), for a test of a store that
// becomes unreachable; Stop still removes its directory.
func (s *Server) Kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) // its process group: the backends too
		<-s.exited
	}
}
