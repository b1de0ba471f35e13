"""A client of dwd, the Dogwood decision service (docs/DWD.md): JSON lines
over a Unix stream socket, one reply line per request, in order.

    with dogwood.client.Client("/run/dwd.sock") as c:
        r = c.decide("fs:read", {"path": "~/project/a.c", "operation": "read_content"})
        r.allow, r.cause, r.rules, r.message

A Client is one connection: use one per thread (or lock around it).
"""
import json
import socket
from dataclasses import dataclass
from typing import List, Optional

__all__ = ["Client", "Decision", "DwdError"]


class DwdError(Exception):
    """dwd answered {"ok":false,"error":...} (callers deny), or the connection failed."""


@dataclass
class Decision:
    allow: bool
    cause: str           # permitted, forbidden, no_match, internal_fault
    rule: str            # the governing rule, <default-deny> when none
    rules: List[str]     # every determining rule, in rule order
    message: str         # Box's denial text ("" on a permit)


class Client:
    def __init__(self, path: str, timeout: Optional[float] = 30.0):
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        self._sock.connect(path)
        self._buf = b""

    def close(self) -> None:
        if self._sock:
            self._sock.close()
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def call(self, request: dict) -> dict:
        """Send one request object, return its reply object."""
        self._sock.sendall(json.dumps(request, separators=(",", ":")).encode() + b"\n")
        while b"\n" not in self._buf:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise DwdError("dwd closed the connection")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        reply = json.loads(line)
        if not reply.get("ok"):
            raise DwdError(reply.get("error", "dwd refused the request"))
        return reply

    def decide(self, action: str, input: dict, **members) -> Decision:
        """A decide request; members: request_id, namespace, principal, ..."""
        r = self.call(dict({"op": "decide", "action": action, "input": input}, **members))
        return Decision(r["verdict"] == "permit", r["cause"], r["rule"], list(r["determining"]), r["message"])

    def record(self, action: str, kind: str, input: dict, output: Optional[dict] = None, **members) -> None:
        req = dict({"op": "record", "action": action, "kind": kind, "input": input}, **members)
        if output is not None:
            req["output"] = output
        self.call(req)

    def reload(self, artifact_path: str) -> dict:
        return self.call({"op": "reload", "artifact": artifact_path})

    def stats(self) -> dict:
        return self.call({"op": "stats"})
