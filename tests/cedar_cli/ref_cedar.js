#!/usr/bin/env node
// ref_cedar.js - a `cedar` built on cedar-wasm 4.13 (validate, authorize, format, --version) with
// Cedar CLI 4.x's flags, exit codes and output shape: the reference that tests/cedar_cli/heldout.sh and
// tests/cedar_cli.sh judge dwc-as-cedar against.  CEDAR_WASM names cedar_wasm.js (build/diff/node).
// `--schema-format human` is taken as cedar, as Cedar 3.x did (and dwc does).
// `--batch FILE`: FILE holds one JSON array of arguments a line; for each, the output and then
// a line `exit N` (one wasm load for many calls).
const fs = require('fs');
const cedar = require(process.env.CEDAR_WASM);

class Exit { constructor(code) { this.code = code; } }

function run(argv) {
  let out = '';
  const say = (s) => { out += s + '\n'; };
  const exit = (c) => { throw new Exit(c); };
  const read = (f, what) => { try { return fs.readFileSync(f, 'utf8'); } catch (e) { say(`failed to open ${what} file ${f}`); exit(1); } };
  const fail = (x) => { say(JSON.stringify(x, null, 1)); exit(1); };
  try {
    if (argv[0] === '--version') { say('cedar-wasm ' + cedar.getCedarVersion()); exit(0); }
    const cmd = argv[0]; const o = {};
    for (let i = 1; i < argv.length; i++) {
      const a = argv[i];
      const m = { '-p': 'policies', '--policies': 'policies', '-s': 'schema', '--schema': 'schema', '--schema-format': 'schema-format',
        '--entities': 'entities', '--request-json': 'request-json', '-k': 'links', '--template-linked': 'links', '--policy-format': 'policy-format' }[a];
      if (a === '-v' || a === '--verbose') o.verbose = true; else if (a === '--check') o.check = true;
      else if (m) o[m] = argv[++i]; else { say('ref cedar: unknown argument ' + a); exit(2); }
    }
    const schemaOf = () => {
      if (!o.schema) return undefined;
      const t = read(o.schema, 'schema');
      const f = o['schema-format'] || 'cedar';
      if (!['cedar', 'json', 'human'].includes(f)) { say(`invalid value '${f}' for '--schema-format'`); exit(2); }
      return f === 'json' ? JSON.parse(t) : t;
    };
    const uid = (s) => { const m = /^(.*)::(".*")$/s.exec(s); if (!m) fail({ bad_uid: s }); return { type: m[1], id: JSON.parse(m[2]) }; };
    const policySet = () => {
      const text = read(o.policies, 'policies');
      const parts = cedar.policySetTextToParts(text);   // for Cedar's parse errors
      if (parts.type !== 'success') fail(parts);
      // Cedar's parser names items policy0, policy1, ... in text order, templates counted too, and
      // the CLI renames one with an @id annotation to it: split the text into its items
      const items = []; let depth = 0, start = 0, slot = false, id = null;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (c === '/' && text[i + 1] === '/') { while (i < text.length && text[i] !== '\n') i++; continue; }
        if (c === '"') {
          const j0 = i; i++;
          while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
          if (depth === 1 && id === null && /@id\s*\(\s*$/.test(text.slice(start, j0))) id = JSON.parse(text.slice(j0, i + 1));
          continue;
        }
        if ('([{'.includes(c)) depth++; else if (')]}'.includes(c)) depth--;
        else if (c === '?' && /^\?(principal|resource)\b/.test(text.slice(i))) slot = true;
        else if (c === ';' && depth === 0) { items.push({ t: text.slice(start, i + 1), slot, id }); start = i + 1; slot = false; id = null; }
      }
      const staticPolicies = {}, templates = {};
      items.forEach((it, n) => { (it.slot ? templates : staticPolicies)[it.id !== null ? it.id : 'policy' + n] = it.t; });
      const ps = { staticPolicies, templates };
      if (o.links) ps.templateLinks = JSON.parse(read(o.links, 'template-linked')).map(l => ({ templateId: l.template_id, newId: l.link_id,
        values: Object.fromEntries(Object.entries(l.args).map(([k, v]) => [k, uid(v)])) }));
      return ps;
    };
    if (cmd === 'format') {
      const text = read(o.policies, 'policies');
      const r = cedar.formatPolicies({ policyText: text, lineWidth: 80, indentWidth: 2 });
      if (r.type !== 'success') fail(r);
      out += r.formatted_policy;    // print!, as Cedar's format.rs
      exit(o.check && r.formatted_policy !== text ? 1 : 0);
    }
    if (cmd === 'validate') {
      const r = cedar.validate({ validationSettings: { mode: 'strict' }, schema: schemaOf(), policies: policySet() });
      if (r.type !== 'success') fail(r);
      if (r.validationErrors.length) { say(JSON.stringify(r.validationErrors)); exit(3); }
      say('  ☞ policy set validation passed'); exit(0);
    }
    if (cmd === 'authorize') {
      const q = JSON.parse(read(o['request-json'], 'request'));
      const schema = schemaOf();
      const call = { principal: uid(q.principal), action: uid(q.action), resource: uid(q.resource), context: q.context || {},
        policies: policySet(), entities: JSON.parse(read(o.entities, 'entities')) };
      if (schema !== undefined) { call.schema = schema; call.validateRequest = true; }
      const r = cedar.isAuthorized(call);
      if (r.type !== 'success') fail(r);
      say(''); say(r.response.decision === 'allow' ? 'ALLOW' : 'DENY');
      const d = r.response.diagnostics;
      if (d.errors.length) { say(''); for (const e of d.errors) say(`error while evaluating policy \`${e.policyId}\`: ${e.error.message}`); }
      if (o.verbose) { say(''); if (!d.reason.length) say('note: no policies applied to this request');
        else { say('note: this decision was due to the following policies:'); for (const x of d.reason) say('  ' + x); say(''); } }
      exit(r.response.decision === 'allow' ? 0 : 2);
    }
    say('ref cedar: unsupported command ' + cmd); exit(2);
  } catch (e) {
    if (e instanceof Exit) return { out, code: e.code };
    return { out: out + String(e) + '\n', code: 1 };
  }
}

const argv = process.argv.slice(2);
if (argv[0] === '--batch') {
  for (const line of fs.readFileSync(argv[1], 'utf8').split('\n')) {
    if (!line) continue;
    const r = run(JSON.parse(line));
    process.stdout.write(r.out + 'exit ' + r.code + '\n');
  }
} else {
  const r = run(argv);
  process.stdout.write(r.out);
  process.exitCode = r.code;
}
