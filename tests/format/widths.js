#!/usr/bin/env node
'use strict';
// Line width as Cedar's formatter measures it, character by character: for each sampled code
// point C, three policies `... == "C" + 'a'*k` for k = 53, 52, 51 sit at the 80-column edge, so
// whether each stays on one line tells C's width (0, 1, 2 or more); dwc format and cedar-wasm's
// formatPolicies must agree on every one.  Emoji sequences are checked the same way.
//   node tests/format/widths.js --dwc build/dwc --module DIR [--step S]
// Last line: "<P> passed, <F> failed".
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const o = { dwc: 'build/dwc', module: 'build/diff/node/node_modules/@cedar-policy/cedar-wasm', step: 61, show: 20 };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i], v = () => process.argv[++i];
  if (a === '--dwc') o.dwc = v(); else if (a === '--module') o.module = v(); else if (a === '--step') o.step = Number(v()); else if (a === '--show') o.show = Number(v());
  else { console.error(`widths.js: unknown argument ${a}`); process.exit(2); }
}
const cedar = require(path.resolve(o.module, 'nodejs', 'cedar_wasm.js'));
const samples = [];
for (let cp = 0x80; cp < 0x32000; cp += o.step) if (cp < 0xD800 || cp >= 0xE000) samples.push(String.fromCodePoint(cp));
samples.push('\u263a\ufe0f', '\u{1f468}\u200d\u{1f469}', '\u{1f1e6}\u{1f1e8}', '\u{1F9D1}\u{1F3FD}', 'e\u0301', '\t', '\u0001');
const lines = [];
for (const s of samples) for (const n of [53, 52, 51]) lines.push(`permit(principal,action,resource) when { principal.x == "${s}${'a'.repeat(n)}" };`);
const oneLine = out => out.split('\n\npermit').map(p => p.split('\n')[1].startsWith('when {'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dwc-widths-'));
let A = [], B = [];
for (let k = 0; k < lines.length; k += 600) {
  const text = lines.slice(k, k + 600).join('\n');
  const a = cedar.formatPolicies({ policyText: text, lineWidth: 80, indentWidth: 2 });
  const f = path.join(tmp, 'w.cedar');
  fs.writeFileSync(f, text);
  const r = spawnSync(o.dwc, ['format', f], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (a.type !== 'success' || r.status !== 0) { console.log(`batch ${k}: cedar ${a.type}, dwc exit ${r.status}`); process.exit(1); }
  A = A.concat(oneLine(a.formatted_policy)); B = B.concat(oneLine(r.stdout));
}
fs.rmSync(tmp, { recursive: true, force: true });
let pass = 0, fail = 0;
for (let i = 0; i < samples.length; i++) {
  const wa = A.slice(3 * i, 3 * i + 3).join(), wb = B.slice(3 * i, 3 * i + 3).join();
  if (wa === wb) pass++;
  else if (fail++ < o.show) console.log(`FAIL ${[...samples[i]].map(c => 'U+' + c.codePointAt(0).toString(16)).join(' ')}: cedar ${wa}, dwc ${wb}`);
}
console.log(`${samples.length} characters and sequences measured as Cedar measures them: ${pass}`);
console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
