"""
A test world for aisb-gate on loopback.

- FakeDns: UDP (and TCP) DNS server on 127.0.0.1 with canned answers per
  name; it records every query so a test can assert that a refused name
  caused none.
- HttpUpstream: a plain or TLS HTTP/1.1 server on 127.0.0.x that records
  every connection, every raw byte and every request head it got.
- TcpUpstream: a raw TCP server (echo, banner, sink) for tunnels.
- Gate: the built aisb-gate (path in $AISB_GATE) as a real process, with a
  temp log file, readiness polling, clean stop and log parsing.
- curl(): curl as the real client; raw helpers for byte-exact requests.

Standard library only. Every loop and wait is bounded.
"""

import atexit
import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

GATE_BIN = os.environ.get("AISB_GATE")

LOG_KEYS = ("ts", "id", "client", "method", "host", "port", "sni",
    "decision", "reason", "rule", "addr", "refused_addrs", "status",
    "bytes_up", "bytes_down", "duration_ms", "dns_ms", "connect_ms")

SANITIZER_MARKS = ("AddressSanitizer", "LeakSanitizer",
    "UndefinedBehaviorSanitizer", "runtime error:")

_tmp_root = tempfile.mkdtemp(prefix="aisb-itest-")
atexit.register(shutil.rmtree, _tmp_root, True)


def tmpdir():
    """A private temp directory, removed at exit."""
    return tempfile.mkdtemp(dir=_tmp_root)


def require_gate():
    """Fail (never skip) when the binary is not handed in."""
    if not GATE_BIN:
        raise RuntimeError("AISB_GATE is not set: point it at the built "
            "aisb-gate, e.g. AISB_GATE=build/gate/aisb-gate")
    if not os.access(GATE_BIN, os.X_OK):
        raise RuntimeError("AISB_GATE=%s is not an executable file"
            % GATE_BIN)


def main():
    """Entry point for each test file: check the binary, run unittest."""
    try:
        require_gate()
    except RuntimeError as e:
        print("FATAL: %s" % e, file=sys.stderr)
        sys.exit(2)
    unittest.main(verbosity=2)


def pattern(n, seed=0):
    """n deterministic, non-text bytes."""
    block = bytes((i * 7 + seed) & 0xff for i in range(256))
    reps = n // 256 + 1
    return (block * reps)[:n]


def sha(b):
    return hashlib.sha256(b).hexdigest()


def free_port(host="127.0.0.1"):
    """A port that was free a moment ago (bind :0, read, close)."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    try:
        s.bind((host, 0))
        return s.getsockname()[1]
    finally:
        s.close()


def wait_until(pred, timeout=5.0, step=0.05):
    """Poll pred() until true or timeout; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


def listen_on(host, port=0, backlog=64):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(backlog)
    return s


# ---------------------------------------------------------------- certs

_cert = None
_cert_lock = threading.Lock()


def test_cert():
    """(certfile, keyfile) of a throwaway self-signed cert, made once."""
    global _cert
    with _cert_lock:
        if _cert is not None:
            return _cert
        d = tmpdir()
        cert = os.path.join(d, "cert.pem")
        key = os.path.join(d, "key.pem")
        cmd = ["openssl", "req", "-x509", "-newkey", "ec",
            "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", cert, "-days", "2",
            "-subj", "/CN=test.example",
            "-addext", "subjectAltName=DNS:test.example,"
            "DNS:*.test.example,DNS:second.example"]
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, timeout=60)
        if p.returncode != 0:
            raise RuntimeError("openssl req failed: %s"
                % p.stderr.decode(errors="replace"))
        _cert = (cert, key)
        return _cert


def client_ctx(verify=False):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if verify:
        ctx.load_verify_locations(test_cert()[0])
    else:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


class TlsConn:
    """
    TLS over a plain socket through memory BIOs, so the raw bytes are
    counted exactly and the first flight can be written in pieces.
    """

    def __init__(self, sock, ctx, server_side, server_hostname=None,
            on_raw=None):
        self.sock = sock
        self.inc = ssl.MemoryBIO()
        self.out = ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.inc, self.out, server_side=server_side,
            server_hostname=server_hostname)
        self.on_raw = on_raw
        self.eof = False

    def _flush(self, writer=None):
        data = self.out.read()
        if data:
            if writer is not None:
                writer(data)
            else:
                self.sock.sendall(data)

    def _fill(self):
        d = self.sock.recv(65536)
        if not d:
            self.inc.write_eof()
            self.eof = True
            return
        if self.on_raw is not None:
            self.on_raw(len(d))
        self.inc.write(d)

    def handshake(self, first_writer=None):
        """Handshake; first_writer(bytes) sends the first flight."""
        writer = first_writer
        for _ in range(200):
            try:
                self.obj.do_handshake()
                self._flush(writer)
                return
            except ssl.SSLWantReadError:
                self._flush(writer)
                writer = None
                if self.eof:
                    raise ConnectionError("EOF during TLS handshake")
                self._fill()
        raise ConnectionError("TLS handshake did not finish")

    def sendall(self, data):
        self.obj.write(data)
        self._flush()

    def recv(self, n=65536):
        for _ in range(10000):
            try:
                return self.obj.read(n)
            except ssl.SSLWantReadError:
                self._flush()
                if self.eof:
                    return b""
                self._fill()
            except ssl.SSLZeroReturnError:
                return b""
            except ssl.SSLEOFError:
                return b""
        raise ConnectionError("TLS read did not finish")

    def close(self):
        try:
            self.obj.unwrap()
            self._flush()
        except (ssl.SSLError, OSError):
            pass
        self.sock.close()


def hello_bytes(server_hostname):
    """The ClientHello Python's ssl sends for this SNI (None: no SNI)."""
    ctx = client_ctx()
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_side=False,
        server_hostname=server_hostname)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


# ---------------------------------------------------------------- DNS

QTYPE_A = 1
QTYPE_AAAA = 28


class FakeDns:
    """
    Canned answers per lowercase name: a list of addresses (A and AAAA
    records, each given to the matching query type; [] is NODATA), or
    "SERVFAIL", "NXDOMAIN", "REFUSED", "TIMEOUT" (never answer). Names
    not in the table are NXDOMAIN. delays[name] = seconds before answering.
    Records carry TTL 0 (the gate keeps none, so every request is seen
    here) unless ttls[name] says otherwise.
    """

    def __init__(self, answers=None):
        self.answers = dict(answers or {})
        self.delays = {}
        self.ttls = {}
        self.queries = []		# (name, qtype)
        self.lock = threading.Lock()
        self.stopping = False
        for _ in range(20):
            self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.udp.bind(("127.0.0.1", 0))
            self.port = self.udp.getsockname()[1]
            try:
                self.tcp = listen_on("127.0.0.1", self.port)
                break
            except OSError:
                self.udp.close()
        else:
            raise RuntimeError("no port free for UDP and TCP DNS")
        self.udp.settimeout(0.2)
        self.tcp.settimeout(0.2)
        self.threads = [
            threading.Thread(target=self._udp_loop, daemon=True),
            threading.Thread(target=self._tcp_loop, daemon=True)]
        for t in self.threads:
            t.start()

    @property
    def addr(self):
        return "127.0.0.1:%d" % self.port

    def set(self, name, answer):
        with self.lock:
            self.answers[name.lower().rstrip(".")] = answer

    def clear(self):
        with self.lock:
            self.queries = []

    def names(self):
        with self.lock:
            return [q[0] for q in self.queries]

    def close(self):
        self.stopping = True
        for t in self.threads:
            t.join(2)
        self.udp.close()
        self.tcp.close()

    def _udp_loop(self):
        while not self.stopping:
            try:
                data, peer = self.udp.recvfrom(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._answer_udp, args=(data, peer),
                daemon=True).start()

    def _answer_udp(self, data, peer):
        resp = self.respond(data)
        if resp is not None and not self.stopping:
            try:
                self.udp.sendto(resp, peer)
            except OSError:
                pass

    def _tcp_loop(self):
        while not self.stopping:
            try:
                c, _ = self.tcp.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._tcp_conn, args=(c,),
                daemon=True).start()

    def _tcp_conn(self, c):
        c.settimeout(5)
        buf = b""
        try:
            for _ in range(100):
                while len(buf) < 2:
                    d = c.recv(4096)
                    if not d:
                        return
                    buf += d
                n = struct.unpack("!H", buf[:2])[0]
                while len(buf) < 2 + n:
                    d = c.recv(4096)
                    if not d:
                        return
                    buf += d
                msg, buf = buf[2:2 + n], buf[2 + n:]
                resp = self.respond(msg)
                if resp is not None:
                    c.sendall(struct.pack("!H", len(resp)) + resp)
        except OSError:
            pass
        finally:
            c.close()

    @staticmethod
    def parse_question(data):
        """(id, flags, name, qtype, question bytes) or None."""
        if len(data) < 12:
            return None
        qid, flags, qd = struct.unpack("!HHH", data[:6])
        if qd < 1:
            return None
        off = 12
        labels = []
        for _ in range(128):
            if off >= len(data):
                return None
            ln = data[off]
            off += 1
            if ln == 0:
                break
            if ln & 0xc0:
                return None
            labels.append(data[off:off + ln])
            off += ln
        else:
            return None
        if off + 4 > len(data):
            return None
        qtype, _qclass = struct.unpack("!HH", data[off:off + 4])
        name = b".".join(labels).decode("latin-1")
        return qid, flags, name, qtype, data[12:off + 4]

    def respond(self, data):
        q = self.parse_question(data)
        if q is None:
            return None
        qid, flags, name, qtype, question = q
        lname = name.lower().rstrip(".")
        with self.lock:
            self.queries.append((lname, qtype))
            ans = self.answers.get(lname, "NXDOMAIN")
            delay = self.delays.get(lname, 0)
            ttl = self.ttls.get(lname, 0)
        if ans == "TIMEOUT":
            return None
        if delay:
            time.sleep(delay)
        rcode = 0
        records = []
        if ans == "SERVFAIL":
            rcode = 2
        elif ans == "NXDOMAIN":
            rcode = 3
        elif ans == "REFUSED":
            rcode = 5
        else:
            for a in ans:
                if ":" in a and qtype == QTYPE_AAAA:
                    records.append((QTYPE_AAAA,
                        socket.inet_pton(socket.AF_INET6, a)))
                elif ":" not in a and qtype == QTYPE_A:
                    records.append((QTYPE_A,
                        socket.inet_pton(socket.AF_INET, a)))
        rflags = 0x8000 | (flags & 0x7800) | (flags & 0x0100) | 0x0080 \
            | 0x0400 | rcode
        out = struct.pack("!HHHHHH", qid, rflags, 1, len(records), 0, 0)
        out += question
        for rtype, rdata in records:
            out += struct.pack("!HHHIH", 0xc00c, rtype, 1, ttl, len(rdata))
            out += rdata
        return out


def dns_query(port, name, qtype=QTYPE_A, timeout=2.0):
    """A raw DNS query to 127.0.0.1:port; (rcode, [addresses]) or None."""
    qid = 0x1234
    q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    q += b"\x00" + struct.pack("!HH", qtype, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    try:
        s.sendto(q, ("127.0.0.1", port))
        try:
            data, _ = s.recvfrom(4096)
        except socket.timeout:
            return None
    finally:
        s.close()
    rid, flags, qd, an = struct.unpack("!HHHH", data[:8])
    assert rid == qid
    off = len(q)
    addrs = []
    for _ in range(an):
        rtype, _c, _ttl, rdlen = struct.unpack("!HHIH", data[off + 2:off + 12])
        rdata = data[off + 12:off + 12 + rdlen]
        off += 12 + rdlen
        fam = socket.AF_INET if rtype == QTYPE_A else socket.AF_INET6
        addrs.append(socket.inet_ntop(fam, rdata))
    return flags & 0xf, addrs


# ---------------------------------------------------------------- upstreams

class Reader:
    """Buffered reads off a socket (or TlsConn) with bounded loops."""

    def __init__(self, sock, limit=64 * 1024 * 1024):
        self.sock = sock
        self.buf = b""
        self.limit = limit
        self.eof = False
        self.total = 0

    def _more(self):
        if self.eof:
            return False
        d = self.sock.recv(65536)
        if not d:
            self.eof = True
            return False
        self.total += len(d)
        self.buf += d
        if len(self.buf) > self.limit:
            raise ValueError("read limit exceeded")
        return True

    def until(self, sep, cap=1024 * 1024):
        """Bytes through sep, or None on EOF first."""
        while True:
            i = self.buf.find(sep)
            if i >= 0:
                out, self.buf = self.buf[:i + len(sep)], \
                    self.buf[i + len(sep):]
                return out
            if len(self.buf) > cap:
                raise ValueError("no %r within %d bytes" % (sep, cap))
            if not self._more():
                return None

    def exactly(self, n):
        while len(self.buf) < n:
            if not self._more():
                raise ConnectionError("EOF after %d of %d bytes"
                    % (len(self.buf), n))
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def rest(self):
        """Everything until EOF."""
        while self._more():
            pass
        out, self.buf = self.buf, b""
        return out

    def chunked(self):
        """(decoded body, raw bytes) of a chunked body with trailers."""
        raw = b""
        body = b""
        for _ in range(1000000):
            line = self.until(b"\r\n", cap=4096)
            if line is None:
                raise ConnectionError("EOF in chunk size")
            raw += line
            size = int(line.split(b";")[0].strip(), 16)
            if size == 0:
                for _ in range(1000):
                    t = self.until(b"\r\n", cap=8192)
                    if t is None:
                        raise ConnectionError("EOF in trailers")
                    raw += t
                    if t == b"\r\n":
                        return body, raw
                raise ValueError("too many trailers")
            data = self.exactly(size + 2)
            raw += data
            body += data[:-2]
        raise ValueError("too many chunks")


def parse_head(head):
    """(start line parts, [(name, value)]) of a raw head (CRLF lines)."""
    lines = head.split(b"\r\n")
    start = lines[0].decode("latin-1")
    fields = []
    for ln in lines[1:]:
        if not ln:
            continue
        name, _, value = ln.partition(b":")
        fields.append((name.decode("latin-1"),
            value.strip(b" \t").decode("latin-1")))
    return start, fields


def field(fields, name, default=None):
    """The last value of a field (case-insensitive)."""
    out = default
    for n, v in fields:
        if n.lower() == name.lower():
            out = v
    return out


def fields_named(fields, name):
    return [v for n, v in fields if n.lower() == name.lower()]


class Request:
    def __init__(self, head, conn_id):
        self.head = head
        start, self.fields = parse_head(head)
        parts = start.split(" ")
        self.method = parts[0]
        self.target = parts[1] if len(parts) > 1 else ""
        self.version = parts[2] if len(parts) > 2 else ""
        self.body = b""
        self.raw_body = b""
        self.conn_id = conn_id

    def header(self, name, default=None):
        return field(self.fields, name, default)

    def to_json(self):
        return {"method": self.method, "target": self.target,
            "version": self.version, "fields": self.fields,
            "body_len": len(self.body), "body_sha256": sha(self.body),
            "conn": self.conn_id}


class _Server:
    """Accept loop on host:port; handle(conn, conn_id) per connection."""

    def __init__(self, host, port=0, backlog=64):
        self.host = host
        self.sock = None
        last = None
        for _ in range(20):
            try:
                self.sock = listen_on(host, port, backlog)
                break
            except OSError as e:
                last = e
                if port == 0:
                    raise
                time.sleep(0.05)
        if self.sock is None:
            raise last
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.2)
        self.lock = threading.Lock()
        self.conns = 0
        self.bytes_in = 0
        self.stopping = False
        self.open_socks = []
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def reset(self):
        with self.lock:
            self.conns = 0
            self.bytes_in = 0
            self._reset()

    def _reset(self):
        pass

    def _count(self, n):
        with self.lock:
            self.bytes_in += n

    def _loop(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.conns += 1
                cid = self.conns
                self.open_socks.append(c)
            c.settimeout(10)
            threading.Thread(target=self._run, args=(c, cid),
                daemon=True).start()

    def _run(self, c, cid):
        try:
            self.handle(c, cid)
        except (OSError, ValueError, ConnectionError, ssl.SSLError):
            pass
        finally:
            try:
                c.close()
            except OSError:
                pass

    def close(self):
        self.stopping = True
        self.thread.join(2)
        self.sock.close()
        with self.lock:
            for c in self.open_socks:
                try:
                    c.close()
                except OSError:
                    pass

    @property
    def hostport(self):
        if ":" in self.host:
            return "[%s]:%d" % (self.host, self.port)
        return "%s:%d" % (self.host, self.port)


class _CountingSock:
    """Wraps a socket to count received bytes into the server."""

    def __init__(self, sock, server):
        self.sock = sock
        self.server = server

    def recv(self, n):
        d = self.sock.recv(n)
        self.server._count(len(d))
        return d

    def sendall(self, d):
        return self.sock.sendall(d)


class HttpUpstream(_Server):
    """
    HTTP/1.1 origin server, plain or TLS. Paths:
      /echo (and anything unknown)  200, JSON of the request, Content-Length
      /big?n=N            N pattern bytes, Content-Length
      /chunked?n=N        N pattern bytes, chunked in uneven chunks
      /close?n=N          N pattern bytes, no length, closed after
      /status/NNN         that status
      /slow?ms=M&n=N      waits M ms, then like /big
      /hop                a response carrying hop-by-hop fields
      /continue           a 100 Continue, then /echo
      /upgrade            a 101 to h2c, then raw bytes
      /garbage /drop /hugehead /clte   broken responses
      /then-close         like /echo, then closes without saying so
      /extra              a response, then the bytes of a second one
                          nobody asked for
    """

    def __init__(self, host="127.0.0.2", port=0, tls=False):
        self.tls = tls
        self.requests = []
        self.snis = []
        self.ctx = None
        if tls:
            cert, key = test_cert()
            self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.ctx.load_cert_chain(cert, key)
            self.ctx.sni_callback = self._sni
        super().__init__(host, port)

    def _sni(self, obj, name, ctx):
        with self.lock:
            self.snis.append(name)

    def _reset(self):
        self.requests = []
        self.snis = []

    def got(self):
        with self.lock:
            return list(self.requests)

    def handle(self, c, cid):
        if self.tls:
            conn = TlsConn(c, self.ctx, True, on_raw=self._count)
            conn.handshake()
        else:
            conn = _CountingSock(c, self)
        r = Reader(conn)
        for _ in range(1000):
            head = r.until(b"\r\n\r\n", cap=256 * 1024)
            if head is None:
                return
            req = Request(head, cid)
            te = (req.header("transfer-encoding") or "").lower()
            cl = req.header("content-length")
            if "chunked" in te:
                req.body, req.raw_body = r.chunked()
            elif cl is not None:
                req.body = r.exactly(int(cl))
                req.raw_body = req.body
            with self.lock:
                self.requests.append(req)
            keep = self.respond(conn, req)
            conn_hdr = (req.header("connection") or "").lower()
            if not keep or "close" in conn_hdr or req.version == "HTTP/1.0":
                return

    def respond(self, conn, req):
        path, _, query = req.target.partition("?")
        args = {}
        for kv in query.split("&"):
            if "=" in kv:
                k, v = kv.split("=", 1)
                args[k] = v
        n = int(args.get("n", "0"))
        head_only = req.method == "HEAD"
        extra = ""
        if path.startswith("/status/"):
            status = int(path[len("/status/"):])
            body = b"" if status in (204, 304) else b"status body\n"
            return self._send(conn, status, body, head_only,
                length=status not in (204, 304))
        if path == "/big":
            return self._send(conn, 200, pattern(n), head_only)
        if path == "/slow":
            time.sleep(int(args.get("ms", "1000")) / 1000.0)
            return self._send(conn, 200, pattern(n), head_only)
        if path == "/chunked":
            body = pattern(n)
            head = ("HTTP/1.1 200 OK\r\nContent-Type: application/octet-"
                "stream\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
            if head_only:
                conn.sendall(head)
                return True
            out = head
            off = 0
            size = 1
            while off < len(body):
                piece = body[off:off + size]
                out += b"%x;ext=1\r\n" % len(piece) + piece + b"\r\n"
                off += len(piece)
                size = size * 3 + 1
            out += b"0\r\n\r\n"
            conn.sendall(out)
            return True
        if path == "/close":
            head = ("HTTP/1.1 200 OK\r\nContent-Type: application/octet-"
                "stream\r\nConnection: close\r\n\r\n").encode()
            conn.sendall(head + (b"" if head_only else pattern(n)))
            return False
        if path == "/upgrade":
            conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\n"
                b"Connection: Upgrade\r\nUpgrade: h2c\r\n\r\nRAW-AFTER-101")
            return False
        if path == "/continue":
            conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        if path == "/garbage":
            conn.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            return False
        if path == "/drop":
            return False
        if path == "/hugehead":
            filler = "".join("X-F%d: %s\r\n" % (i, "f" * 900)
                for i in range(90))
            return self._send(conn, 200, b"x", head_only, extra=filler)
        if path == "/clte":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
            return False
        if path == "/then-close":
            self._send(conn, 200, b"closing after this", head_only)
            return False
        if path == "/extra":
            conn.sendall(b"HTTP/1.1 200 X\r\nContent-Length: 2\r\n\r\nok"
                b"HTTP/1.1 200 X\r\nContent-Length: 5\r\n\r\nEVIL!")
            return True
        if path == "/hop":
            extra = ("Connection: X-Up-Hop\r\nX-Up-Hop: secret-hop\r\n"
                "Keep-Alive: timeout=5\r\nX-Up-Kept: yes\r\n")
        body = json.dumps(req.to_json()).encode()
        if self.tls:
            with self.lock:
                snis = list(self.snis)
            extra += "X-Sni: %s\r\n" % (snis[-1] if snis else "")
        return self._send(conn, 200, body, head_only, extra=extra,
            ctype="application/json")

    @staticmethod
    def _send(conn, status, body, head_only, extra="",
            ctype="application/octet-stream", length=True):
        head = "HTTP/1.1 %d X\r\nContent-Type: %s\r\n%s" % (status, ctype,
            extra)
        if length:
            head += "Content-Length: %d\r\n" % len(body)
        head += "\r\n"
        conn.sendall(head.encode() + (b"" if head_only else body))
        return True


class TcpUpstream(_Server):
    """
    Raw TCP server: mode "echo" sends back what it gets, "banner" sends a
    line first and then echoes, "sink" only records. Records every byte.
    """

    def __init__(self, host="127.0.0.2", port=0, mode="echo",
            banner=b"220 banner\r\n", backlog=64):
        self.mode = mode
        self.banner = banner
        self.data = []
        super().__init__(host, port, backlog)

    def _reset(self):
        self.data = []

    def received(self):
        with self.lock:
            return b"".join(self.data)

    def handle(self, c, cid):
        if self.mode == "banner":
            c.sendall(self.banner)
        for _ in range(100000):
            d = c.recv(65536)
            if not d:
                if self.mode != "sink":
                    try:
                        c.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                return
            with self.lock:
                self.bytes_in += len(d)
                self.data.append(d)
            if self.mode in ("echo", "banner"):
                c.sendall(d)


class Blackhole:
    """
    An address:port whose SYNs go unanswered: a listener with backlog 0
    whose queue is held full, so connect() to it times out (Linux).
    """

    def __init__(self, host="127.0.0.2"):
        self.sock = listen_on(host, 0, backlog=0)
        self.port = self.sock.getsockname()[1]
        self.fillers = []
        for _ in range(3):
            c = socket.socket()
            c.setblocking(False)
            try:
                c.connect((host, self.port))
            except (BlockingIOError, OSError):
                pass
            self.fillers.append(c)
        time.sleep(0.1)

    def close(self):
        for c in self.fillers:
            c.close()
        self.sock.close()


# ---------------------------------------------------------------- the gate

class GateError(AssertionError):
    pass


class Gate:
    """
    aisb-gate as a real process on 127.0.0.1:<free port>, logging to a
    temp file, pointed at the world's fake DNS.
    """

    def __init__(self, dns=None, allow=(), args=(), allow_files=(),
            log=True):
        require_gate()
        self.dir = tmpdir()
        self.dns = dns
        self.allow = list(allow)
        self.extra = list(args)
        self.allow_files = list(allow_files)
        self.logpath = os.path.join(self.dir, "gate.log") if log is True \
            else log
        self.outpath = os.path.join(self.dir, "stdout")
        self.errpath = os.path.join(self.dir, "stderr")
        self.proc = None
        self.port = None
        self.rc = None
        self.base = 0		# records before this index are old

    def argv(self):
        a = [GATE_BIN, "--listen", "127.0.0.1:%d" % self.port]
        for e in self.allow:
            a += ["--allow", e]
        for f in self.allow_files:
            a += ["--allow-file", f]
        if self.dns is not None:
            a += ["--dns-server", self.dns.addr]
        if self.logpath is not None:
            a += ["--log", self.logpath]
        return a + self.extra

    def start(self):
        """Start and wait until it accepts; raises with stderr if not."""
        last = ""
        for attempt in range(3):
            self.port = free_port()
            self.out = open(self.outpath, "ab")
            self.err = open(self.errpath, "ab")
            self.proc = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL,
                stdout=self.out, stderr=self.err)
            ok = self._wait_ready(5.0)
            if ok:
                return self
            last = self.stderr()
            self.stop(check=False)
            if "in use" not in last:
                break
        raise GateError("gate did not start accepting on 127.0.0.1:%d: "
            "argv=%r rc=%r stderr=%r" % (self.port, self.argv(), self.rc,
            last[-2000:]))

    def _wait_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.rc = self.proc.returncode
                return False
            s = socket.socket()
            s.settimeout(0.5)
            try:
                s.connect(("127.0.0.1", self.port))
                return True
            except OSError:
                time.sleep(0.05)
            finally:
                s.close()
        return False

    @property
    def proxy(self):
        return "http://127.0.0.1:%d" % self.port

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout):
        """Exit status within timeout, or None if still running."""
        try:
            self.rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        return self.rc

    def stop(self, check=True, timeout=10):
        """SIGTERM, bounded wait, SIGKILL; check sanitizer output."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
                if check:
                    raise GateError("gate ignored SIGTERM for %ds" % timeout)
        self.rc = self.proc.returncode
        self.out.close()
        self.err.close()
        if check:
            self.check_sanitizers()
        return self.rc

    def check_sanitizers(self):
        err = self.stderr()
        for m in SANITIZER_MARKS:
            if m in err:
                i = err.find(m)
                raise GateError("sanitizer report in gate stderr:\n%s"
                    % err[max(0, i - 200):i + 3000])

    def stderr(self):
        try:
            with open(self.errpath, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def stdout(self):
        try:
            with open(self.outpath, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_lines(self):
        if self.logpath is not None and self.logpath.startswith("/dev/"):
            return []
        if self.logpath in (None, "-"):
            text = self.stdout().encode() if self.logpath == "-" else b""
        else:
            try:
                with open(self.logpath, "rb") as f:
                    text = f.read()
            except FileNotFoundError:
                return []
        lines = text.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        return lines

    def records(self):
        """Every log record, each checked: strict JSON, all keys."""
        out = []
        for i, ln in enumerate(self.log_lines()):
            out.append(check_record(ln, "log line %d" % (i + 1)))
        return out

    def mark(self):
        """From now on find() and record_for() see only newer records."""
        self.base = len(self.log_lines())

    def new_records(self):
        return self.records()[self.base:]

    def find(self, pred, timeout=5.0):
        """Wait for new log records matching pred; returns them."""
        found = []

        def look():
            found[:] = [r for r in self.new_records() if pred(r)]
            return bool(found)
        wait_until(look, timeout)
        return list(found)

    def record_for(self, timeout=5.0, **kv):
        """The single new record whose fields equal kv (waits for it)."""
        recs = self.find(lambda r: all(r.get(k) == v
            for k, v in kv.items()), timeout)
        if not recs:
            raise GateError("no log record with %r; log:\n%s\nstderr:\n%s"
                % (kv, "\n".join(l.decode(errors="replace")
                for l in self.log_lines()[-20:]), self.stderr()[-2000:]))
        return recs[-1]


def check_record(line, what="log line"):
    """Parse one log line strictly; all keys, sane types."""
    if isinstance(line, bytes):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise GateError("%s is not UTF-8 (%s): %r" % (what, e, line))
    else:
        text = line
    try:
        rec = json.loads(text)
    except ValueError as e:
        raise GateError("%s is not valid JSON (%s): %r" % (what, e, line))
    if not isinstance(rec, dict):
        raise GateError("%s is not a JSON object: %r" % (what, line))
    missing = [k for k in LOG_KEYS if k not in rec]
    if missing:
        raise GateError("%s lacks keys %s: %r" % (what, missing, line))
    if rec["decision"] not in ("allow", "deny"):
        raise GateError("%s: decision %r" % (what, rec["decision"]))
    if not isinstance(rec["refused_addrs"], list):
        raise GateError("%s: refused_addrs is not an array: %r"
            % (what, line))
    for k in ("bytes_up", "bytes_down"):
        if not isinstance(rec[k], int) or rec[k] < 0:
            raise GateError("%s: %s is %r" % (what, k, rec[k]))
    st = rec["status"]
    if st is not None and (not isinstance(st, int) or not 100 <= st <= 599):
        raise GateError("%s: status is %r" % (what, st))
    for k in ("duration_ms", "dns_ms", "connect_ms"):
        v = rec[k]
        if v is not None and (not isinstance(v, (int, float)) or v < 0):
            raise GateError("%s: %s is %r" % (what, k, v))
    if rec["id"] is None:
        raise GateError("%s: id is null" % what)
    return rec


# ---------------------------------------------------------------- clients

_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy",
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "CURL_HOME")


class CurlResult:
    def __init__(self, rc, status, connect_status, heads, body, err):
        self.rc = rc
        self.status = status
        self.connect_status = connect_status
        self.heads = heads		# every head block curl saw, in order
        self.body = body
        self.stderr = err

    @property
    def fields(self):
        """Fields of the last head."""
        return parse_head(self.heads[-1])[1] if self.heads else []

    def header(self, name):
        return field(self.fields, name)

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return ("<curl rc=%d status=%s connect=%s stderr=%r body=%r>"
            % (self.rc, self.status, self.connect_status, self.stderr[-300:],
            self.body[:300]))


def curl(gate, url, *extra, timeout=20, cacert=True):
    """Run curl through the gate; never raises on an HTTP error."""
    d = tmpdir()
    body = os.path.join(d, "body")
    heads = os.path.join(d, "heads")
    argv = ["curl", "-sS", "--noproxy", "", "-x", gate.proxy,
        "--max-time", str(timeout), "-o", body, "-D", heads,
        "-w", "%{http_code} %{http_connect}"]
    if cacert and url.startswith("https:"):
        argv += ["--cacert", test_cert()[0]]
    argv += list(extra) + [url]
    env = {k: v for k, v in os.environ.items() if k not in _PROXY_VARS}
    env["HOME"] = d
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        timeout=timeout + 10, env=env)
    codes = p.stdout.decode().split()
    status = int(codes[0]) if codes else 0
    cstatus = int(codes[1]) if len(codes) > 1 else 0
    try:
        with open(body, "rb") as f:
            b = f.read()
    except FileNotFoundError:
        b = b""
    try:
        with open(heads, "rb") as f:
            h = f.read()
    except FileNotFoundError:
        h = b""
    blocks = [x for x in h.split(b"\r\n\r\n") if x.strip()]
    return CurlResult(p.returncode, status, cstatus, blocks, b,
        p.stderr.decode(errors="replace"))


class Response:
    def __init__(self, status, version, fields, body, raw):
        self.status = status
        self.version = version
        self.fields = fields
        self.body = body
        self.raw = raw

    def header(self, name):
        return field(self.fields, name)

    def __repr__(self):
        return "<Response %s %r body=%r>" % (self.status, self.fields,
            self.body[:200])


def read_response(reader, method="GET"):
    """One response off a Reader; None when the peer closed first."""
    head = reader.until(b"\r\n\r\n", cap=256 * 1024)
    if head is None:
        return None
    start, fields = parse_head(head)
    parts = start.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/"):
        raise ValueError("bad status line %r" % start)
    status = int(parts[1])
    te = (field(fields, "transfer-encoding") or "").lower()
    cl = field(fields, "content-length")
    raw = head
    if method in ("HEAD", "CONNECT") or status in (204, 304) or \
            100 <= status < 200:
        body = b""
    elif "chunked" in te:
        body, rawb = reader.chunked()
        raw += rawb
    elif cl is not None:
        body = reader.exactly(int(cl))
        raw += body
    else:
        body = reader.rest()
        raw += body
    return Response(status, parts[0], fields, body, raw)


def client_of(sock):
    """The "client" field the gate logs for this socket."""
    host, port = sock.getsockname()[:2]
    return "%s:%d" % (host, port)


def gate_socket(gate, timeout=10):
    s = socket.create_connection(("127.0.0.1", gate.port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def exchange(gate, data, method="GET", timeout=10):
    """Send raw bytes on a new connection, read one response (or None)."""
    s = gate_socket(gate, timeout)
    try:
        s.sendall(data)
        try:
            return read_response(Reader(s), method)
        except (ConnectionResetError, socket.timeout):
            return None
    finally:
        s.close()


def connect_tunnel(gate, target, timeout=10, extra=b""):
    """
    Open a CONNECT tunnel; returns (socket, Response) with the socket
    positioned right after the gate's response head. Reads byte by byte
    so nothing of the tunnel is swallowed.
    """
    s = gate_socket(gate, timeout)
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n%s"
        % (target.encode(), target.encode(), extra))
    head = b""
    for _ in range(65536):
        try:
            d = s.recv(1)
        except ConnectionResetError:
            d = b""
        if not d:
            break
        head += d
        if head.endswith(b"\r\n\r\n"):
            break
    if not head.endswith(b"\r\n\r\n"):
        return s, None
    start, fields = parse_head(head)
    parts = start.split(" ", 2)
    resp = Response(int(parts[1]), parts[0], fields, b"", head)
    if resp.status != 200:
        # a refusal carries a body; read it so the caller can see why
        rd = Reader(s)
        cl = field(fields, "content-length")
        te = (field(fields, "transfer-encoding") or "").lower()
        try:
            if "chunked" in te:
                resp.body = rd.chunked()[0]
            elif cl is not None:
                resp.body = rd.exactly(int(cl))
            else:
                resp.body = rd.rest()
        except (OSError, ConnectionError, ValueError):
            pass
    return s, resp


def closed_within(sock, timeout):
    """
    True if the peer closes (EOF or reset) within timeout seconds. Data
    that arrives meanwhile is read and discarded.
    """
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        sock.settimeout(left)
        try:
            d = sock.recv(65536)
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True
        if not d:
            return True


# ---------------------------------------------------------------- the world

class World:
    """
    DNS + upstreams for one test class. test.example resolves to
    127.0.0.2, where an HTTP upstream, a TLS upstream and an echo server
    listen. The base allowlist allows those and 127.0.0.2.
    """

    def __init__(self):
        self.dns = FakeDns()
        self.http = HttpUpstream("127.0.0.2")
        self.tls = HttpUpstream("127.0.0.2", tls=True)
        self.echo = TcpUpstream("127.0.0.2", mode="echo")
        self.dns.set("test.example", ["127.0.0.2"])
        self.extra = []
        self.gates = []

    def base_allow(self):
        return ["test.example:%d" % self.http.port,
            "test.example:%d" % self.tls.port,
            "test.example:%d/notls" % self.echo.port,
            "127.0.0.2"]

    def add(self, srv):
        self.extra.append(srv)
        return srv

    def gate(self, allow=None, args=(), allow_files=(), log=True,
            start=True, dns=True):
        g = Gate(self.dns if dns else None,
            self.base_allow() if allow is None else allow, args,
            allow_files, log)
        self.gates.append(g)
        if start:
            g.start()
        return g

    def reset(self):
        self.dns.clear()
        with self.dns.lock:
            self.dns.ttls = {}
        for g in self.gates:
            if g.proc is not None:
                g.mark()
        for s in [self.http, self.tls, self.echo] + self.extra:
            s.reset()

    def close(self):
        """Stop everything; raise if a gate reported a sanitizer error."""
        errors = []
        for g in self.gates:
            try:
                g.stop()
            except GateError as e:
                errors.append(str(e))
        for s in [self.http, self.tls, self.echo] + self.extra:
            s.close()
        self.dns.close()
        if errors:
            raise GateError("\n".join(errors))


class GateTestCase(unittest.TestCase):
    """One World and one default gate per class; recorders reset per test."""

    maxDiff = 4000
    gate_args = ()

    @classmethod
    def setUpClass(cls):
        cls.world = World()
        try:
            cls.gate = cls.world.gate(args=cls.gate_args)
        except Exception:
            cls.world.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.world.close()

    def setUp(self):
        self.world.reset()
        self.assertTrue(self.gate.alive(), "the class gate died: rc=%r "
            "stderr=%s" % (self.gate.proc.poll(), self.gate.stderr()[-2000:]))

    def tearDown(self):
        # let records of connections closed just now land, so they are
        # not taken for the next test's (bounded: 3 s)
        for g in self.world.gates:
            if g.alive() and g.logpath not in (None, "-") and \
                    not g.logpath.startswith("/dev/"):
                last = [-1, 0]

                def settled():
                    try:
                        n = os.path.getsize(g.logpath)
                    except OSError:
                        return True
                    last[1] = last[1] + 1 if n == last[0] else 0
                    last[0] = n
                    return last[1] >= 2
                wait_until(settled, 3, step=0.05)
        # every line the gate wrote during the test must be a valid record
        for g in self.world.gates:
            if g.proc is not None and g.logpath != "-":
                g.new_records()
            g.check_sanitizers()

    def new_gate(self, **kw):
        return self.world.gate(**kw)

    def diag(self, gate=None):
        g = gate or self.gate
        return "\n--- gate stderr (tail):\n%s\n--- log (tail):\n%s" % (
            g.stderr()[-1500:], "\n".join(l.decode(errors="replace")
            for l in g.log_lines()[-5:]))

    def assertNoDns(self, what=""):
        self.assertEqual(self.world.dns.names(), [],
            "the gate made DNS queries %s" % what)

    def assertUntouched(self, srv, what="", settle=True):
        # give a late connection a moment to show up
        if settle:
            time.sleep(0.1)
        self.assertEqual((srv.conns, srv.bytes_in), (0, 0),
            "upstream %s was reached (connections, bytes) %s"
            % (srv.hostport, what))

    def assertNoBytes(self, srv, what=""):
        time.sleep(0.1)
        self.assertEqual(srv.bytes_in, 0,
            "upstream %s received %d bytes %s" % (srv.hostport,
            srv.bytes_in, what))

    def assertDenyRecord(self, status, gate=None, **kv):
        g = gate or self.gate
        rec = g.record_for(status=status, **kv)
        self.assertEqual(rec["decision"], "deny", rec)
        self.assertTrue(rec["reason"], "deny record without reason: %r"
            % rec)
        return rec
