"""A Language Server Protocol client over pipes, for tests/lsp/session.py and
tests/bench/lsp_bench.py: it speaks the real base protocol (Content-Length
framing, JSON-RPC 2.0) to `dwc lsp` and checks every frame it reads."""
import json
import os
import queue
import subprocess
import threading
import time


class ProtocolError(Exception):
    pass


class Tally:
    """ok/FAIL lines and the closing "N passed, N failed" of make test's suites"""
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, name, ok, detail=''):
        if ok:
            self.passed += 1
            print('ok   %s' % name)
        else:
            self.failed += 1
            print('FAIL %s %s' % (name, detail))

    def summary(self):
        print('%d passed, %d failed' % (self.passed, self.failed))
        return 0 if self.failed == 0 else 1


class Client:
    def __init__(self, argv, env=None, cwd=None):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.messages = queue.Queue()
        self.pending = []          # notifications and responses read, not yet taken
        self.next_id = 1
        self.stderr = b''
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    # ---- the wire ----
    def _read(self):
        out = self.proc.stdout
        try:
            while True:
                headers = {}
                while True:
                    line = out.readline()
                    if not line:
                        self.messages.put(None)
                        return
                    if not line.endswith(b'\r\n'):
                        raise ProtocolError('a header line not ended by CRLF: %r' % line)
                    if line == b'\r\n':
                        break
                    name, _, value = line[:-2].partition(b':')
                    headers[name.strip().lower()] = value.strip()
                if b'content-length' not in headers:
                    raise ProtocolError('a frame without Content-Length: %r' % headers)
                n = int(headers[b'content-length'])
                body = out.read(n)
                if len(body) != n:
                    raise ProtocolError('the body ended early')
                msg = json.loads(body.decode('utf-8'))
                if msg.get('jsonrpc') != '2.0':
                    raise ProtocolError('not JSON-RPC 2.0: %r' % msg)
                self.messages.put(msg)
        except Exception as e:      # noqa: BLE001 - reported to the test
            self.messages.put(e)

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr += line

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj):
        body = json.dumps(obj).encode('utf-8')
        self.send_raw(b'Content-Length: %d\r\n\r\n' % len(body) + body)

    def _next(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError('no message in time')
        try:
            m = self.messages.get(timeout=left)
        except queue.Empty:
            raise TimeoutError('no message in time') from None
        if m is None:
            raise ProtocolError('the server closed its output')
        if isinstance(m, Exception):
            raise m
        return m

    def wait(self, pred, timeout=20.0):
        """The first message (pending or new) pred accepts; others stay pending."""
        for i, m in enumerate(self.pending):
            if pred(m):
                return self.pending.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            m = self._next(deadline)
            if pred(m):
                return m
            self.pending.append(m)

    # ---- JSON-RPC ----
    def request(self, method, params=None, timeout=20.0):
        rid = self.next_id
        self.next_id += 1
        msg = {'jsonrpc': '2.0', 'id': rid, 'method': method}
        if params is not None:
            msg['params'] = params
        self.send(msg)
        return self.wait(lambda m: m.get('id') == rid and 'method' not in m, timeout)

    def notify(self, method, params=None):
        msg = {'jsonrpc': '2.0', 'method': method}
        if params is not None:
            msg['params'] = params
        self.send(msg)

    def diagnostics(self, uri, version=None, timeout=20.0):
        def ok(m):
            if m.get('method') != 'textDocument/publishDiagnostics':
                return False
            p = m['params']
            return p['uri'] == uri and (version is None or p.get('version') == version)
        return self.wait(ok, timeout)['params']

    def close(self, timeout=10.0):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        return self.proc.wait(timeout)


def file_uri(path):
    from urllib.parse import quote
    return 'file://' + quote(os.path.abspath(path))


def position(text, offset, encoding='utf-16'):
    """The LSP position of character offset `offset` (a Python str index)."""
    line = text.count('\n', 0, offset)
    start = text.rfind('\n', 0, offset) + 1
    seg = text[start:offset]
    if encoding == 'utf-8':
        ch = len(seg.encode('utf-8'))
    else:
        ch = len(seg.encode('utf-16-le')) // 2
    return {'line': line, 'character': ch}


def span(text, needle, nth=0, encoding='utf-16'):
    """The range of the nth occurrence of needle in text."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    return {'start': position(text, at, encoding), 'end': position(text, at + len(needle), encoding)}
