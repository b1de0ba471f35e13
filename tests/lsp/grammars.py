#!/usr/bin/env python3
"""The editor files of docs/editors/ (issue 20): the VS Code extension's
manifest and TextMate grammars are JSON whose every file, language, scope
and regular expression is there and compiles; the Vim syntax files load
without an error and colour a policy's words as they should (when vim is
installed).

    tests/lsp/grammars.py          (prints "N passed, N failed")
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
ED = os.path.join(ROOT, 'docs', 'editors')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import Tally  # noqa: E402
TALLY = Tally()
check = TALLY.check


def values(node, keys, out):
    """every string value of one of keys, anywhere in a JSON tree"""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in keys and isinstance(v, str):
                out.append(v)
            else:
                values(v, keys, out)
    elif isinstance(node, list):
        for v in node:
            values(v, keys, out)


def vscode():
    vs = os.path.join(ED, 'vscode')
    pkg = json.load(open(os.path.join(vs, 'package.json')))
    json.load(open(os.path.join(vs, 'language-configuration.json')))
    langs = {l['id']: l for l in pkg['contributes']['languages']}
    exts = sorted(e for l in langs.values() for e in l['extensions'])
    check('package.json: the four languages', exts == ['.cedar', '.cedarschema', '.dw', '.dwschema'], exts)
    check('package.json: main exists', os.path.exists(os.path.join(vs, pkg['main'])), pkg['main'])
    scopes = {}
    for g in pkg['contributes']['grammars']:
        path = os.path.join(vs, g['path'])
        grammar = json.load(open(path))
        scopes[grammar['scopeName']] = grammar
        check('%s: language %s, scope %s' % (g['path'], g['language'], g['scopeName']),
              g['language'] in langs and grammar['scopeName'] == g['scopeName'])
    for scope, grammar in scopes.items():
        bad = []
        rx = []
        values(grammar, ('match', 'begin', 'end'), rx)
        for r in rx:
            try:
                re.compile(r)
            except re.error as e:
                bad.append('%s: %s' % (r, e))
        check('%s: %d regular expressions compile' % (scope, len(rx)), not bad, bad)
        inc = []
        values(grammar, ('include',), inc)
        missing = [i for i in inc if (i.startswith('#') and i[1:] not in grammar.get('repository', {}))
                   or (not i.startswith('#') and i not in scopes)]
        check('%s: every include resolves' % scope, not missing, missing)
    # the words of a policy get the scopes they should (the grammar's own expressions)
    expr = scopes['source.dogwood']['repository']['expression']['patterns']

    def scope_of(word):
        for p in expr:
            if 'match' in p and 'name' in p and re.fullmatch(p['match'], word):
                return p['name']
        return None
    want = {'permit': 'keyword.other.effect.dogwood', 'unless': 'keyword.control.dogwood', 'like': 'keyword.operator.word.dogwood',
            'context': 'variable.language.dogwood', '?principal': 'variable.parameter.slot.dogwood', '42': 'constant.numeric.integer.dogwood'}
    got = {w: scope_of(w) for w in want}
    check('source.dogwood: keyword scopes', got == want, got)


def vim():
    exe = shutil.which('vim')
    if not exe:
        print('skip vim syntax files: vim is not installed')
        return
    tmp = tempfile.mkdtemp(prefix='dwc-vim-')
    try:
        policy = os.path.join(tmp, 'p.dw')
        open(policy, 'w').write('// a rule\n@id("r")\npermit (principal, action == Box::Action::"fs:read", resource)\n'
                                'unless temporal { formerly within 1h Box::Action::"shell:exec"::response{ output.status: 0 } };\n')
        probes = [(1, 4, 'dwComment'), (2, 1, 'dwAnnotation'), (3, 1, 'dwEffect'), (3, 9, 'dwVariable'),
                  (3, 30, 'dwTypePath'), (3, 44, 'dwString'), (4, 19, 'dwTemporalOp'), (4, 35, 'dwWindow'),
                  (4, 65, 'dwEventKind')]
        out = os.path.join(tmp, 'out')
        cmds = ['set rtp^=' + os.path.join(ED, 'vim'), 'filetype on', 'syntax on', 'edit ' + policy,
                'let r = [&filetype, v:errmsg]']
        for line, col, _ in probes:
            cmds.append('call add(r, synIDattr(synID(%d, %d, 1), "name"))' % (line, col))
        for ext in ('cedar', 'cedarschema', 'dwschema'):
            f = os.path.join(tmp, 'x.' + ext)
            open(f, 'w').write('// x\n')
            cmds += ['edit ' + f, 'call add(r, &filetype . ":" . b:current_syntax . ":" . v:errmsg)']
        cmds += ['call writefile(r, "%s")' % out, 'qa!']
        script = os.path.join(tmp, 'probe.vim')   # vim takes at most ten -c commands
        open(script, 'w').write('\n'.join(cmds) + '\n')
        subprocess.run([exe, '-u', 'NONE', '-N', '-es', '-i', 'NONE', '-S', script], timeout=60,
                       stdin=subprocess.DEVNULL, capture_output=True)
        got = open(out).read().split('\n') if os.path.exists(out) else []
        check('vim: .dw is dogwood, no error', got[:2] == ['dogwood', ''], got[:2])
        names = got[2:2 + len(probes)]
        check('vim: the words of a rule', names == [p[2] for p in probes], list(zip(names, [p[2] for p in probes])))
        rest = got[2 + len(probes):2 + len(probes) + 3]
        check('vim: cedar, cedarschema, dwschema load', rest == ['cedar:cedar:', 'cedarschema:cedarschema:', 'dwschema:dwschema:'], rest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    for part in (vscode, vim):
        try:
            part()
        except Exception as e:   # noqa: BLE001 - counted
            check(part.__name__, False, '%s: %s' % (type(e).__name__, e))
    return TALLY.summary()


if __name__ == '__main__':
    sys.exit(main())
