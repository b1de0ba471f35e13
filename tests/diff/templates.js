#!/usr/bin/env node
'use strict';
// Differential test of templates and links against Cedar (cedar-wasm's isAuthorized with
// templates and templateLinks): dwc authorize -k LINKS --requests.
//
//   node tests/diff/templates.js [-n N] [--seed S] [--from K] [--keep DIR] [--dwc build/dwc] [--module DIR]
//
// Each case is a gen.js case whose policies' principal/resource scope targets are turned into
// ?principal/?resource slots at random (a policy with a slot is a template), plus 0-3 links per
// template to entities of the case (its original target, or any entity).  Every policy and
// template is named policyN by position, as Cedar's CLI names them without @id (templates keep
// no @id here); links are link<k>.  Compared per request: decision, reason set, error set; a
// request Cedar rejects must be rejected by dwc ("invalid").  Last line: "<P> passed, <F> failed"
// (cases); exit 1 if F > 0.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { genCase, printPolicy, cedarStr, makeRng } = require('./gen');

const o = { n: 300, seed: 1, from: 0, keep: null, dwc: 'build/dwc', module: 'build/diff/node/node_modules/@cedar-policy/cedar-wasm', show: 10 };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i], v = () => process.argv[++i];
  if (a === '-n') o.n = Number(v());
  else if (a === '--seed') o.seed = Number(v());
  else if (a === '--dwc') o.dwc = v();
  else if (a === '--module') o.module = v();
  else if (a === '--show') o.show = Number(v());
  else if (a === '--from') o.from = Number(v());      // start at case K (to re-run one: --from K -n 1)
  else if (a === '--keep') o.keep = v();              // write the cases' files into DIR and keep them
  else { console.error(`templates.js: unknown argument ${a}`); process.exit(2); }
}
const cedar = require(path.resolve(o.module, 'nodejs', 'cedar_wasm.js'));

const uidText = (u) => `${u.type}::${cedarStr(u.id)}`;
// `principal == T::"x"`, `principal in T::"x"`, `principal is T in T::"x"`: the target, split off
const SCOPE = /^(principal|resource)( == | in | is \S+ in )(.*)$/;

function templatize(c, R) {
  const uids = c.entities.map((e) => e.uid).filter((u) => u && u.type);
  const out = [];
  c.policies.forEach((p, i) => {
    const q = JSON.parse(JSON.stringify(p));
    const slots = {};
    if (R.chance(0.6)) {
      for (const k of ['p', 'r']) {
        const m = SCOPE.exec(q.scope[k]);
        if (m && R.chance(0.7)) { slots[`?${m[1]}`] = m[3]; q.scope[k] = `${m[1]}${m[2]}?${m[1]}`; }
      }
    }
    const isTemplate = Object.keys(slots).length > 0;
    if (isTemplate) q.annos = (q.annos || []).filter((a) => a !== 'id');
    out.push({ id: `policy${i}`, text: printPolicy(q), isTemplate, slots });
  });
  const links = [];
  for (const t of out.filter((x) => x.isTemplate)) {
    const nl = R.int(0, 3);
    for (let k = 0; k < nl; k++) {
      const values = {};
      for (const [slot, orig] of Object.entries(t.slots)) {
        const u = R.chance(0.5) || !uids.length ? null : R.pick(uids);
        values[slot] = u ? { type: u.type, id: u.id } : parseUid(orig);
      }
      links.push({ templateId: t.id, newId: `link${links.length}`, values });
    }
  }
  return { pols: out, links };
}

// the generator's `T::"id"` text back to {type, id}
function parseUid(text) {
  const i = text.indexOf('::"');
  const esc = { n: '\n', r: '\r', t: '\t', '\\': '\\', 0: '\0', "'": "'", '"': '"' };
  const id = text.slice(i + 3, -1).replace(/\\(u\{([0-9a-fA-F]+)\}|.)/g, (_, e, hex) => (hex ? String.fromCodePoint(parseInt(hex, 16)) : esc[e]));
  return { type: text.slice(0, i), id };
}

function cedarSide(c, t) {
  const staticPolicies = {}, templates = {};
  for (const p of t.pols) (p.isTemplate ? templates : staticPolicies)[p.id] = p.text;
  const res = [];
  for (const r of c.requests) {
    const ans = cedar.isAuthorized({ principal: r.principal, action: r.action, resource: r.resource, context: r.context,
      schema: c.schemaText, validateRequest: true, entities: c.entities,
      policies: { staticPolicies, templates, templateLinks: t.links } });
    if (ans.type !== 'success') { res.push({ invalid: true, why: ans.errors.map((e) => e.message).join('; ') }); continue; }
    const d = ans.response.diagnostics;
    res.push({ decision: ans.response.decision === 'allow' ? 'ALLOW' : 'DENY', reason: d.reason.slice().sort(),
      errors: [...new Set(d.errors.map((e) => e.policyId))].sort() });
  }
  return res;
}

function dwcSide(c, t, dir) {
  fs.writeFileSync(path.join(dir, 'p.cedar'), t.pols.map((p) => p.text).join('\n'));
  fs.writeFileSync(path.join(dir, 's.cedarschema'), c.schemaText);
  fs.writeFileSync(path.join(dir, 'e.json'), JSON.stringify(c.entities));
  fs.writeFileSync(path.join(dir, 'k.json'), JSON.stringify(t.links.map((l) => ({ template_id: l.templateId, link_id: l.newId,
    args: Object.fromEntries(Object.entries(l.values).map(([k, v]) => [k, uidText(v)])) }))));
  fs.writeFileSync(path.join(dir, 'r.jsonl'), c.requests.map((r) => JSON.stringify({ principal: r.principal, action: r.action,
    resource: r.resource, context: r.context })).join('\n') + '\n');
  const r = spawnSync(path.resolve(o.dwc), ['authorize', '-p', 'p.cedar', '-s', 's.cedarschema', '--entities', 'e.json',
    '-k', 'k.json', '--requests', 'r.jsonl'], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) return { failed: `exit ${r.status}: ${(r.stderr || '').split('\n')[0]}` };
  const list = (s) => (s ? s.split(',').sort() : []);
  return { res: r.stdout.trim().split('\n').map((line) => {
    const m = /^\d+: (ALLOW|DENY) (?:invalid: (.*)|\[(.*?)\](?: errors: \[(.*?)\])?)$/.exec(line);
    if (!m) return { bad: line };
    if (m[2] !== undefined) return { invalid: true, why: m[2] };
    return { decision: m[1], reason: list(m[3]), errors: list(m[4]) };
  }) };
}

const dir = o.keep ? (fs.mkdirSync(o.keep, { recursive: true }), o.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'dw-tpl-'));
let pass = 0, fail = 0, nreq = 0, ntpl = 0, nlinks = 0, ndecided = 0, nboth = 0;
for (let k = o.from; k < o.from + o.n; k++) {
  const seed = o.seed * 1000003 + k;
  const c = genCase(seed);
  const t = templatize(c, makeRng(seed ^ 0x5eed));
  ntpl += t.pols.filter((p) => p.isTemplate).length;
  nlinks += t.links.length;
  const want = cedarSide(c, t), got = dwcSide(c, t, dir);
  const why = [];
  if (got.failed) { if (!want.every((w) => w.invalid)) why.push(got.failed); else nboth++; }   /* a set both refuse (parse) */
  else want.forEach((w, i) => {
    const g = got.res[i] || {};
    nreq++;
    if (w.invalid || g.invalid) { if (!(w.invalid && g.invalid)) why.push(`request ${i}: cedar ${w.invalid ? 'rejects: ' + w.why : 'decides'}, dwc ${g.invalid ? 'rejects: ' + g.why : 'decides'}`); return; }
    ndecided++;
    const a = `${w.decision} [${w.reason}] errors [${w.errors}]`, b = `${g.decision} [${g.reason}] errors [${g.errors}]`;
    if (a !== b) why.push(`request ${i}: cedar ${a}, dwc ${b}`);
  });
  if (why.length) {
    fail++;
    if (fail <= o.show) console.log(`FAIL seed ${seed}: ${why[0]}\n  links ${JSON.stringify(t.links)}\n${t.pols.map((p) => '  ' + p.text.replace(/\n/g, ' ')).join('\n')}`);
  } else pass++;
}
if (!o.keep) fs.rmSync(dir, { recursive: true, force: true });
console.log(`templates: ${ntpl} templates, ${nlinks} links, ${nreq} requests (${ndecided} decided by both), ${nboth} sets both refuse`);
console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
