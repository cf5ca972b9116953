#!/usr/bin/env python3
"""
Runs INSIDE the sandbox: tries every way out the design closes and prints
one JSON object of what happened. The e2e test decides what is right.
argv: gate-visible host address, a host port that listens (not the
gate's), the TLS test port, the DNS port, the probe name for UDP.
"""
import json
import os
import socket
import ssl
import subprocess
import sys

host, host_port, tls_port, dns_port, udp_name = sys.argv[1:6]
out = {}


def tcp(addr, port, family=socket.AF_INET, timeout=3):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect((addr, int(port)))
        return "connected"
    except socket.timeout:
        return "timeout"
    except OSError as e:
        return "error %s" % e.errno
    finally:
        s.close()


def dns_query(name):
    q = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\x00\x00\x01\x00\x01"


def udp(addr, port, payload):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    try:
        s.sendto(payload, (addr, int(port)))
        s.recvfrom(512)
        return "answered"
    except socket.timeout:
        return "timeout"
    except OSError as e:
        return "error %s" % e.errno
    finally:
        s.close()


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    return {"rc": p.returncode, "err": p.stderr.strip()[-200:]}


out["uid"] = os.getuid()
out["gid"] = os.getgid()
out["groups"] = os.getgroups()
with open("/proc/self/status") as f:
    out["status"] = {k: v.strip() for k, _, v in
                     (line.partition(":") for line in f)
                     if k in ("CapInh", "CapPrm", "CapEff", "CapBnd",
                              "CapAmb", "NoNewPrivs")}
out["nft_flush"] = run(["nft", "flush", "ruleset"])
out["unshare_net"] = run(["unshare", "-n", "true"])
out["direct_host_tcp"] = tcp(host, host_port)
out["direct_public_tcp"] = tcp("1.1.1.1", 443)
out["udp_host_dns"] = udp(host, dns_port, dns_query(udp_name))
out["udp_public_dns"] = udp("8.8.8.8", 53, dns_query(udp_name))
out["ipv6_tcp"] = tcp("2001:4860:4860::8888", 443, socket.AF_INET6)
out["proxy"] = os.environ.get("HTTPS_PROXY")

# CONNECT to an allowlisted name, then a ClientHello naming another host.
try:
    px = out["proxy"].rsplit("/", 1)[-1]
    ph, pp = px.rsplit(":", 1)
    s = socket.create_connection((ph, int(pp)), timeout=5)
    s.sendall(("CONNECT test.example:%s HTTP/1.1\r\nHost: test.example:%s"
               "\r\n\r\n" % (tls_port, tls_port)).encode())
    head = s.recv(4096).decode(errors="replace")
    out["sni_connect"] = head.split("\r\n")[0]
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        t = ctx.wrap_socket(s, server_hostname="other.example")
        out["sni_mismatch"] = "handshake completed"
        t.close()
    except (ssl.SSLError, OSError) as e:
        out["sni_mismatch"] = "cut: %s" % type(e).__name__
except Exception as e:  # noqa: BLE001 - report, never hide
    out["sni_mismatch"] = "probe error: %r" % (e,)

for path in ("/etc/aisb-probe", "/usr/aisb-probe", "/aisb-probe"):
    try:
        with open(path, "w") as f:
            f.write("x")
        out.setdefault("writable", []).append(path)
    except OSError:
        pass
with open("/project/written-by-sandbox", "w") as f:
    f.write("hello from the sandbox\n")
print("PROBE " + json.dumps(out, sort_keys=True))
