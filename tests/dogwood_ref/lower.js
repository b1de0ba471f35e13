#!/usr/bin/env node
'use strict';
// Each DIR/*.json is one `dwc dogwood lower --format json` output (dogwood.md §18): Cedar itself
// (cedar-wasm) must parse its policies and both schema forms, and validate the policies (strict)
// against each without an error; and dwc reads them back: `dwc validate` passes on the policies
// against each schema form.  Last line: "<P> passed, <F> failed" (outputs).
//   node tests/dogwood_ref/lower.js --module DIR [--dwc build/dwc] OUTDIR
const fs = require('fs');
const path = require('path');
const os = require('os');
const { spawnSync } = require('child_process');
let mod = 'build/diff/node/node_modules/@cedar-policy/cedar-wasm', dir = null, dwc = 'build/dwc';
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--module') mod = process.argv[++i];
  else if (process.argv[i] === '--dwc') dwc = process.argv[++i];
  else dir = process.argv[i];
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dw-lower-'));
const cedar = require(path.resolve(mod, 'nodejs', 'cedar_wasm.js'));
let pass = 0, fail = 0;
const bad = (f, why) => { fail++; console.log(`FAIL ${f}: ${why}`); };
const msgs = (r) => (r.errors || []).map((e) => e.message).join('; ');
for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.json')).sort()) {
  let o;
  try { o = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')); } catch (e) { bad(f, `not JSON: ${e.message}`); continue; }
  const ps = cedar.checkParsePolicySet({ staticPolicies: o.cedar_policies });
  if (ps.type !== 'success') { bad(f, `Cedar cannot parse the policies: ${msgs(ps)}`); continue; }
  let ok = true;
  for (const [form, schema] of [['text', o.cedar_schema], ['json', o.cedar_schema_json]]) {
    const sc = cedar.checkParseSchema(schema);
    if (sc.type !== 'success') { bad(f, `Cedar cannot parse the ${form} schema: ${msgs(sc)}`); ok = false; break; }
    const v = cedar.validate({ validationSettings: { mode: 'strict' }, schema, policies: { staticPolicies: o.cedar_policies } });
    if (v.type !== 'success') { bad(f, `validation against the ${form} schema failed to run: ${msgs(v)}`); ok = false; break; }
    if (v.validationErrors.length) {
      bad(f, `Cedar finds ${v.validationErrors.length} error(s) against the ${form} schema: ${v.validationErrors[0].error.message}`);
      ok = false; break;
    }
    const pf = path.join(tmp, 'p.cedar'), sf = path.join(tmp, form === 'text' ? 's.cedarschema' : 's.json');
    fs.writeFileSync(pf, o.cedar_policies);
    fs.writeFileSync(sf, form === 'text' ? schema : JSON.stringify(schema));
    const r = spawnSync(dwc, ['validate', '-p', pf, '-s', sf], { encoding: 'utf8' });
    if (r.status !== 0) { bad(f, `dwc does not validate its own lowering against the ${form} schema: ${(r.stdout + r.stderr).split('\n')[0]}`); ok = false; break; }
  }
  if (ok) pass++;
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
