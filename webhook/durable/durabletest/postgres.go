// Package durabletest starts a PostgreSQL server for tests of the durable
// state: the machine's own binaries (initdb, pg_ctl, postgres), a data
// directory under the test's temporary directory, a free loopback port,
// stopped when the test ends. A test may stop and start it meanwhile, to
// see what the service does while its database is gone. Where the binaries are missing the test is
// skipped with a message saying so, and fails instead under CI=true, where
// .ci/run installs Debian's postgresql package.
package durabletest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// binDir is the directory holding initdb and pg_ctl: PATH first, then
// Debian's /usr/lib/postgresql/<version>/bin, newest version first.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no initdb and pg_ctl on PATH or under /usr/lib/postgresql/*/bin (install Debian's postgresql package)")
}

// Postgres starts a server and returns the URL of a fresh database on
// it.
func Postgres(t testing.TB) string {
	t.Helper()
	return Start(t).URL
}

// Server is a PostgreSQL server of the test's own, which the test may
// stop and start again on the same port and data, as an outage would.
type Server struct {
	// URL is the database's, on 127.0.0.1.
	URL string

	t    testing.TB
	bin  string
	dir  string
	data string
	port int
	cred *syscall.Credential
}

// Start starts a server for the test and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL is needed under CI: %v", err)
		}
		t.Skipf("skipping: PostgreSQL not available: %v", err)
	}
	// PostgreSQL refuses to run as root; as root, run it as an
	// unprivileged user.
	var cred *syscall.Credential
	dir, err := os.MkdirTemp("", "catalogbot-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		uid, gid := 65534, 65534
		if u, err := user.Lookup("postgres"); err == nil {
			uid, _ = strconv.Atoi(u.Uid)
			gid, _ = strconv.Atoi(u.Gid)
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	s := &Server{t: t, bin: bin, dir: dir, data: filepath.Join(dir, "data"), cred: cred}
	if err := s.run("initdb", "-D", s.data, "-U", "catalogbot", "-A", "trust", "--no-sync", "-E", "UTF8"); err != nil {
		t.Fatal(err)
	}
	s.port = freePort(t)
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.run("pg_ctl", "-D", s.data, "-m", "immediate", "-w", "stop") })
	s.URL = s.DatabaseURL("postgres")
	return s
}

// DatabaseURL is the URL of the database name on the server.
func (s *Server) DatabaseURL(name string) string {
	return fmt.Sprintf("postgres://catalogbot@127.0.0.1:%d/%s?sslmode=disable", s.port, name)
}

// CreateDatabase creates an empty database and returns its URL: one
// server serves many tests' states, each in a database of its own.
func (s *Server) CreateDatabase(name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return s.DatabaseURL(name), nil
}

// Stop stops the server as an operator or a failover does (pg_ctl's fast
// mode): every connection is cut, and what was committed stays. Not the
// immediate mode: the server runs with synchronous_commit off, for speed,
// under which a crash loses the last commits, which no production server
// configured for durability does.
func (s *Server) Stop() error {
	return s.run("pg_ctl", "-D", s.data, "-m", "fast", "-w", "stop")
}

// Start starts the server again, on the same port and data, and waits
// until it takes connections.
func (s *Server) Start() error {
	return s.run("pg_ctl", "-D", s.data, "-l", filepath.Join(s.dir, "log"), "-w", "-t", "60", "-o",
		fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200", s.port, s.dir),
		"start")
}

func (s *Server) run(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	cmd.Dir = s.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %v: %v\n%s", name, args, err, out)
	}
	return nil
}

// freePort is a loopback TCP port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// The server binds it a moment later; a port another test took
	// meanwhile makes pg_ctl fail, so give it time to be clear.
	time.Sleep(10 * time.Millisecond)
	return port
}

// CPU is the processor time (user and system) the server has used so far:
// the postmaster's, its live backends' and that of the backends it
// reaped, read from /proc. Benchmarks put it beside their own, since the
// server's work is the database's share of theirs. It fails where /proc
// is not Linux's.
func (s *Server) CPU() (time.Duration, error) {
	pidFile, err := os.ReadFile(filepath.Join(s.data, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(pidFile), "\n")
	postmaster, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return 0, fmt.Errorf("postmaster.pid: %w", err)
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var ticks int64
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		ppid, own, reaped, ok := procStat(pid)
		switch {
		case !ok:
		case pid == postmaster:
			ticks += own + reaped
		case ppid == postmaster:
			ticks += own
		}
	}
	// Linux reports /proc times in USER_HZ, 100 a second on every
	// architecture Go runs on.
	return time.Duration(ticks) * (time.Second / 100), nil
}

// procStat reads /proc/pid/stat: the parent, the process's user+system
// ticks, and those of the children it waited for.
func procStat(pid int) (ppid int, own, reaped int64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, false
	}
	// The command name, in parentheses, may hold spaces; the fields
	// after its closing parenthesis start with the state (field 3).
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, 0, 0, false
	}
	num := func(k int) int64 { n, _ := strconv.ParseInt(f[k-3], 10, 64); return n }
	return int(num(4)), num(14) + num(15), num(16) + num(17), true
}
