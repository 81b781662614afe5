package docker

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"time"
)

// sshDialer reaches an engine on another host as the docker CLI does for
// DOCKER_HOST=ssh://user@host: each connection is `ssh user@host -- docker
// system dial-stdio`, the engine's API carried on ssh's standard input and
// output. ssh's own configuration (keys, known hosts, agent) applies;
// BatchMode keeps it from ever asking for a password.
func sshDialer(host, sshCommand string) (func(ctx context.Context, network, addr string) (net.Conn, error), error) {
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("the ssh:// host %q: %w", host, err)
	}
	if u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("the ssh:// host %q must be ssh://[user@]host[:port]", host)
	}
	if strings.HasPrefix(u.Hostname(), "-") || (u.User != nil && strings.HasPrefix(u.User.Username(), "-")) {
		return nil, fmt.Errorf("the ssh:// host %q is not a host name", host)
	}
	if _, set := u.User.Password(); set {
		return nil, fmt.Errorf("the ssh:// host must not hold a password: use a key")
	}
	args := []string{"-o", "BatchMode=yes"}
	if p := u.Port(); p != "" {
		args = append(args, "-p", p)
	}
	target := u.Hostname()
	if u.User != nil && u.User.Username() != "" {
		target = u.User.Username() + "@" + target
	}
	args = append(args, "--", target, "docker", "system", "dial-stdio")
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		cmd := exec.Command(sshCommand, args...)
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("run ssh: %w", err)
		}
		return &cmdConn{cmd: cmd, in: in, out: out}, nil
	}, nil
}

// cmdConn is a net.Conn on a command's standard input and output.
type cmdConn struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out io.ReadCloser
}

func (c *cmdConn) Read(p []byte) (int, error)  { return c.out.Read(p) }
func (c *cmdConn) Write(p []byte) (int, error) { return c.in.Write(p) }

func (c *cmdConn) Close() error {
	_ = c.in.Close()
	_ = c.out.Close()
	if c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
	_ = c.cmd.Wait()
	return nil
}

func (c *cmdConn) LocalAddr() net.Addr              { return sshAddr{} }
func (c *cmdConn) RemoteAddr() net.Addr             { return sshAddr{} }
func (c *cmdConn) SetDeadline(time.Time) error      { return nil }
func (c *cmdConn) SetReadDeadline(time.Time) error  { return nil }
func (c *cmdConn) SetWriteDeadline(time.Time) error { return nil }
func (sshAddr) Network() string                     { return "ssh" }
func (sshAddr) String() string                      { return "ssh" }

type sshAddr struct{}
