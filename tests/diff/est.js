#!/usr/bin/env node
'use strict';
// Cedar's JSON policy format against Cedar itself (cedar-wasm): for every policy set given
// (Cedar's corpus and example files), checks
//   cedar-to-json: `dwc translate-policy --direction cedar-to-json` equals, policy by policy,
//                  cedar-wasm's policyToJson / templateToJson of each policy (policySetTextToParts);
//   json-to-cedar: dwc's text for a set of Cedar's JSON equals cedar-wasm's policyToText /
//                  templateToText of each, in Cedar's order (the policies by id, then templates);
//   round trip:    dwc's json-to-cedar text, read back by dwc, gives the same JSON.
// A set cedar-wasm cannot parse (or dwc refuses as Dogwood) is skipped and counted.
//
//   node tests/diff/est.js [--dwc build/dwc] [--module DIR] [--limit N] [--every K] [--show K] FILE|DIR...
// Last line: "<P> passed, <F> failed" (policy sets); exit 1 if F > 0.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const o = { dwc: 'build/dwc', module: 'build/diff/node/node_modules/@cedar-policy/cedar-wasm', limit: Infinity, every: 1, show: 10, inputs: [] };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i], v = () => process.argv[++i];
  if (a === '--dwc') o.dwc = v();
  else if (a === '--module') o.module = v();
  else if (a === '--limit') o.limit = Number(v());
  else if (a === '--every') o.every = Number(v());    // every K-th file only (make test's sample)
  else if (a === '--show') o.show = Number(v());
  else o.inputs.push(a);
}
const cedar = require(path.resolve(o.module, 'nodejs', 'cedar_wasm.js'));

const files = [];
const walk = (p) => {
  const st = fs.statSync(p);
  if (st.isDirectory()) for (const f of fs.readdirSync(p).sort()) walk(path.join(p, f));
  else if (p.endsWith('.cedar')) files.push(p);
};
o.inputs.forEach(walk);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-est-'));
const dwc = (args, input) => {
  const r = spawnSync(o.dwc, args, { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  return { rc: r.status, out: r.stdout, err: r.stderr };
};
// Cedar's value of a JSON number is a double in JS: compare through the same parse on both sides
const canon = (x) => JSON.stringify(x);
const pad = (i) => `p${String(i).padStart(6, '0')}`;

let pass = 0, fail = 0, skipped = 0, policies = 0, shown = 0;
const bad = (f, what, want, got) => {
  fail++;
  if (shown++ < o.show) console.log(`FAIL ${f}: ${what}\n  cedar: ${String(want).slice(0, 600)}\n  dwc:   ${String(got).slice(0, 600)}`);
};

for (const f of files.filter((_, i) => i % o.every === 0).slice(0, o.limit)) {
  const text = fs.readFileSync(f, 'utf8');
  const parts = cedar.policySetTextToParts(text);
  if (parts.type !== 'success') { skipped++; continue; }
  const mine = dwc(['translate-policy', '--direction', 'cedar-to-json'], text);
  if (mine.rc !== 0) {
    if (/Dogwood|has no form/.test(mine.err)) { skipped++; continue; }
    bad(f, 'cedar-to-json refused', 'a policy set', mine.err); continue;
  }
  let set;
  try { set = JSON.parse(mine.out); } catch (e) { bad(f, 'cedar-to-json is not JSON', '', mine.out); continue; }
  const statics = Object.values(set.staticPolicies), templates = Object.values(set.templates);
  // Cedar's JSON of each policy, in source order (parts keeps it; dwc's maps keep it too)
  const theirs = [];
  let ok = true;
  parts.policies.forEach((p) => { const j = cedar.policyToJson(p); if (j.type !== 'success') ok = false; else theirs.push(j.json); });
  const theirsT = [];
  parts.policy_templates.forEach((p) => { const j = cedar.templateToJson(p); if (j.type !== 'success') ok = false; else theirsT.push(j.json); });
  if (!ok) { skipped++; continue; }
  policies += theirs.length + theirsT.length;
  if (statics.length !== theirs.length || templates.length !== theirsT.length) {
    bad(f, 'cedar-to-json: policy count', `${theirs.length}+${theirsT.length}`, `${statics.length}+${templates.length}`); continue;
  }
  const diff = theirs.findIndex((j, i) => canon(j) !== canon(statics[i]));
  if (diff >= 0) { bad(f, `cedar-to-json: policy ${diff}`, canon(theirs[diff]), canon(statics[diff])); continue; }
  const diffT = theirsT.findIndex((j, i) => canon(j) !== canon(templates[i]));
  if (diffT >= 0) { bad(f, `cedar-to-json: template ${diffT}`, canon(theirsT[diffT]), canon(templates[diffT])); continue; }
  // json-to-cedar on Cedar's JSON, ids chosen so Cedar's order (by id) is the source order
  const jset = { staticPolicies: {}, templates: {}, templateLinks: [] };
  theirs.forEach((j, i) => { jset.staticPolicies[pad(i)] = j; });
  theirsT.forEach((j, i) => { jset.templates['t' + pad(i)] = j; });
  const want = theirs.map((j) => cedar.policyToText(j)).concat(theirsT.map((j) => cedar.templateToText(j)));
  if (want.some((t) => t.type !== 'success')) { skipped++; continue; }
  const wantText = want.map((t) => t.text).join('\n\n') + '\n';
  const back = dwc(['translate-policy', '--direction', 'json-to-cedar'], JSON.stringify(jset));
  if (back.rc !== 0 || back.out !== wantText) { bad(f, 'json-to-cedar', wantText, back.rc ? back.err : back.out); continue; }
  // and dwc reads its own text back to the same JSON
  const again = dwc(['translate-policy', '--direction', 'cedar-to-json'], back.out);
  let aset = null;
  try { aset = JSON.parse(again.out); } catch (e) { /* reported below */ }
  const norm = (s) => s && canon(Object.values(s.staticPolicies).concat(Object.values(s.templates)));
  if (!aset || norm(aset) !== norm({ staticPolicies: jset.staticPolicies, templates: jset.templates })) {
    bad(f, 'round trip', norm({ staticPolicies: jset.staticPolicies, templates: jset.templates }), again.rc ? again.err : norm(aset)); continue;
  }
  pass++;
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`est.js: ${files.length} files, ${policies} policies compared, ${skipped} skipped (not Cedar, or Cedar refuses them)`);
console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
