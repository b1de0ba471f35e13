#!/usr/bin/env node
// Cedar peer for `dwc bench`: same inputs, same key=value output, driving
// @cedar-policy/cedar-wasm 4.13.0 through its stateful API (preparsePolicySet / preparseSchema
// once, then statefulIsAuthorized per decision).
//
//   node tests/bench/cedar_peer.js -p POLICY [-s SCHEMA] [--entities E] --requests FILE.jsonl
//        [-n N] [--from-json] [--warmup W] [--full-entities] [--no-validate-request]
//        [--validate] [--check-dwc FILE] [--check-authorize FILE] [--module DIR]
//        [--budget-s S [--min-n K]]
//
// Prints decisions=, ns_per_decision=, p50_ns=, p90_ns=, p99_ns=, allow=, deny= (plus a few
// extra keys: errors=, requests=, warmup=, setup_ms=, entities_per_call=, harness=).
//
// * Requests run round-robin (request i mod M) after a warm-up of W decisions (default: every
//   request once, then on for at least 2 s and max(M, min(N, 5000)) decisions, at most 5 s in
//   all -- V8 tiers the wasm code up in the background, and on a loaded machine 1,000 calls were
//   not enough: the timed p50 still fell by a fifth with more warm-up); N decisions are timed,
//   one process.hrtime.bigint() pair per call.  allow/deny count the N timed decisions only.
// * Without --from-json each request's call object is built before timing; with --from-json the
//   timed region also includes JSON.parse of the request line and building the call object.
// * --budget-s S lowers N so that the timed loop takes about S seconds, estimated from the
//   warm-up (but never below --min-n, default 100, nor above -n).
// * cedar-wasm takes the entities with every call (it has no preparsed entity store).  By default
//   each request gets its slice: principal, resource and their ancestors (which is all these
//   workloads read); --full-entities passes the whole entities file with every call instead.
// * --validate: strict-validate the policy set against the schema first (exit 1 on errors).
// * --check-dwc FILE: FILE holds `dwc bench` output for the same inputs; its allow/deny totals
//   are compared with what Cedar decides for the same number of round-robin decisions.
// * --check-authorize FILE: FILE holds `dwc authorize --requests` output for the same requests;
//   decisions are compared line by line.
// Mismatches print `WARNING: ...` on stderr and `check=MISMATCH` on stdout (exit status stays 0
// so that a benchmark run completes); a passing check prints `check=ok`.
'use strict';
const fs = require('fs');
const path = require('path');

function die(msg) { process.stderr.write(`cedar_peer: ${msg}\n`); process.exit(2); }

function parseArgs(argv) {
  const o = { policy: null, schema: null, entities: null, requests: null, n: 100000, fromJson: false,
              warmup: null, fullEntities: false, validateRequest: true, validate: false,
              checkDwc: null, checkAuthorize: null, module: null, budget: null, minN: 100 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => { if (i + 1 >= argv.length) die(`${a} needs a value`); return argv[++i]; };
    switch (a) {
      case '-p': case '--policies': o.policy = v(); break;
      case '-s': case '--schema': o.schema = v(); break;
      case '--entities': o.entities = v(); break;
      case '--requests': o.requests = v(); break;
      case '-n': o.n = Number(v()); break;
      case '--from-json': o.fromJson = true; break;
      case '--warmup': o.warmup = Number(v()); break;
      case '--full-entities': o.fullEntities = true; break;
      case '--no-validate-request': o.validateRequest = false; break;
      case '--validate': o.validate = true; break;
      case '--check-dwc': o.checkDwc = v(); break;
      case '--check-authorize': o.checkAuthorize = v(); break;
      case '--module': o.module = v(); break;
      case '--budget-s': o.budget = Number(v()); break;
      case '--min-n': o.minN = Number(v()); break;
      default: die(`unknown argument ${a}`);
    }
  }
  if (!o.policy || !o.requests) die('usage: cedar_peer.js -p POLICY [-s SCHEMA] [--entities E] --requests FILE.jsonl [-n N] [--from-json]');
  if (!Number.isInteger(o.n) || o.n < 1) die('-n must be a positive integer');
  return o;
}

function loadCedar(o) {
  const candidates = [];
  if (o.module) candidates.push(path.resolve(o.module));
  if (process.env.CEDAR_WASM_DIR) candidates.push(path.resolve(process.env.CEDAR_WASM_DIR));
  candidates.push(path.resolve('build/bench/node/node_modules/@cedar-policy/cedar-wasm'));
  for (const c of candidates) {
    const f = path.join(c, 'nodejs', 'cedar_wasm.js');
    if (fs.existsSync(f)) return require(f);
  }
  try { return require('@cedar-policy/cedar-wasm/nodejs'); } catch (e) { /* fall through */ }
  die('cannot find @cedar-policy/cedar-wasm; install it with\n  npm ci --prefix build/bench/node ' +
      '(after copying tests/bench/package.json and package-lock.json there), or pass --module DIR');
}

const uidKey = (u) => `${u.type}::${JSON.stringify(u.id)}`;

function fmtErrors(errs) {
  return (errs || []).map((e) => e.message + (e.help ? ` (${e.help})` : '')).join('; ');
}

function readKv(file) {
  const kv = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Za-z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) kv[m[1]] = m[2];
  }
  return kv;
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  const cedar = loadCedar(o);
  const t0 = process.hrtime.bigint();

  const policyText = fs.readFileSync(o.policy, 'utf8');
  const schemaText = o.schema ? fs.readFileSync(o.schema, 'utf8') : null;
  const entities = o.entities ? JSON.parse(fs.readFileSync(o.entities, 'utf8')) : [];
  const lines = fs.readFileSync(o.requests, 'utf8').split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) die(`${o.requests}: no requests`);
  const M = lines.length;

  if (o.validate) {
    if (!schemaText) die('--validate needs -s SCHEMA');
    const ans = cedar.validate({ schema: schemaText, policies: { staticPolicies: policyText },
                                 validationSettings: { mode: 'strict' } });
    if (ans.type !== 'success') die(`validation failed: ${fmtErrors(ans.errors)}`);
    if (ans.validationErrors.length) {
      for (const e of ans.validationErrors.slice(0, 10)) process.stderr.write(`  ${e.policyId}: ${e.error.message}\n`);
      die(`${ans.validationErrors.length} strict-validation errors`);
    }
    process.stdout.write('validation=ok\n');
  }

  let ans = cedar.preparsePolicySet('bench', { staticPolicies: policyText });
  if (ans.type !== 'success') die(`policy set: ${fmtErrors(ans.errors)}`);
  if (schemaText) {
    ans = cedar.preparseSchema('bench', schemaText);
    if (ans.type !== 'success') die(`schema: ${fmtErrors(ans.errors)}`);
  }

  // Entity slices: principal, resource and all their ancestors.
  const byUid = new Map();
  for (const e of entities) byUid.set(uidKey(e.uid), e);
  function slice(req) {
    const seen = new Set(), outl = [];
    const stack = [req.principal, req.resource];
    while (stack.length) {
      const u = stack.pop();
      if (!u || typeof u !== 'object') continue;
      const k = uidKey(u.__entity || u);
      if (seen.has(k)) continue;
      seen.add(k);
      const e = byUid.get(k);
      if (!e) continue;
      outl.push(e);
      for (const p of e.parents || []) stack.push(p);
    }
    return outl;
  }
  const reqs = lines.map((l) => JSON.parse(l));
  const ents = reqs.map((r) => (o.fullEntities ? entities : slice(r)));
  const mkCall = (r, e) => {
    const c = { principal: r.principal, action: r.action, resource: r.resource, context: r.context || {},
                preparsedPolicySetId: 'bench', validateRequest: o.validateRequest && !!schemaText, entities: e };
    if (schemaText) c.preparsedSchemaName = 'bench';
    return c;
  };
  const calls = reqs.map((r, i) => mkCall(r, ents[i]));
  const preparseMs = Number(process.hrtime.bigint() - t0) / 1e6;

  // Warm-up: W decisions round-robin (see the header for its length).  The warm-up also records
  // Cedar's decision per request for the cross-checks.
  const decision = new Array(M);   // 'allow' | 'deny' | 'invalid'
  const failMsg = new Array(M);
  const record = (i, a) => {
    if (a.type === 'success') decision[i] = a.response.decision;
    else { decision[i] = 'invalid'; failMsg[i] = fmtErrors(a.errors); }
  };
  const isAuth = cedar.statefulIsAuthorized;
  const schemaName = schemaText ? 'bench' : undefined;
  const vr = o.validateRequest && !!schemaText;
  const runOne = o.fromJson
    ? (i) => {
      const r = JSON.parse(lines[i]);
      return isAuth({ principal: r.principal, action: r.action, resource: r.resource, context: r.context || {},
                      preparsedPolicySetId: 'bench', preparsedSchemaName: schemaName, validateRequest: vr,
                      entities: ents[i] });
    }
    : (i) => isAuth(calls[i]);

  let N = o.n;
  // Warm-up length: --warmup W exactly; otherwise one pass over the requests, then on until both
  // max(M, min(N, 5000)) decisions and 2 s are done, stopping at 5 s (once every request ran).
  const wTarget = o.warmup !== null ? o.warmup : Math.max(M, Math.min(N, 5000));
  const wMin = o.warmup !== null ? o.warmup : M;
  const tw0 = process.hrtime.bigint();
  let W = 0;
  for (let i = 0; ; W++) {
    if (o.warmup !== null) { if (W >= wTarget) break; }
    else if (W >= wMin && (W & 15) === 0) {
      const el = Number(process.hrtime.bigint() - tw0);
      if ((W >= wTarget && el > 2e9) || el > 5e9) break;
    }
    record(i, runOne(i)); if (++i === M) i = 0;
  }
  const warmNs = Number(process.hrtime.bigint() - tw0);
  for (let i = W; i < M; i++) record(i, isAuth(calls[i]));
  // --budget-s S: cap N so that the timed loop takes about S seconds (estimated from the warm-up).
  if (o.budget && W > 0) {
    const est = warmNs / W;
    N = Math.max(Math.min(N, o.minN), Math.min(N, Math.floor((o.budget * 1e9) / est)));
  }
  const nInvalid = decision.filter((d) => d === 'invalid').length;
  if (nInvalid) {
    const i = decision.indexOf('invalid');
    process.stderr.write(`cedar_peer: WARNING: ${nInvalid} of ${M} requests fail (counted as deny); ` +
                         `first: line ${i + 1}: ${failMsg[i]}\n`);
  }
  const setupMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const samples = new Float64Array(N);
  let allow = 0, deny = 0, errors = 0;

  const tStart = process.hrtime.bigint();
  for (let k = 0, i = 0; k < N; k++) {
    const a0 = process.hrtime.bigint();
    const a = runOne(i);
    const a1 = process.hrtime.bigint();
    samples[k] = Number(a1 - a0);
    if (a.type === 'success' && a.response.decision === 'allow') allow++;
    else { deny++; if (a.type !== 'success') errors++; }
    if (++i === M) i = 0;
  }
  const total = Number(process.hrtime.bigint() - tStart);

  samples.sort();
  const pct = (p) => samples[Math.min(N - 1, Math.floor((p / 100) * N))];
  const avgEnt = ents.reduce((s, e) => s + e.length, 0) / M;
  const out = [
    `decisions=${N}`,
    `ns_per_decision=${Math.round(total / N)}`,
    `p50_ns=${Math.round(pct(50))}`,
    `p90_ns=${Math.round(pct(90))}`,
    `p99_ns=${Math.round(pct(99))}`,
    `allow=${allow}`,
    `deny=${deny}`,
    `errors=${errors}`,
    `requests=${M}`,
    `warmup=${W}`,
    `preparse_ms=${preparseMs.toFixed(1)}`,
    `warmup_ms=${(warmNs / 1e6).toFixed(1)}`,
    `setup_ms=${setupMs.toFixed(1)}`,
    `entities_per_call=${avgEnt.toFixed(1)}`,
    `harness=cedar-wasm ${cedar.getCedarVersion ? cedar.getCedarVersion() : '?'}${o.fromJson ? ' from-json' : ''}`,
  ];

  // Cross-checks.
  const warnings = [];
  const onePass = { allow: decision.filter((d) => d === 'allow').length };
  onePass.deny = M - onePass.allow;
  if (o.checkDwc) {
    const kv = readKv(o.checkDwc);
    const D = Number(kv.decisions);
    if (!Number.isFinite(D) || kv.allow === undefined || kv.deny === undefined) {
      warnings.push(`${o.checkDwc}: no decisions=/allow=/deny= lines to check`);
    } else {
      // Expected totals for D round-robin decisions starting at request 0.
      const full = Math.floor(D / M), rest = D % M;
      let expAllow = full * onePass.allow;
      for (let i = 0; i < rest; i++) if (decision[i] === 'allow') expAllow++;
      const expDeny = D - expAllow;
      if (Number(kv.allow) !== expAllow || Number(kv.deny) !== expDeny) {
        warnings.push(`dwc bench allow/deny totals differ from Cedar's: dwc allow=${kv.allow} deny=${kv.deny} ` +
                      `for decisions=${D}; Cedar gives allow=${expAllow} deny=${expDeny} ` +
                      `(one pass over the ${M} requests: allow=${onePass.allow} deny=${onePass.deny})`);
      }
    }
  }
  if (o.checkAuthorize) {
    const got = new Map();
    for (const line of fs.readFileSync(o.checkAuthorize, 'utf8').split('\n')) {
      const m = /^(\d+): (ALLOW|DENY)( invalid:)?/.exec(line);
      if (m) got.set(Number(m[1]), m[3] ? 'invalid' : m[2].toLowerCase());
    }
    let bad = 0; const first = [];
    if (got.size === 0) { warnings.push(`${o.checkAuthorize}: no \`N: ALLOW|DENY\` lines to check`); bad = -1; }
    for (let i = 0; i < M && bad >= 0; i++) {
      const d = got.get(i + 1);
      if (d !== decision[i]) { bad++; if (first.length < 5) first.push(`line ${i + 1}: dwc ${d || 'missing'}, cedar ${decision[i]}`); }
    }
    if (bad > 0) warnings.push(`dwc authorize disagrees with Cedar on ${bad} of ${M} requests: ${first.join('; ')}`);
  }
  if (o.checkDwc || o.checkAuthorize) out.push(`check=${warnings.length ? 'MISMATCH' : 'ok'}`);
  process.stdout.write(out.join('\n') + '\n');
  for (const w of warnings) process.stderr.write(`cedar_peer: WARNING: ${w}\n`);
}

main();
