#!/usr/bin/env node
'use strict';
// Differential testing of dwc against Cedar itself (@cedar-policy/cedar-wasm 4.13.0).
//
//   node tests/diff/run.js [-n N] [--seed S] [--batch B] [--show K] [--shrink-max M]
//        [--regress DIR] [--keep] [--dwc build/dw-conformance] [--module DIR] [--no-shrink]
//
// For each batch of B cases: generate each case (gen.js), compute Cedar's answers with
// cedar-wasm (validate -> shouldValidate; preparse + statefulIsAuthorized per request ->
// decision/reason/errors), write it in Cedar's integration-test format into a temporary ROOT
// (ROOT/corpus-tests/<name>.{json,cedar,cedarschema,entities.json}), then run
// `dw-conformance --show ... ROOT` once over the batch and attribute every FAIL line to its case
// and dimension.  Disagreeing cases are minimised (up to --shrink-max of them, one per
// signature) and written to --regress DIR/diff-<name>/corpus-tests/ (default tests/regress).
//
// Known legitimate difference (not a failure): Cedar 4.13 reports a policy whose scope admits
// no request environment as a *warning*; Cedar 4.10 (and dwc, spec §5.2) as an *error*.  Such
// cases are written with shouldValidate=false (the 4.10 answer) and counted separately.
//
// Last line of output: "<P> passed, <F> failed" where F counts cases with an unexplained
// disagreement; exit status 1 if F > 0.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { genCase, printPolicy, printExpr } = require('./gen');

// ---------------------------------------------------------------- options
const o = { n: 1000, seed: 1, batch: 2500, show: 50, shrinkMax: 12, regress: 'tests/regress', keep: false,
  dwc: 'build/dw-conformance', module: null, shrink: true, root: null };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  const v = () => process.argv[++i];
  switch (a) {
    case '-n': o.n = Number(v()); break;
    case '--seed': o.seed = Number(v()); break;
    case '--batch': o.batch = Number(v()); break;
    case '--show': o.show = Number(v()); break;
    case '--shrink-max': o.shrinkMax = Number(v()); break;
    case '--regress': o.regress = v(); break;
    case '--keep': o.keep = true; break;
    case '--dwc': o.dwc = v(); break;
    case '--module': o.module = v(); break;
    case '--no-shrink': o.shrink = false; break;
    case '--root': o.root = v(); break;
    default: console.error(`run.js: unknown argument ${a}`); process.exit(2);
  }
}

function loadCedar() {
  const c = [];
  if (o.module) c.push(o.module);
  if (process.env.CEDAR_WASM_DIR) c.push(process.env.CEDAR_WASM_DIR);
  c.push('build/diff/node/node_modules/@cedar-policy/cedar-wasm', 'build/bench/node/node_modules/@cedar-policy/cedar-wasm');
  for (const d of c) {
    const f = path.resolve(d, 'nodejs', 'cedar_wasm.js');
    if (fs.existsSync(f)) return require(f);
  }
  console.error('run.js: cannot find @cedar-policy/cedar-wasm (run tests/diff/run.sh, which installs it)');
  process.exit(2);
}
const cedar = loadCedar();
if (cedar.getCedarVersion) process.stderr.write(`cedar-wasm: Cedar ${cedar.getCedarVersion()}\n`);

const NO_ENV = 'unable to find an applicable action given the policy scope constraints';

// ---------------------------------------------------------------- Cedar's answers
// Returns { ok, why, shouldValidate, known413, requests: [{..., decision, reason, errors}] }
function cedarAnswers(c) {
  const texts = c.policies.map(printPolicy);
  const pset = {};
  texts.forEach((t, i) => { pset[`policy${i}`] = t; });
  const v = cedar.validate({ schema: c.schemaText, policies: { staticPolicies: pset }, validationSettings: { mode: 'strict' } });
  if (v.type !== 'success') return { ok: false, why: 'validate: ' + (v.errors[0] ? v.errors[0].message : '?') };
  let shouldValidate = v.validationErrors.length === 0;
  let known413 = false;
  if (shouldValidate && v.validationWarnings.some((w) => w.error.message.includes(NO_ENV))) { shouldValidate = false; known413 = true; }
  if (process.env.DIFF_MUTANT && texts.join('').includes(' like ')) shouldValidate = !shouldValidate; // shrinker self-test only
  let a = cedar.preparseSchema('diff', c.schemaText);
  if (a.type !== 'success') return { ok: false, why: 'schema: ' + a.errors[0].message };
  a = cedar.preparsePolicySet('diff', { staticPolicies: pset });
  if (a.type !== 'success') return { ok: false, why: 'policies: ' + a.errors[0].message };
  const reqs = [];
  let rejected = 0, lastWhy = '';
  for (const r of c.requests) {
    const ans = cedar.statefulIsAuthorized({ principal: r.principal, action: r.action, resource: r.resource, context: r.context,
      preparsedSchemaName: 'diff', validateRequest: r.validateRequest, preparsedPolicySetId: 'diff', entities: c.entities });
    if (ans.type !== 'success') { rejected++; lastWhy = ans.errors[0] ? ans.errors[0].message : '?'; continue; }
    reqs.push(Object.assign({}, r, { decision: ans.response.decision, reason: ans.response.diagnostics.reason.slice().sort(),
      errors: [...new Set(ans.response.diagnostics.errors.map((e) => e.policyId))].sort(),
      errorMsgs: ans.response.diagnostics.errors.map((e) => `${e.policyId}: ${e.error.message}`) }));
  }
  if (reqs.length === 0 && rejected) return { ok: false, why: 'all requests: ' + lastWhy };
  return { ok: true, shouldValidate, known413, requests: reqs, rejected, lastWhy, validationMsgs: v.validationErrors.map((e) => `${e.policyId}: ${e.error.message}`) };
}

// ---------------------------------------------------------------- writing a test
function writeCase(root, name, c, ans) {
  const dir = path.join(root, 'corpus-tests');
  fs.mkdirSync(dir, { recursive: true });
  const rel = (ext) => `corpus-tests/${name}.${ext}`;
  fs.writeFileSync(path.join(root, rel('cedar')), c.policies.map(printPolicy).join('\n'));
  fs.writeFileSync(path.join(root, rel('cedarschema')), c.schemaText);
  fs.writeFileSync(path.join(root, rel('entities.json')), JSON.stringify(c.entities, null, 1) + '\n');
  const test = { policies: rel('cedar'), entities: rel('entities.json'), schema: rel('cedarschema'), shouldValidate: ans.shouldValidate,
    requests: ans.requests.map((r, i) => ({ description: `Request ${i}`, principal: r.principal, action: r.action, resource: r.resource,
      context: r.context, validateRequest: r.validateRequest, decision: r.decision, reason: r.reason, errors: r.errors })) };
  fs.writeFileSync(path.join(root, rel('json')), JSON.stringify(test, null, 1) + '\n');
}

// ---------------------------------------------------------------- running dwc
function runDwc(root, show) {
  const r = spawnSync(path.resolve(o.dwc), ['--show', String(show), root], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.error) throw r.error;
  const fails = [];
  for (const line of (r.stderr || '').split('\n')) {
    const m = /^FAIL (.*?) \[(.*?)\]: (.*)$/.exec(line);
    if (!m) continue;
    const base = path.basename(m[1]).replace(/\.json$/, '');
    fails.push({ name: base, desc: m[2], what: m[3], line });
  }
  return { fails, stdout: r.stdout, status: r.status };
}

// Classify a FAIL line against Cedar's expectation.  Returns a list of dimensions.
function classify(f, ans) {
  if (f.desc === 'shouldValidate') return ['validation'];
  if (f.desc === 'setup') return ['setup'];
  const m = /^Request (\d+)$/.exec(f.desc);
  if (!m) return ['other'];
  if (/^request: /.test(f.what)) return ['request-rejected'];
  if (/decision index/.test(f.what)) return ['index'];
  const r = ans.requests[Number(m[1])];
  const g = /^got (allow|deny) reason=\[(.*?)\] errors=\[(.*?)\]/.exec(f.what);
  if (!g || !r) return ['other'];
  const set = (s) => (s ? s.split(',').sort().join(',') : '');
  const dims = [];
  if (g[1] !== r.decision) dims.push('decision');
  if (set(g[2]) !== r.reason.join(',')) dims.push('reason');
  if (set(g[3]) !== r.errors.join(',')) dims.push('errors');
  return dims.length ? dims : ['other'];
}

// ---------------------------------------------------------------- shrinking
const clone = (x) => JSON.parse(JSON.stringify(x));
let shrinkRoot = null;
function disagrees(c, kind) {
  const ans = cedarAnswers(c);
  if (!ans.ok) return false;
  if (kind !== 'validation' && kind !== 'setup' && ans.requests.length === 0) return false;
  if (ans.requests.length !== c.requests.length) return false; // keep every request meaningful
  fs.rmSync(shrinkRoot, { recursive: true, force: true });
  writeCase(shrinkRoot, 'min', c, ans);
  const { fails } = runDwc(shrinkRoot, 1000);
  return fails.some((f) => classify(f, ans).some((d) => kindOf(d) === kind));
}
const kindOf = (d) => (['decision', 'reason', 'errors', 'other'].includes(d) ? 'response' : d);

function exprNodes(n, acc = [], pathv = []) {
  if (typeof n !== 'object') return acc;
  acc.push(pathv);
  n.p.forEach((x, i) => { if (typeof x === 'object') exprNodes(x, acc, pathv.concat(i)); });
  return acc;
}
function getAt(n, pv) { for (const i of pv) n = n.p[i]; return n; }
function setAt(root, pv, v) {
  if (!pv.length) return v;
  const r = clone(root);
  let n = r;
  for (let k = 0; k < pv.length - 1; k++) n = n.p[pv[k]];
  n.p[pv[pv.length - 1]] = v;
  return r;
}

function shrink(c0, kind) {
  let c = clone(c0);
  let budget = 600;
  const tryC = (cand) => { if (budget-- <= 0) return false; if (disagrees(cand, kind)) { c = cand; return true; } return false; };
  // 1. a single request, if the disagreement is about a response
  if (kind !== 'validation' && kind !== 'setup') {
    for (let i = 0; i < c.requests.length && c.requests.length > 1; i++) { const cand = clone(c); cand.requests = [c.requests[i]]; if (tryC(cand)) break; }
  } else {
    const cand = clone(c); cand.requests = c.requests.slice(0, 1); tryC(cand);
  }
  let progress = true;
  while (progress && budget > 0) {
    progress = false;
    // 2. drop policies
    for (let i = c.policies.length - 1; i >= 0 && c.policies.length > 1; i--) { const cand = clone(c); cand.policies.splice(i, 1); if (tryC(cand)) progress = true; }
    // 3. drop entities, then their parents, tags and attributes
    for (let i = c.entities.length - 1; i >= 0; i--) { const cand = clone(c); cand.entities.splice(i, 1); if (tryC(cand)) progress = true; }
    for (let i = 0; i < c.entities.length; i++) {
      for (let j = c.entities[i].parents.length - 1; j >= 0; j--) { const cand = clone(c); cand.entities[i].parents.splice(j, 1); if (tryC(cand)) progress = true; }
      if (c.entities[i].tags) for (const k of Object.keys(c.entities[i].tags)) { const cand = clone(c); delete cand.entities[i].tags[k]; if (tryC(cand)) progress = true; }
      for (const k of Object.keys(c.entities[i].attrs)) { const cand = clone(c); delete cand.entities[i].attrs[k]; if (tryC(cand)) progress = true; }
    }
    // 4. context attributes
    for (let i = 0; i < c.requests.length; i++) for (const k of Object.keys(c.requests[i].context)) { const cand = clone(c); delete cand.requests[i].context[k]; if (tryC(cand)) progress = true; }
    // 5. policy scope and clauses
    for (let i = 0; i < c.policies.length; i++) {
      const p = c.policies[i];
      for (const [k, dflt] of [['p', 'principal'], ['a', 'action'], ['r', 'resource']]) {
        if (p.scope[k] !== dflt) { const cand = clone(c); cand.policies[i].scope[k] = dflt; if (tryC(cand)) progress = true; }
      }
      for (let j = c.policies[i].clauses.length - 1; j >= 0; j--) { const cand = clone(c); cand.policies[i].clauses.splice(j, 1); if (tryC(cand)) progress = true; }
      if (c.policies[i].effect === 'forbid') { const cand = clone(c); cand.policies[i].effect = 'permit'; if (tryC(cand)) progress = true; }
      // 6. expressions: replace a node by a descendant or by a literal
      for (let j = 0; j < c.policies[i].clauses.length; j++) {
        let changed = true;
        while (changed && budget > 0) {
          changed = false;
          const root = c.policies[i].clauses[j].expr;
          const nodes = exprNodes(root);
          outer: for (const pv of nodes) {
            const node = getAt(root, pv);
            const subs = exprNodes(node).slice(1).map((q) => getAt(node, q));
            const lits = [{ p: ['true'] }, { p: ['false'] }, { p: ['1'] }];
            for (const s of subs.concat(lits)) {
              if (printExpr(s) === printExpr(node) || printExpr(s).length >= printExpr(node).length) continue;
              const cand = clone(c);
              cand.policies[i].clauses[j].expr = setAt(root, pv, clone(s));
              if (tryC(cand)) { changed = progress = true; break outer; }
            }
          }
        }
      }
    }
  }
  return c;
}

// ---------------------------------------------------------------- main
function caseSeed(seed, i) {
  let h = (seed * 0x9E3779B1) ^ (i * 0x85EBCA77);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d); h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

function main() {
  if (!fs.existsSync(o.dwc)) { console.error(`run.js: ${o.dwc} not found (run make in the repository root)`); process.exit(2); }
  const t0 = Date.now();
  const base = o.root || fs.mkdtempSync(path.join(os.tmpdir(), 'dwdiff-'));
  shrinkRoot = path.join(base, 'shrink');
  const stat = { cases: 0, written: 0, requests: 0, cedarRejected: 0, cedarRejectedWhy: {}, reqRejected: 0, reqRejectedWhy: {},
    validated: 0, parseRej: 0, shouldValidateTrue: 0, known413: 0, anyError: 0, hasPath: 0, hasPathValid: 0,
    dims: { parse: 0, decision: 0, reason: 0, errors: 0, validation: 0, setup: 0, 'request-rejected': 0, index: 0, other: 0 } };
  const badCases = new Map(); // name -> { c, ans, dims: Set, lines }
  let shown = 0;
  let tCedar = 0, tDwc = 0;
  for (let b0 = 0; b0 < o.n; b0 += o.batch) {
    const root = path.join(base, `batch${b0 / o.batch}`);
    fs.rmSync(root, { recursive: true, force: true });
    const inBatch = new Map();
    const tc = Date.now();
    for (let i = b0; i < Math.min(o.n, b0 + o.batch); i++) {
      stat.cases++;
      const s = caseSeed(o.seed, i);
      const c = genCase(s);
      const ans = cedarAnswers(c);
      if (!ans.ok && /^(validate: failed to parse policy|policies: )/.test(ans.why)) {
        // Cedar rejects the policy text: dwc must reject it too (a "setup" failure is agreement)
        const name = `rej-s${o.seed}-${i}-${s.toString(16)}`;
        writeCase(root, name, c, { shouldValidate: false, requests: [] });
        inBatch.set(name, { c, ans, i, rej: true });
        stat.parseRej++;
      }
      if (!ans.ok) {
        stat.cedarRejected++;
        const k = ans.why.replace(/`[^`]*`/g, '`…`').slice(0, 90);
        stat.cedarRejectedWhy[k] = (stat.cedarRejectedWhy[k] || 0) + 1;
        continue;
      }
      if (ans.rejected) { stat.reqRejected += ans.rejected; const k = ans.lastWhy.replace(/`[^`]*`/g, '`…`').slice(0, 90); stat.reqRejectedWhy[k] = (stat.reqRejectedWhy[k] || 0) + ans.rejected; }
      c.requests = ans.requests.map(({ principal, action, resource, context, validateRequest }) => ({ principal, action, resource, context, validateRequest }));
      const name = `s${o.seed}-${i}-${s.toString(16)}`;
      if (process.env.DIFF_INJECT && i < 2 && ans.requests.length) { // harness self-test: plant two wrong expectations
        if (i === 0) ans.requests[0].decision = ans.requests[0].decision === 'allow' ? 'deny' : 'allow'; else ans.shouldValidate = !ans.shouldValidate;
      }
      writeCase(root, name, c, ans);
      inBatch.set(name, { c, ans, i });
      stat.written++;
      stat.requests += ans.requests.length;
      stat.validated++;
      if (ans.shouldValidate) stat.shouldValidateTrue++;
      if (ans.known413) stat.known413++;
      if (ans.requests.some((r) => r.errors.length)) stat.anyError++;
      if (c.policies.some((p) => / has [A-Za-z_]\w*\./.test(printPolicy(p)))) { stat.hasPath++; if (ans.shouldValidate) stat.hasPathValid++; }
    }
    tCedar += Date.now() - tc;
    const td = Date.now();
    const { fails } = runDwc(root, 1 << 30);
    tDwc += Date.now() - td;
    const rejSeen = new Set();
    for (const f of fails) {
      const rec0 = inBatch.get(f.name);
      if (rec0 && rec0.rej) { if (f.desc === 'setup') { rejSeen.add(f.name); continue; } }
      const rec = rec0;
      const dims = rec ? classify(f, rec.ans) : ['other'];
      for (const d of dims) stat.dims[d]++;
      if (shown++ < o.show) console.log(`${f.line}\n    dims=${dims.join(',')}`);
      if (rec) {
        if (!badCases.has(f.name)) badCases.set(f.name, Object.assign({ dims: new Set(), lines: [] }, rec));
        const bc = badCases.get(f.name);
        dims.forEach((d) => bc.dims.add(d));
        bc.lines.push(f.line);
      }
    }
    for (const [name, rec] of inBatch) {
      if (!rec.rej || rejSeen.has(name)) continue;
      stat.dims.parse++;
      if (shown++ < o.show) console.log(`PARSE ${name}: Cedar rejects the policies (${rec.ans.why}) but dwc loads them`);
      badCases.set(name, Object.assign({ dims: new Set(['parse']), lines: [] }, rec));
    }
    if (!o.keep) fs.rmSync(root, { recursive: true, force: true });
    process.stderr.write(`batch ${b0 / o.batch}: ${Math.min(o.n, b0 + o.batch)} cases, ${badCases.size} disagreeing so far\n`);
  }

  // ---- minimise
  const minimised = [];
  if (o.shrink && badCases.size) {
    const sigs = new Set();
    for (const [name, bc] of badCases) {
      if (minimised.length >= o.shrinkMax) break;
      if (bc.rej) { console.log(`\n== ${name}: parse disagreement (not minimised)\n${bc.c.policies.map(printPolicy).join('\n')}`); continue; }
      const kinds = [...new Set([...bc.dims].map(kindOf))];
      const kind = kinds.includes('setup') ? 'setup' : kinds.includes('validation') ? 'validation' : kinds[0];
      const t = Date.now();
      const m = shrink(bc.c, kind);
      const ans = cedarAnswers(m);
      const sig = kind + '|' + m.policies.map(printPolicy).join('').replace(/"[^"]*"/g, 'S').replace(/\b\d+\b/g, 'N');
      if (sigs.has(sig)) continue;
      sigs.add(sig);
      const short = `${kind}-${bc.i}`;
      const dir = path.join(o.regress, `diff-${short}`);
      fs.rmSync(dir, { recursive: true, force: true });
      writeCase(dir, short, m, ans);
      minimised.push({ name, dir, kind, ms: Date.now() - t });
      console.log(`\n== minimised ${name} (${kind}) -> ${dir}  [${Date.now() - t} ms]`);
      console.log(m.policies.map(printPolicy).join('\n'));
      console.log('cedar: shouldValidate=' + ans.shouldValidate + (ans.validationMsgs.length ? '  ' + ans.validationMsgs.join(' | ') : ''));
      for (const r of ans.requests) console.log(`cedar: ${r.decision} reason=[${r.reason}] errors=[${r.errors}] ${r.errorMsgs.join(' | ')}`);
      const { fails } = runDwc(dir, 20);
      for (const f of fails) console.log('dwc:   ' + f.line);
    }
  }

  // ---- report
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  console.log(`\nDifferential run: seed ${o.seed}, ${stat.cases} cases generated in ${secs} s (cedar ${(tCedar / 1000).toFixed(1)} s, dw-conformance ${(tDwc / 1000).toFixed(1)} s)`);
  console.log(`  parse rejections:       ${stat.parseRej} cases whose policies Cedar rejects: dwc must reject them too (${stat.dims.parse} disagree)`);
  console.log(`  cases run:              ${stat.written} (${stat.cedarRejected} skipped: Cedar rejected the input)`);
  for (const [k, v] of Object.entries(stat.cedarRejectedWhy).sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`      ${v}  ${k}`);
  console.log(`  requests:               ${stat.requests} (${stat.reqRejected} dropped: Cedar rejected the request)`);
  for (const [k, v] of Object.entries(stat.reqRejectedWhy).sort((a, b) => b[1] - a[1]).slice(0, 5)) console.log(`      ${v}  ${k}`);
  console.log(`  shouldValidate:         ${stat.shouldValidateTrue} valid, ${stat.written - stat.shouldValidateTrue} invalid (of which ${stat.known413} only by the 4.10 rule, §5.2: Cedar 4.13 warns)`);
  console.log(`  cases with a run-time error in some request: ${stat.anyError}`);
  console.log(`  cases with a \`has\` path of 2 or more names: ${stat.hasPath} (${stat.hasPathValid} valid)`);
  console.log('  dimension      agree  disagree');
  const R = stat.requests;
  for (const d of ['decision', 'reason', 'errors']) console.log(`  ${d.padEnd(12)} ${String(R - stat.dims[d]).padStart(8)} ${String(stat.dims[d]).padStart(9)}`);
  console.log(`  ${'validation'.padEnd(12)} ${String(stat.written - stat.dims.validation).padStart(8)} ${String(stat.dims.validation).padStart(9)}`);
  for (const d of ['setup', 'request-rejected', 'index', 'other']) if (stat.dims[d]) console.log(`  ${d.padEnd(12)} ${''.padStart(8)} ${String(stat.dims[d]).padStart(9)}`);
  if (minimised.length) console.log(`  minimised: ${minimised.map((m) => m.dir).join(' ')}`);
  if (!o.root) fs.rmSync(base, { recursive: true, force: true });
  const failed = badCases.size;
  console.log(`${stat.written + stat.parseRej - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main();
