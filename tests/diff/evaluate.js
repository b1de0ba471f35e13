#!/usr/bin/env node
'use strict';
// Differential test of `dwc evaluate` against Cedar (@cedar-policy/cedar-wasm 4.13.0), which has
// no evaluate of its own: for each generated case (gen.js genEvalCase: a schema, entities, one
// request, K expressions), dwc evaluates each expression; a value V it prints is checked by
// Cedar's isAuthorized of `permit(principal, action, resource) when { (EXPR) == (V) };` (allow,
// no error: V parses as Cedar and is Cedar's value), and an error by Cedar reporting one for
// `when { (EXPR) == (EXPR) }` with the same message.
//
//   node tests/diff/evaluate.js [-n CASES] [-k EXPRS] [--seed S] [--dwc build/dwc] [--module DIR] [--show N]
//
// Last line: "<P> passed, <F> failed" over the expressions; exit 1 if F > 0.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { genEvalCase, cedarStr } = require('./gen');

const o = { n: 100, k: 12, seed: 1, dwc: 'build/dwc', module: 'build/diff/node/node_modules/@cedar-policy/cedar-wasm', show: 20 };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i], v = () => process.argv[++i];
  if (a === '-n') o.n = Number(v()); else if (a === '-k') o.k = Number(v()); else if (a === '--seed') o.seed = Number(v());
  else if (a === '--dwc') o.dwc = v(); else if (a === '--module') o.module = v(); else if (a === '--show') o.show = Number(v());
  else { console.error(`evaluate.js: unknown argument ${a}`); process.exit(2); }
}
const cedar = require(path.resolve(o.module, 'nodejs', 'cedar_wasm.js'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dwc-eval-'));
const uidText = (u) => `${u.type}::${cedarStr(u.id)}`;

function cedarRun(c, policy) {
  return cedar.isAuthorized({ principal: c.request.principal, action: c.request.action, resource: c.request.resource,
    context: c.request.context, schema: c.schemaText, validateRequest: c.request.validateRequest,
    policies: { staticPolicies: policy }, entities: c.entities });
}

let pass = 0, fail = 0, values = 0, errors = 0, shown = 0;
const kinds = {};
function bad(c, e, why) {
  fail++;
  if (shown++ < o.show) console.log(`FAIL seed ${c.seed}: ${e}\n  ${why}`);
}
for (let i = 0; i < o.n; i++) {
  const c = genEvalCase(o.seed * 100003 + i, o.k);
  fs.writeFileSync(path.join(tmp, 's.cedarschema'), c.schemaText);
  fs.writeFileSync(path.join(tmp, 'e.json'), JSON.stringify(c.entities));
  fs.writeFileSync(path.join(tmp, 'c.json'), JSON.stringify(c.request.context));
  const args = ['evaluate', '-s', path.join(tmp, 's.cedarschema'), '--entities', path.join(tmp, 'e.json'),
    '-l', uidText(c.request.principal), '-a', uidText(c.request.action), '-r', uidText(c.request.resource),
    '-c', path.join(tmp, 'c.json'), '--request-validation', String(c.request.validateRequest)];
  for (const e of c.exprs) {
    const r = spawnSync(o.dwc, args.concat(['--', e]), { encoding: 'utf8' });
    const lines = (r.stdout || '').split('\n');
    if (r.status === 0) {
      values++;
      const v = lines[1];
      const kind = /^[a-z]+\(/.test(v) ? v.replace(/\(.*/, '') : v[0] === '"' ? 'string' : v[0] === '[' ? 'set' : v[0] === '{' ? 'record'
        : /^(true|false)$/.test(v) ? 'bool' : /^-?\d/.test(v) ? 'long' : 'entity';
      kinds[kind] = (kinds[kind] || 0) + 1;
      const ans = cedarRun(c, `permit(principal, action, resource) when { (${e}) == (${v}) };`);
      if (ans.type !== 'success') { bad(c, e, `dwc: ${v}; Cedar refused: ${ans.errors.map((x) => x.message).join('; ')}`); continue; }
      const errs = ans.response.diagnostics.errors;
      if (ans.response.decision !== 'allow' || errs.length)
        bad(c, e, `dwc: ${v}; Cedar: ${ans.response.decision} ${errs.map((x) => x.error.message).join('; ')}`);
      else pass++;
    } else if (r.status === 1) {
      errors++;
      // the cause runs to the end (it may hold newlines), less a help line
      const out = r.stdout || '', at = out.indexOf('  ╰─▶ ');
      let cause = at >= 0 ? out.slice(at + 6) : (lines.find((l) => l.startsWith('  × ')) || '').slice(4);
      cause = cause.replace(/\n  help: [^\n]*\n$/, '\n').replace(/\n$/, '');
      const ans = cedarRun(c, `permit(principal, action, resource) when { (${e}) == (${e}) };`);
      if (ans.type !== 'success') {        // Cedar refused the request, the entities or the expression: so did dwc
        kinds['refused'] = (kinds['refused'] || 0) + 1;
        pass++;
        continue;
      }
      const errs = ans.response.diagnostics.errors;
      if (!errs.length) bad(c, e, `dwc: error ${cause}; Cedar: ${ans.response.decision}, no error`);
      else if (!errs.some((x) => x.error.message === cause)) bad(c, e, `dwc: ${cause}\n  Cedar: ${errs[0].error.message}`);
      else { kinds['error'] = (kinds['error'] || 0) + 1; pass++; }
    } else bad(c, e, `dwc exit ${r.status}: ${r.stdout}${r.stderr}`);
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`expressions: ${values + errors} (${values} values, ${errors} errors); by kind: ${JSON.stringify(kinds)}`);
console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
