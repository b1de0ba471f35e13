#!/usr/bin/env node
'use strict';
// Differential test of `dwc format` against Cedar's own formatter (cedar-wasm's
// formatPolicies, @cedar-policy/cedar-wasm 4.13.0), over every Cedar policy set
// of the corpus and the repository.
//
//   node tests/format/diff.js --dwc build/dwc --module DIR [--sample K] [--show N] DIR_OR_FILE...
//
// Every .cedar file under the given directories (sorted, so --sample K, which
// keeps every K-th file, is deterministic) is formatted by both with the default
// configuration, and every 7th also with line width 40 and indent 4.  A case
// agrees when both print the same bytes, or both refuse the text.  Last line:
// "<P> passed, <F> failed"; exit 1 if F > 0.
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const o = { dwc: 'build/dwc', module: null, sample: 1, show: 10, paths: [] };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  const v = () => process.argv[++i];
  if (a === '--dwc') o.dwc = v();
  else if (a === '--module') o.module = v();
  else if (a === '--sample') o.sample = Number(v());
  else if (a === '--show') o.show = Number(v());
  else o.paths.push(a);
}
const cand = [o.module, process.env.CEDAR_WASM_DIR, 'build/diff/node/node_modules/@cedar-policy/cedar-wasm'].filter(Boolean);
let cedar = null;
for (const d of cand) {
  const f = path.resolve(d, 'nodejs', 'cedar_wasm.js');
  if (fs.existsSync(f)) { cedar = require(f); break; }
}
if (!cedar) { console.error('diff.js: cannot find @cedar-policy/cedar-wasm (tests/format/run.sh installs it)'); process.exit(2); }

function walk(p, out) {
  let st;
  try { st = fs.statSync(p); } catch (e) { return; }
  if (st.isDirectory()) {
    for (const e of fs.readdirSync(p).sort()) {
      if (e === 'node_modules' || e === '.git' || e === 'build') continue;   // build/corpus is given by name
      walk(path.join(p, e), out);
    }
  } else if (p.endsWith('.cedar')) out.push(p);
}
const seen = new Set();
let files = [];
for (const p of o.paths) {
  const l = [];
  walk(p, l);
  for (const f of l) {
    const r = fs.realpathSync(f);
    if (!seen.has(r)) { seen.add(r); files.push(f); }
  }
}
files = files.filter((_, i) => i % o.sample === 0);

let pass = 0, fail = 0, identical = 0, bothRefuse = 0, shown = 0;
function report(msg) { if (shown++ < o.show) console.log(msg); }
function firstDiff(a, b) {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const line = a.slice(0, i).split('\n').length;
  return `line ${line}: cedar ${JSON.stringify(a.slice(i, i + 60))} dwc ${JSON.stringify(b.slice(i, i + 60))}`;
}
for (let k = 0; k < files.length; k++) {
  const file = files[k];
  const text = fs.readFileSync(file, 'utf8');
  const configs = [[80, 2]];
  if (k % 7 === 0) configs.push([40, 4]);
  for (const [lw, iw] of configs) {
    const ans = cedar.formatPolicies({ policyText: text, lineWidth: lw, indentWidth: iw });
    const r = spawnSync(o.dwc, ['format', '-l', String(lw), '-i', String(iw), file], { encoding: 'utf8', maxBuffer: 1 << 28 });
    const tag = `${file} (-l ${lw} -i ${iw})`;
    if (ans.type === 'success') {
      if (r.status === 0 && r.stdout === ans.formatted_policy) { pass++; identical++; }
      else if (r.status !== 0) { fail++; report(`FAIL ${tag}: Cedar formats it, dwc refuses: ${(r.stderr || String(r.error)).split('\n')[0]}`); }
      else { fail++; report(`FAIL ${tag}: ${firstDiff(ans.formatted_policy, r.stdout)}`); }
    } else if (r.status !== 0) { pass++; bothRefuse++; }
    else { fail++; report(`FAIL ${tag}: Cedar refuses (${(ans.errors[0] || {}).message}), dwc formats it`); }
  }
}
console.log(`${files.length} files: ${identical} byte-identical to Cedar's formatter, ${bothRefuse} refused by both`);
console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
