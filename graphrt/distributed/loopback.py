"""Processes on one machine talk over a Unix socket instead of loopback TCP.

A message between two processes of one machine crosses the kernel either
way, but loopback TCP runs the whole TCP stack for it (segments,
acknowledgements, the receive softirq), where a Unix socket hands the bytes
over. On the development VM a raw pyzmq 4-byte round trip took 93-104 us
over a Unix socket against 109-152 us over TCP, and graphrt's 2-task step
6-7% less (docs/performance.md, section 5.3); large messages move at the
same rate either way.

So a server bound to a loopback address (or to every address) also listens
on a Linux abstract-namespace socket named after its loopback TCP address,
`ipc://@graphrt/127.0.0.1:2222`, and a client connecting to a loopback TCP
address uses that socket when a server of its own user listens there. The
client asks when it opens the peer and again whenever a connection is made
or refused, before any request goes out on it (channel.py): one that started
before its server moves to the Unix socket once the server listens, and one
whose server came back without a Unix socket moves to TCP. The TCP address
stays the peer's name everywhere (error messages, the cluster spec); only
the connection differs.

Why it is safe:

* Abstract names vanish with the socket that holds them: nothing is left
  behind by a crashed process, and there is no file to clean up.
* They have no file permissions, as a loopback TCP port has none. A name
  already taken fails the server's start, as a taken port does, so no other
  program can stand in for a server that started. A client also checks the
  listener's user (SO_PEERCRED): another user's socket is never used.
* CURVE authentication, when configured, applies to both transports.

Linux only: elsewhere, and in a process with GRAPHRT_LOOPBACK_IPC=0, it is
TCP throughout (that process neither listens on nor connects to a Unix
socket).
"""
import os
import socket
import sys

ENV_SWITCH = "GRAPHRT_LOOPBACK_IPC"
_PREFIX = "graphrt/"
_EVERY_ADDRESS = ("0.0.0.0", "*")


def enabled():
    return sys.platform.startswith("linux") and os.environ.get(ENV_SWITCH, "1") != "0"


def _loopback_ip(host):
    """The IPv4 loopback literal a TCP connection to `host` reaches, or None for any other host.
    No name lookups: only 'localhost' and 127.x.y.z literals count."""
    if host == "localhost":
        return "127.0.0.1"
    parts = host.split(".")
    if len(parts) == 4 and parts[0] == "127" and all(p.isdigit() and int(p) < 256 for p in parts):
        return host
    return None


def _name(ip, port):
    return f"{_PREFIX}{ip}:{port}"


def server_endpoints(bind_address, port):
    """The Unix socket endpoints a server bound to tcp://bind_address:port also listens on. None for
    port 0: the name would not say which port ZeroMQ picked, and every such server would want it."""
    if not enabled() or not str(port).isdigit() or int(port) == 0:
        return []
    ip = "127.0.0.1" if bind_address in _EVERY_ADDRESS else _loopback_ip(bind_address)
    return [f"ipc://@{_name(ip, port)}"] if ip is not None else []


def connect_endpoint(tcp_endpoint):
    """The endpoint to connect to for the peer `tcp://host:port`: its Unix socket when the host is
    this machine's loopback and a server of this user listens there now, else the TCP address."""
    return connect_target(tcp_endpoint)[0]


def connect_target(tcp_endpoint):
    """(endpoint, pid): `connect_endpoint`'s choice and, for a Unix socket, the listening process's id
    as the kernel gives it to this process (SO_PEERCRED), else None. shared_payload.py reads that
    process's shared memory through it."""
    if not enabled() or not tcp_endpoint.startswith("tcp://"):
        return tcp_endpoint, None
    host, _, port = tcp_endpoint[len("tcp://"):].rpartition(":")
    ip = _loopback_ip(host)
    if ip is None or not port.isdigit():
        return tcp_endpoint, None
    name = _name(ip, port)
    pid = _listener_of_this_user(name)
    return (f"ipc://@{name}", pid) if pid is not None else (tcp_endpoint, None)


def _listener_of_this_user(name):
    """The pid of the process of this user listening on the abstract socket `name`, or None."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        # A Unix connect completes at once or fails at once when not blocking (EAGAIN for a full
        # backlog): the channel's I/O thread, which opens peers, never waits here.
        probe.setblocking(False)
        probe.connect("\0" + name)
        # struct ucred {pid_t pid; uid_t uid; gid_t gid;}: the listener's credentials.
        creds = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        if int.from_bytes(creds[4:8], sys.byteorder) != os.getuid():
            return None
        return int.from_bytes(creds[0:4], sys.byteorder)
    except OSError:  # nobody listens (refused), or its backlog is full: TCP
        return None
    finally:
        probe.close()
