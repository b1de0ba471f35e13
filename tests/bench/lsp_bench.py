#!/usr/bin/env python3
"""Diagnostics latency of `dwc lsp` (issue 20: within 200 ms of a change
for a 1,000-rule file): opens a Box-shaped set of N rules
(gen_box_shaped.py) with `schema = box`, then times each of K incremental
changes (one rule's path literal) from the moment the didChange is written
to the pipe until its publishDiagnostics arrives, through the real
protocol (tests/lsp/lsp_client.py).  Run once with the default debounce
(what an editor sees) and once with debounce_ms = 0 (the check itself).
Prints figures; never pass/fail.

    tests/bench/lsp_bench.py [DWC] [N] [K]      (defaults build/dwc 1000 30)
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'lsp'))
from lsp_client import Client, file_uri, position  # noqa: E402


def cpu_ms(pid):
    """the server's user + system CPU time so far: the cost of a change
    whatever else the machine is running"""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf('SC_CLK_TCK')


def run(dwc, text, changes, debounce):
    tmp = tempfile.mkdtemp(prefix='dwc-lsp-bench-')
    try:
        c = Client([dwc, 'lsp'], env=dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, 'cache')), cwd=tmp)
        opts = {'schema': 'box'}
        if debounce is not None:
            opts['debounce_ms'] = debounce
        c.request('initialize', {'rootUri': file_uri(tmp), 'capabilities': {}, 'initializationOptions': opts})
        c.notify('initialized', {})
        uri = file_uri(os.path.join(tmp, 'set.dw'))
        t0 = time.monotonic()
        c.notify('textDocument/didOpen', {'textDocument': {'uri': uri, 'languageId': 'dogwood', 'version': 1, 'text': text}})
        first = c.diagnostics(uri, 1, timeout=120)
        opened = (time.monotonic() - t0) * 1000
        mid = len(re.findall(r'^@id', text, re.M)) // 2 // 8 * 8     # a kind-0 rule (fs:read) mid-file
        marker = '"~/project/%d/*"' % mid
        at = text.index(marker) + len('"~/project/')
        width = len(str(mid))
        times = []
        cpu0 = cpu_ms(c.proc.pid)
        for k in range(changes):
            new = '%0*d' % (width, (mid + k + 1) % 10 ** width)
            t0 = time.monotonic()
            c.notify('textDocument/didChange', {
                'textDocument': {'uri': uri, 'version': k + 2},
                'contentChanges': [{'range': {'start': position(text, at), 'end': position(text, at + width)}, 'text': new}]})
            d = c.diagnostics(uri, k + 2, timeout=120)
            times.append((time.monotonic() - t0) * 1000)
            text = text[:at] + new + text[at + width:]
            assert isinstance(d['diagnostics'], list)
        cpu = (cpu_ms(c.proc.pid) - cpu0) / changes
        c.request('shutdown')
        c.notify('exit')
        c.close()
        return opened, len(first['diagnostics']), times, cpu
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    dwc = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else 'build/dwc')
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    text = subprocess.run([sys.executable, os.path.join(HERE, 'gen_box_shaped.py'), str(n)], check=True,
                          capture_output=True, text=True).stdout
    print('dwc lsp diagnostics, %d Box-shaped rules (%d lines), %d changes of one rule, schema box:' % (n, text.count('\n'), k))
    for label, debounce in (('default debounce (50 ms)', None), ('debounce 0 (the check alone)', 0)):
        opened, nd, times, cpu = run(dwc, text, k, debounce)
        q = statistics.quantiles(times, n=10) if len(times) >= 2 else times * 9
        print('  %-30s after a change: p50 %.0f ms, p90 %.0f ms, max %.0f ms wall, %.0f ms CPU per change; didOpen %.0f ms (%d diagnostics)'
              % (label, statistics.median(times), q[8], max(times), cpu, opened, nd))
    with open('/proc/loadavg') as f:
        load = f.read().split()[0]
    print('  (issue 20 asks for <= 200 ms after a change; load average %s on %d cores during the run)' % (load, os.cpu_count()))


if __name__ == '__main__':
    main()
