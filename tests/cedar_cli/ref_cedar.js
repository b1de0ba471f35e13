#!/usr/bin/env node
// ref_cedar.js - a `cedar` built on cedar-wasm 4.13 (validate, authorize, format, --version) with
// Cedar CLI 4.x's flags, exit codes and output shape: the reference that tests/cedar_cli/heldout.sh and
// tests/cedar_cli.sh judge dwc-as-cedar against.  CEDAR_WASM names cedar_wasm.js (build/diff/node).
// `--schema-format human` is taken as cedar, as Cedar 3.x did (and dwc does).
const fs = require('fs');
const cedar = require(process.env.CEDAR_WASM);
const argv = process.argv.slice(2);
if (argv[0] === '--version') { console.log('cedar-wasm ' + cedar.getCedarVersion()); process.exit(0); }
const cmd = argv[0]; const o = {};
for (let i = 1; i < argv.length; i++) {
  const a = argv[i];
  const m = { '-p': 'policies', '--policies': 'policies', '-s': 'schema', '--schema': 'schema', '--schema-format': 'schema-format',
    '--entities': 'entities', '--request-json': 'request-json', '-k': 'links', '--template-linked': 'links', '--policy-format': 'policy-format' }[a];
  if (a === '-v' || a === '--verbose') o.verbose = true; else if (a === '--check') o.check = true;
  else if (m) o[m] = argv[++i]; else { console.error('ref cedar: unknown argument ' + a); process.exit(2); }
}
const read = (f, what) => { try { return fs.readFileSync(f, 'utf8'); } catch (e) { console.log(`failed to open ${what} file ${f}`); process.exit(1); } };
const fail = (x) => { console.log(JSON.stringify(x, null, 1)); process.exit(1); };
function schemaOf() {
  if (!o.schema) return undefined;
  const t = read(o.schema, 'schema');
  const f = o['schema-format'] || 'cedar';
  if (!['cedar', 'json', 'human'].includes(f)) { console.error(`invalid value '${f}' for '--schema-format'`); process.exit(2); }
  return f === 'json' ? JSON.parse(t) : t;
}
function uid(s) { const m = /^(.*)::(".*")$/s.exec(s); if (!m) fail({ bad_uid: s }); return { type: m[1], id: JSON.parse(m[2]) }; }
function policySet() {
  const text = read(o.policies, 'policies');
  const parts = cedar.policySetTextToParts(text);
  if (parts.type !== 'success') fail(parts);
  // Cedar's CLI names a policy by its @id annotation, else by position (policy0, ...)
  const name = (t, i) => { const m = /@id\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)/.exec(t); return m ? JSON.parse('"' + m[1] + '"') : 'policy' + i; };
  const staticPolicies = {}, templates = {}; let n = 0;
  for (const t of parts.policies) staticPolicies[name(t, n++)] = t;
  for (const t of parts.policy_templates) templates[name(t, n++)] = t;
  const ps = { staticPolicies, templates };
  if (o.links) ps.templateLinks = JSON.parse(read(o.links, 'template-linked')).map(l => ({ templateId: l.template_id, newId: l.link_id,
    values: Object.fromEntries(Object.entries(l.args).map(([k, v]) => [k, uid(v)])) }));
  return ps;
}
if (cmd === 'format') {
  const text = read(o.policies, 'policies');
  const r = cedar.formatPolicies({ policyText: text, lineWidth: 80, indentWidth: 2 });
  if (r.type !== 'success') fail(r);
  process.stdout.write(r.formatted_policy);
  process.exit(o.check && r.formatted_policy !== text ? 1 : 0);
}
if (cmd === 'validate') {
  const r = cedar.validate({ validationSettings: { mode: 'strict' }, schema: schemaOf(), policies: policySet() });
  if (r.type !== 'success') fail(r);
  if (r.validationErrors.length) { console.log(JSON.stringify(r.validationErrors)); process.exit(3); }
  console.log('  ☞ policy set validation passed'); process.exit(0);
}
if (cmd === 'authorize') {
  const q = JSON.parse(read(o['request-json'], 'request'));
  const schema = schemaOf();
  const call = { principal: uid(q.principal), action: uid(q.action), resource: uid(q.resource), context: q.context || {},
    policies: policySet(), entities: JSON.parse(read(o.entities, 'entities')) };
  if (schema !== undefined) { call.schema = schema; call.validateRequest = true; }
  const r = cedar.isAuthorized(call);
  if (r.type !== 'success') fail(r);
  console.log(''); console.log(r.response.decision === 'allow' ? 'ALLOW' : 'DENY');
  const d = r.response.diagnostics;
  if (d.errors.length) { console.log(''); for (const e of d.errors) console.log(JSON.stringify(e)); }
  if (o.verbose) { console.log(''); if (!d.reason.length) console.log('note: no policies applied to this request');
    else { console.log('note: this decision was due to the following policies:'); for (const x of d.reason) console.log('  ' + x); console.log(''); } }
  process.exit(r.response.decision === 'allow' ? 0 : 2);
}
console.error('ref cedar: unsupported command ' + cmd); process.exit(2);
