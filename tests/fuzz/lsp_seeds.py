#!/usr/bin/env python3
"""Seeds for fuzz_lsp (tests/fuzz/fuzz_lsp.c): a byte 1, then message bodies
separated by NUL bytes: open a Box example and tests/lsp/planted.dw, change
them, and ask every feature about them.  Also one raw-wire seed (byte 0).

    tests/fuzz/lsp_seeds.py CORPUS_DIR [SHARED]"""
import glob
import json
import os
import sys

corpus = sys.argv[1]
shared = sys.argv[2] if len(sys.argv) > 2 else '../shared'
here = os.path.dirname(os.path.abspath(__file__))
texts = [open(os.path.join(here, '..', 'lsp', 'planted.dw'), encoding='utf-8').read()]
for p in sorted(glob.glob(os.path.join(shared, 'examples', 'box', '*', 'policy.dw')))[:6]:
    texts.append(open(p, encoding='utf-8').read())


def msg(method, params, rid=None):
    m = {'jsonrpc': '2.0', 'method': method, 'params': params}
    if rid is not None:
        m['id'] = rid
    return json.dumps(m)


for n, text in enumerate(texts):
    uri = 'file:///w/p%d.dw' % n
    doc = {'uri': uri}
    pos = {'line': 5, 'character': 20}
    bodies = [
        msg('textDocument/didOpen', {'textDocument': {'uri': uri, 'languageId': 'dogwood', 'version': 1, 'text': text}}),
        msg('textDocument/didChange', {'textDocument': {'uri': uri, 'version': 2}, 'contentChanges': [
            {'range': {'start': {'line': 3, 'character': 2}, 'end': {'line': 3, 'character': 9}}, 'text': 'context.input.'}]}),
        msg('textDocument/hover', {'textDocument': doc, 'position': pos}, 1),
        msg('textDocument/completion', {'textDocument': doc, 'position': pos}, 2),
        msg('textDocument/definition', {'textDocument': doc, 'position': pos}, 3),
        msg('textDocument/documentSymbol', {'textDocument': doc}, 4),
        msg('textDocument/codeAction', {'textDocument': doc, 'range': {'start': {'line': 0, 'character': 0},
                                        'end': {'line': 20, 'character': 0}}, 'context': {'diagnostics': []}}, 5),
        msg('textDocument/formatting', {'textDocument': doc, 'options': {'tabSize': 2, 'insertSpaces': True}}, 6),
        msg('textDocument/didClose', {'textDocument': doc}),
        msg('shutdown', None, 7),
        msg('exit', None),
    ]
    with open(os.path.join(corpus, 'lsp-seed-%d' % n), 'wb') as f:
        f.write(b'\x01' + b'\x00'.join(b.encode('utf-8') for b in bodies))
body = msg('dwc/unknown', {}, 9).encode()
with open(os.path.join(corpus, 'lsp-seed-raw'), 'wb') as f:
    f.write(b'\x00' + b'Content-Length: %d\r\n\r\n' % len(body) + body + b'Content-Length: 3\r\n\r\n{x}')
