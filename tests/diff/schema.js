#!/usr/bin/env node
'use strict';
// dwc translate-schema against Cedar itself (cedar-wasm).  dwc writes schemas resolved, Cedar
// as written, so the check is on meaning, each through both tools, for every .cedarschema given:
//   Cedar parses dwc's JSON (cedar-to-json) and dwc's text (json-to-cedar of it);
//   dwc reads Cedar's JSON of the text (schemaToJson) to the same resolved schema as the text;
//   dwc reads Cedar's text of dwc's JSON (schemaToText) to the same resolved schema.
// "The same resolved schema" is compared as dwc's json-to-cedar text (deterministic: sorted).
// A schema Cedar or dwc refuses is skipped and counted.
//   node tests/diff/schema.js [--dwc build/dwc] [--module DIR] [--every K] [--show K] FILE|DIR...
// Last line: "<P> passed, <F> failed"; exit 1 if F > 0.
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const o = { dwc: 'build/dwc', module: 'build/diff/node/node_modules/@cedar-policy/cedar-wasm', every: 1, show: 10, inputs: [] };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i], v = () => process.argv[++i];
  if (a === '--dwc') o.dwc = v();
  else if (a === '--module') o.module = v();
  else if (a === '--every') o.every = Number(v());
  else if (a === '--show') o.show = Number(v());
  else o.inputs.push(a);
}
const cedar = require(path.resolve(o.module, 'nodejs', 'cedar_wasm.js'));
const files = [];
const walk = (p) => {
  if (fs.statSync(p).isDirectory()) for (const f of fs.readdirSync(p).sort()) walk(path.join(p, f));
  else if (p.endsWith('.cedarschema')) files.push(p);
};
o.inputs.forEach(walk);
const tr = (dir, input) => {
  const r = spawnSync(o.dwc, ['translate-schema', '--direction', dir], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  return r.status === 0 ? r.stdout : null;
};
let pass = 0, fail = 0, skipped = 0, shown = 0;
const bad = (f, why, a, b) => { fail++; if (shown++ < o.show) console.log(`FAIL ${f}: ${why}\n  want: ${String(a).slice(0, 400)}\n  got:  ${String(b).slice(0, 400)}`); };
for (const f of files.filter((_, i) => i % o.every === 0)) {
  const text = fs.readFileSync(f, 'utf8');
  const theirsJ = cedar.schemaToJson(text);
  const oursJ = tr('cedar-to-json', text);
  if (theirsJ.type !== 'success' || oursJ === null) { skipped++; continue; }
  const canon = tr('json-to-cedar', oursJ);                     // dwc's resolved reading of the text
  if (canon === null) { bad(f, 'dwc cannot read its own JSON', oursJ, ''); continue; }
  if (cedar.checkParseSchema(JSON.parse(oursJ)).type !== 'success') { bad(f, 'Cedar cannot parse dwc\'s JSON', '', oursJ); continue; }
  if (cedar.checkParseSchema(canon).type !== 'success') { bad(f, 'Cedar cannot parse dwc\'s text', '', canon); continue; }
  const viaCedarJson = tr('json-to-cedar', JSON.stringify(theirsJ.json));
  if (viaCedarJson !== canon) { bad(f, 'Cedar\'s JSON of the text means something else to dwc', canon, viaCedarJson); continue; }
  const theirsT = cedar.schemaToText(JSON.parse(oursJ));
  if (theirsT.type !== 'success') { bad(f, 'Cedar cannot print dwc\'s JSON as text', '', JSON.stringify(theirsT.errors)); continue; }
  const back = tr('cedar-to-json', theirsT.text);
  const viaCedarText = back === null ? null : tr('json-to-cedar', back);
  if (viaCedarText !== canon) { bad(f, 'Cedar\'s text of dwc\'s JSON means something else to dwc', canon, viaCedarText); continue; }
  pass++;
}
console.log(`schema.js: ${files.length} files, ${skipped} skipped (refused by Cedar or dwc)`);
console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
