#!/usr/bin/env python3
"""A scripted LSP session against `dwc lsp` over pipes (issue 20's Done-when):
initialize, open a policy with three planted mistakes, their diagnostics at
the right ranges, an incremental change fixing one, the features, malformed
frames and unknown methods answered with protocol errors, shutdown and exit.

    tests/lsp/session.py DWC        (prints "N passed, N failed")
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from lsp_client import Client, Tally, file_uri, position, span  # noqa: E402

TALLY = Tally()
check = TALLY.check


def error_code(resp):
    return resp.get('error', {}).get('code')


def start(dwc, tmp):
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, 'cache'))
    return Client([dwc, 'lsp', '--stdio'], env=env, cwd=tmp)


def init_params(tmp, options=None, encodings=None):
    p = {'processId': os.getpid(), 'rootUri': file_uri(tmp),
         'capabilities': {'general': {'positionEncodings': encodings or ['utf-16']}}}
    if options is not None:
        p['initializationOptions'] = options
    return p


def by_code(diags):
    return sorted((d.get('code'), json.dumps(d['range'], sort_keys=True)) for d in diags)


def expect_ranges(name, diags, want):
    got = by_code(diags)
    exp = sorted((c, json.dumps(r, sort_keys=True)) for c, r in want)
    check(name, got == exp, '\n  got  %s\n  want %s' % (got, exp))


def main_session(dwc, tmp):
    text = open(os.path.join(HERE, 'planted.dw'), encoding='utf-8').read()
    path = os.path.join(tmp, 'planted.dw')
    open(path, 'w', encoding='utf-8').write(text)
    uri = file_uri(path)
    c = start(dwc, tmp)

    r = c.request('textDocument/hover', {'textDocument': {'uri': uri}, 'position': {'line': 0, 'character': 0}})
    check('a request before initialize: -32002', error_code(r) == -32002, r)

    r = c.request('initialize', init_params(tmp, {'schema': 'box'}))
    caps = r.get('result', {}).get('capabilities', {})
    check('initialize: UTF-16 positions, incremental sync',
          caps.get('positionEncoding') == 'utf-16' and caps.get('textDocumentSync', {}).get('change') == 2, r)
    c.notify('initialized', {})
    r = c.request('initialize', init_params(tmp))
    check('a second initialize: -32600', error_code(r) == -32600, r)

    c.notify('textDocument/didOpen', {'textDocument': {'uri': uri, 'languageId': 'dogwood', 'version': 1, 'text': text}})
    d = c.diagnostics(uri, 1)['diagnostics']
    planted = [('dw-validation', span(text, 'context.input.pth')),
               ('box-unknown-action', span(text, 'Box::Action::"fs:wirte"')),
               ('box-duplicate-id', span(text, '@id("read_project")', 1))]
    expect_ranges('didOpen: the three planted mistakes at their ranges', d, planted)
    check('diagnostics carry the hint', any('did you mean `path`?' in x['message'] for x in d), d)
    check('diagnostics are errors from dwc', all(x.get('severity') == 1 and x.get('source') == 'dwc' for x in d), d)

    # fix the attribute: an incremental change of three UTF-16 units, after a
    # non-BMP character on the same line (two units, four bytes)
    at = text.index('context.input.pth') + len('context.input.')
    c.notify('textDocument/didChange', {
        'textDocument': {'uri': uri, 'version': 2},
        'contentChanges': [{'range': {'start': position(text, at), 'end': position(text, at + 3)}, 'text': 'path'}]})
    text = text[:at] + 'path' + text[at + 3:]
    d = c.diagnostics(uri, 2)['diagnostics']
    expect_ranges('didChange fixing one: two remain', d, planted[1:])

    features(c, uri, text, tmp)
    malformed(c)

    r = c.request('shutdown')
    check('shutdown', 'result' in r and r['result'] is None, r)
    r = c.request('textDocument/hover', {'textDocument': {'uri': uri}, 'position': {'line': 0, 'character': 0}})
    check('a request after shutdown: -32600', error_code(r) == -32600, r)
    c.notify('exit')
    rc = c.close()
    check('exit after shutdown: status 0', rc == 0, 'status %s; stderr %s' % (rc, c.stderr[-500:]))


def features(c, uri, text, tmp):
    """hover, completion, definition, symbols, code actions, formatting"""
    doc = {'uri': uri}
    version = [2]

    def change(new_text, old_text):
        # one incremental change: the smallest range that differs
        a = 0
        while a < min(len(new_text), len(old_text)) and new_text[a] == old_text[a]:
            a += 1
        b = 0
        while b < min(len(new_text), len(old_text)) - a and new_text[-1 - b] == old_text[-1 - b]:
            b += 1
        version[0] += 1
        c.notify('textDocument/didChange', {
            'textDocument': {'uri': uri, 'version': version[0]},
            'contentChanges': [{'range': {'start': position(old_text, a), 'end': position(old_text, len(old_text) - b)},
                                'text': new_text[a:len(new_text) - b]}]})
        return c.diagnostics(uri, version[0])['diagnostics']

    # hover on `context.input.path`: its type from Box's schema
    at = text.index('context.input.path')
    r = c.request('textDocument/hover', {'textDocument': doc, 'position': position(text, at + len('context.input.pa'))})
    res = r.get('result') or {}
    check('hover on context.input.path: String',
          res.get('contents', {}).get('value') == '`context.input.path`: `String`' and res.get('range') == span(text, 'context.input.path'), r)
    r = c.request('textDocument/hover', {'textDocument': doc, 'position': position(text, text.index('"fs:read"') + 3)})
    value = (r.get('result') or {}).get('contents', {}).get('value', '')
    check('hover on an action: its context shape', 'action Box::Action::"fs:read"' in value and 'context: {input: {operation: Box::FsReadOperation, path: String}' in value, r)

    # completion after `context.input.` lists the fields of fs:read's input
    typing = text.replace('like "*/.env" }', 'like "*/.env" && context.input. }')
    change(typing, text)
    at = typing.index('context.input. }') + len('context.input.')
    r = c.request('textDocument/completion', {'textDocument': doc, 'position': position(typing, at)})
    labels = sorted(i['label'] for i in r['result']['items'])
    check('completion after context.input.: the action\'s fields', labels == ['operation', 'path'], r)
    r = c.request('textDocument/completion', {'textDocument': doc, 'position': position(typing, typing.index('"fs:read"') + 5)})
    labels = sorted(i['label'] for i in r['result']['items'])
    check('completion in an action id: the ids starting so', labels == ['fs:read'], labels)
    change(text, typing)

    # definition of Box::Action::"fs:read": the schema, where it is declared
    r = c.request('textDocument/definition', {'textDocument': doc, 'position': position(text, text.index('"fs:read"') + 2)})
    loc = r.get('result') or {}
    target = loc.get('uri', '')
    ok = target.startswith('file://') and target.endswith('.cedarschema')
    if ok:
        from urllib.parse import unquote
        schema = open(unquote(target[len('file://'):]), encoding='utf-8').read()
        builtin = open(os.path.join(HERE, '..', '..', 'lang', 'box_actions.cedarschema'), encoding='utf-8').read()
        ok = schema == builtin and loc.get('range') == span(schema, '"fs:read"', 0) and 'action "fs:read" appliesTo' in schema
    check('definition of Box::Action::"fs:read": the schema location', ok, r)

    # document symbols: the rules by @id
    r = c.request('textDocument/documentSymbol', {'textDocument': doc})
    names = [x['name'] for x in r.get('result') or []]
    check('document symbols: rules by @id', names == ['read_project', 'write_out', 'read_project'], r)

    # the quick fix the unknown action's diagnostic names, applied
    bad = span(text, 'Box::Action::"fs:wirte"')
    r = c.request('textDocument/codeAction', {'textDocument': doc, 'range': bad, 'context': {'diagnostics': []}})
    acts = r.get('result') or []
    edits = acts[0]['edit']['changes'][uri] if len(acts) == 1 else []
    check('code action: the "did you mean" fix', len(edits) == 1 and edits[0]['range'] == bad and
          edits[0]['newText'] == 'Box::Action::"fs:write"', r)
    fixed = text.replace('Box::Action::"fs:wirte"', 'Box::Action::"fs:write"')
    d = change(fixed, text)
    check('... applied, its diagnostic is gone', [x.get('code') for x in d] == ['box-duplicate-id'], d)

    # formatting: dwc format's text, as one edit
    r = c.request('textDocument/formatting', {'textDocument': doc, 'options': {'tabSize': 4, 'insertSpaces': True}})
    edits = r.get('result')
    src = os.path.join(tmp, 'format-me.dw')
    open(src, 'w', encoding='utf-8').write(fixed)
    want = subprocess.run([DWC, 'format', src], capture_output=True, text=True, encoding='utf-8')
    got = fixed
    if isinstance(edits, list) and len(edits) == 1 and edits[0]['range'] == span(fixed, fixed):
        got = edits[0]['newText']
    check('formatting returns dwc format\'s text', want.returncode == 0 and got == want.stdout and got != fixed,
          (r, want.returncode, want.stderr))
    c.notify('textDocument/didChange', {'textDocument': {'uri': uri, 'version': 99}, 'contentChanges': [{'text': got}]})
    c.diagnostics(uri, 99)
    r = c.request('textDocument/formatting', {'textDocument': doc, 'options': {'tabSize': 2, 'insertSpaces': True}})
    check('formatting a formatted text: no edits', r.get('result') == [], r)
    c.notify('textDocument/didChange', {'textDocument': {'uri': uri, 'version': 100}, 'contentChanges': [{'text': 'permit (principal'}]})
    c.diagnostics(uri, 100)
    r = c.request('textDocument/formatting', {'textDocument': doc, 'options': {'tabSize': 2, 'insertSpaces': True}})
    check('formatting a text that does not parse: -32803, no edit', error_code(r) == -32803 and 'does not parse' in r['error']['message'], r)


def malformed(c):
    """frames and messages that are not requests: protocol errors, never a crash"""
    def err_null(code):
        return lambda m: 'error' in m and m.get('id') is None and m['error'].get('code') == code

    c.send_raw(b'Content-Length: 9\r\n\r\n{"jsonrpc')
    m = c.wait(err_null(-32700))
    check('a body that is not JSON: -32700', True, m)
    c.send_raw(b'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n')
    c.wait(err_null(-32700))
    check('a frame without Content-Length: -32700', True)
    c.send_raw(b'Content-Length: 12x\r\n\r\n')
    c.wait(err_null(-32700))
    check('a Content-Length that is not a number: -32700', True)
    c.send_raw(b'X-Long: ' + b'a' * 9000 + b'\r\n\r\n')
    c.wait(err_null(-32700))
    check('a header block over the limit: -32700', True)
    c.send_raw(b'Content-Length: 2\r\n\r\n[]')
    c.wait(err_null(-32600))
    check('a batch: -32600', True)
    c.send({'id': 77, 'method': 'shutdown'})
    m = c.wait(lambda m: m.get('id') == 77)
    check('no "jsonrpc": "2.0": -32600', error_code(m) == -32600, m)
    c.send({'jsonrpc': '2.0', 'id': 78, 'method': 12})
    m = c.wait(lambda m: m.get('id') == 78)
    check('a method that is not a string: -32600', error_code(m) == -32600, m)
    r = c.request('dwc/noSuchMethod', {})
    check('an unknown request: -32601', error_code(r) == -32601, r)
    r = c.request('shutdown', [1, 2])
    check('params that are not an object: -32602', error_code(r) == -32602, r)
    c.notify('dwc/noSuchNotification', {'x': 1})
    c.notify('$/cancelRequest', {'id': 1})
    # split across writes, two messages in one write
    body = json.dumps({'jsonrpc': '2.0', 'id': 90, 'method': 'dwc/none'}).encode()
    frame = b'Content-Length: %d\r\n\r\n' % len(body) + body
    c.send_raw(frame[:7])
    c.send_raw(frame[7:30])
    c.send_raw(frame[30:] + frame.replace(b'90', b'91'))
    a = c.wait(lambda m: m.get('id') == 90)
    b = c.wait(lambda m: m.get('id') == 91)
    check('frames split and joined across writes', error_code(a) == -32601 and error_code(b) == -32601, (a, b))
    stray = [m for m in c.pending if 'error' in m]
    check('unknown notifications get no answer', not stray, stray)


def other_sessions(dwc, tmp):
    text = open(os.path.join(HERE, 'planted.dw'), encoding='utf-8').read()
    path = os.path.join(tmp, 'planted.dw')
    uri = file_uri(path)

    # utf-8 positions when the client offers them
    c = start(dwc, tmp)
    r = c.request('initialize', init_params(tmp, {'schema': 'box'}, ['utf-8', 'utf-16']))
    check('positionEncoding utf-8 negotiated', r['result']['capabilities'].get('positionEncoding') == 'utf-8', r)
    c.notify('initialized', {})
    c.notify('textDocument/didOpen', {'textDocument': {'uri': uri, 'languageId': 'dogwood', 'version': 1, 'text': text}})
    d = c.diagnostics(uri, 1)['diagnostics']
    want = span(text, 'context.input.pth', 0, 'utf-8')
    check('utf-8 positions are bytes', any(x['range'] == want for x in d), (d, want))
    c.notify('workspace/didChangeConfiguration',
             {'settings': {'dogwood': {'path': 'dwc', 'schema': 'box', 'events': None, 'disable': ['box-duplicate-id']}}})
    d = c.diagnostics(uri, 1)['diagnostics']
    codes = sorted(x.get('code') for x in d)
    check('didChangeConfiguration: the dogwood settings replace the options', codes == ['box-unknown-action', 'dw-validation'], codes)
    c.notify('exit')
    rc = c.close()
    check('exit without shutdown: status 1', rc == 1, rc)

    # configuration from dwc.toml, no initializationOptions
    conf = os.path.join(tmp, 'dwc.toml')

    def with_config(config, test):
        open(conf, 'w').write(config)
        c = start(dwc, tmp)
        c.request('initialize', init_params(tmp))
        c.notify('initialized', {})
        c.notify('textDocument/didOpen', {'textDocument': {'uri': uri, 'languageId': 'dogwood', 'version': 1, 'text': text}})
        test(c, c.diagnostics(uri, 1)['diagnostics'])
        c.request('shutdown')
        c.notify('exit')
        check('shutdown, exit', c.close() == 0)
        os.unlink(conf)

    def disabled(c, d):
        codes = sorted(x.get('code') for x in d)
        check('dwc.toml: schema box, a rule disabled', codes == ['box-unknown-action', 'dw-validation'], codes)
    with_config('# the Box profile\n[lsp]\nschema = "box"\ndisable = ["box-duplicate-id"]\n', disabled)

    # a configuration that does not load is a diagnostic, not silence
    def refused(c, d):
        check('a schema that does not load: an error diagnostic', any(x.get('code') == 'dwc-lsp-config' for x in d), d)
        msg = c.wait(lambda m: m.get('method') == 'window/showMessage')
        check('... and a message', 'no-such-schema' in msg['params']['message'], msg)
    with_config('schema = "no-such-schema.cedarschema"\n', refused)

    # the input ends without exit: status 1, no crash
    c = start(dwc, tmp)
    c.send_raw(b'Content-Length: 5\r\n\r\n{"a":')
    rc = c.close()
    check('input ending mid-message: status 1', rc == 1, rc)


DWC = None


def temporal_and_schemas(dwc, tmp):
    """a temporal rule (event fields, a standard-library macro), a schema
    document, and a configuration reloaded when its file is saved"""
    text = open(os.path.join(HERE, 'temporal.dw'), encoding='utf-8').read()
    uri = file_uri(os.path.join(tmp, 'temporal.dw'))
    doc = {'uri': uri}
    conf = os.path.join(tmp, 'dwc.toml')
    open(conf, 'w').write('schema = "box"\n')
    c = start(dwc, tmp)
    c.request('initialize', init_params(tmp))
    c.notify('initialized', {})
    c.notify('textDocument/didOpen', {'textDocument': {'uri': uri, 'languageId': 'dogwood', 'version': 1, 'text': text}})
    d = c.diagnostics(uri, 1)['diagnostics']
    check('a temporal rule: the check\'s info finding', [x.get('code') for x in d] == ['box-macro-call'], d)
    r = c.request('textDocument/hover', {'textDocument': doc, 'position': position(text, text.index('status') + 1)})
    value = (r.get('result') or {}).get('contents', {}).get('value', '')
    check('hover on an event field: its type', value.startswith('`output.status`: `Long`'), r)
    typing = text.replace('{ output.status: 200 }', '{ output. }')
    c.notify('textDocument/didChange', {'textDocument': {'uri': uri, 'version': 2}, 'contentChanges': [{'text': typing}]})
    r = c.request('textDocument/completion', {'textDocument': doc, 'position': position(typing, typing.index('output. }') + 7)})
    labels = [i['label'] for i in r['result']['items']]
    check('completion in a predicate: the event\'s output fields', labels == ['status'], labels)
    c.notify('textDocument/didChange', {'textDocument': {'uri': uri, 'version': 3}, 'contentChanges': [{'text': text}]})
    c.diagnostics(uri, 3)
    r = c.request('textDocument/definition', {'textDocument': doc, 'position': position(text, text.index('count_within') + 3)})
    loc = r.get('result') or {}
    from urllib.parse import unquote
    target = unquote(loc.get('uri', 'file://')[len('file://'):])
    ok = os.path.isfile(target) and target.endswith('.dw')
    if ok:
        lib = open(target, encoding='utf-8').read()
        ok = loc['range'] == span(lib, 'count_within') and 'def temporal count_within(' in lib
    check('definition of a standard-library macro: its def', ok, r)
    r = c.request('textDocument/hover', {'textDocument': doc, 'position': position(text, text.index('count_within') + 3)})
    value = (r.get('result') or {}).get('contents', {}).get('value', '')
    check('hover on a macro: its definition', 'def temporal count_within(?w, ?s)' in value, r)

    # a schema document: its parser's errors, its declarations as symbols
    schema = 'entity User;\naction "view" appliesTo { principal: User, resource: Photo };\n'
    suri = file_uri(os.path.join(tmp, 'mine.cedarschema'))
    c.notify('textDocument/didOpen', {'textDocument': {'uri': suri, 'languageId': 'cedarschema', 'version': 1, 'text': schema}})
    d = c.diagnostics(suri, 1)['diagnostics']
    check('a schema document: its error at the undeclared type',
          len(d) == 1 and d[0]['severity'] == 1 and d[0]['range']['start'] == position(schema, schema.index('Photo')), d)
    fixed = schema.replace('resource: Photo', 'resource: User')
    c.notify('textDocument/didChange', {'textDocument': {'uri': suri, 'version': 2}, 'contentChanges': [{'text': fixed}]})
    check('... fixed: none', c.diagnostics(suri, 2)['diagnostics'] == [])
    r = c.request('textDocument/documentSymbol', {'textDocument': {'uri': suri}})
    check('schema symbols: entity types and actions', [x['name'] for x in r['result']] == ['User', 'Action::"view"'], r)

    # the schema named by dwc.toml, reloaded when the file is saved
    spath = os.path.join(tmp, 'mine.cedarschema')
    open(spath, 'w').write(fixed)
    open(conf, 'w').write('schema = "mine.cedarschema"\n')
    c.notify('textDocument/didSave', {'textDocument': {'uri': file_uri(conf)}})
    d = c.diagnostics(uri)['diagnostics']
    check('saving dwc.toml reloads it: the rule against the new schema',
          'box-macro-call' not in [x.get('code') for x in d] and any('http:request' in x['message'] for x in d), d)
    c.request('shutdown')
    c.notify('exit')
    check('shutdown, exit', c.close() == 0)
    os.unlink(conf)
    os.unlink(spath)


def bench_runs(dwc, tmp):
    """tests/bench/lsp_bench.py still runs (a few rules and changes: figures, not a bound)"""
    bench = os.path.join(HERE, '..', 'bench', 'lsp_bench.py')
    r = subprocess.run([sys.executable, bench, dwc, '40', '3'], capture_output=True, text=True, timeout=300)
    check('tests/bench/lsp_bench.py runs', r.returncode == 0 and r.stdout.count('after a change: p50') == 2, r.stdout + r.stderr)


def main():
    global DWC
    dwc = DWC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else 'build/dwc')
    tmp = tempfile.mkdtemp(prefix='dwc-lsp-')
    try:
        for part in (main_session, other_sessions, temporal_and_schemas, bench_runs):
            try:
                part(dwc, tmp)
            except Exception as e:   # noqa: BLE001 - a failure, counted
                check(part.__name__, False, '%s: %s' % (type(e).__name__, e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return TALLY.summary()


if __name__ == '__main__':
    sys.exit(main())
