#!/usr/bin/env node
// Writes docs/PERFORMANCE.md from the result files of tests/bench/run.sh.
//
//   node tests/bench/report.js --results build/bench/results --out docs/PERFORMANCE.md
//        [--workloads "box-example rbac-10 ..."] [--dwc build/dwc] [--have-bench 0|1] [--quick 0|1]
//
// For each workload NAME the results folder holds NAME.meta (key=value: label, style, policies,
// requests), and per mode (parsed, json) NAME.MODE.dwc / NAME.MODE.peer (key=value output of
// `dwc bench` / cedar_peer.js), NAME.MODE.peer.skip (why the peer was not run) and
// NAME.MODE.{dwc,peer}.err (stderr).  Without --workloads every NAME.meta is one.  The sections
// measured by other programs come as load.md (tests/bench/artifact_report.sh), temporal.txt
// (build/temporal_bench's key=value lines), engine.txt (one line per set: set=NAME and the
// `dwc bench --engine` keys) and dwd.md (tests/bench/dwd_report.sh); for each, a .skip file
// (load.skip, ...) says why it was not measured instead.  keyed-rounds.txt (optional: one line per
// round, round=R keyed_10_mean_ns= keyed_10000_mean_ns= ...) gives the keyed scaling target.
//
// The report is checked before it is written: every results section must hold a table with at
// least one row (or say why it was not measured).  Otherwise report.js names the section, writes
// nothing and exits 1, so the file cannot silently lose its tables again.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const RES = args.results || 'build/bench/results';
const OUT = args.out || 'docs/PERFORMANCE.md';
// every NAME.meta when --workloads is not given: the Box example first, then by style and size
function discovered() {
  const names = fs.existsSync(RES) ? fs.readdirSync(RES).filter((f) => f.endsWith('.meta')).map((f) => f.slice(0, -5)) : [];
  const key = (n) => { const m = kv(path.join(RES, `${n}.meta`)) || {}; return [{ example: 0, rbac: 1, box: 2, keyed: 3 }[m.style] ?? 4, Number(m.policies) || 0]; };
  return names.sort((a, b) => { const x = key(a), y = key(b); return x[0] - y[0] || x[1] - y[1] || (a < b ? -1 : 1); });
}
const HAVE_BENCH = args['have-bench'] !== '0';
const QUICK = args.quick === '1';

const readIf = (f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : null);
function kv(f) {
  const t = readIf(f);
  if (t === null) return null;
  const o = {};
  for (const line of t.split('\n')) {
    const m = /^([A-Za-z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) o[m[1]] = m[2];
  }
  return Object.keys(o).length ? o : null;
}
function sh(cmd, argv) {
  try { return execFileSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(); } catch (e) { return null; }
}

const WORKLOADS = args.workloads ? args.workloads.split(/\s+/).filter(Boolean) : discovered();

// ---- machine ----
const cpuinfo = readIf('/proc/cpuinfo') || '';
const cpuModel = (/^model name\s*:\s*(.*)$/m.exec(cpuinfo) || [])[1] || (os.cpus()[0] || {}).model || 'unknown';
const memKb = Number((/^MemTotal:\s*(\d+)/m.exec(readIf('/proc/meminfo') || '') || [])[1]);
const mem = memKb ? `${(memKb / 1048576).toFixed(1)} GiB` : `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`;
const nproc = sh('nproc', []) || String(os.cpus().length);
const commit = sh('git', ['rev-parse', '--short', 'HEAD']) || 'unknown';
// Plumbing only (no index refresh): non-zero exit means tracked files differ from HEAD.
let dirty = false;
try { execFileSync('git', ['diff-index', '--quiet', 'HEAD', '--'], { stdio: 'ignore' }); } catch (e) { dirty = true; }
const uname = sh('uname', ['-srm']) || `${os.type()} ${os.release()} ${os.arch()}`;
const cc = sh('cc', ['--version']);

// ---- formatting ----
const num = (x) => (x === undefined || x === null || x === '' || Number.isNaN(Number(x)) ? null : Number(x));
function t(ns) {
  ns = num(ns);
  if (ns === null) return '—';
  if (ns < 1e3) return `${Math.round(ns)} ns`;
  if (ns < 1e6) return `${(ns / 1e3).toFixed(ns < 1e4 ? 2 : 1)} µs`;
  if (ns < 1e9) return `${(ns / 1e6).toFixed(ns < 1e7 ? 2 : 1)} ms`;
  return `${(ns / 1e9).toFixed(2)} s`;
}
const int = (x) => (num(x) === null ? '—' : Number(x).toLocaleString('en-US'));
function ratio(a, b) {
  a = num(a); b = num(b);
  if (a === null || b === null || b === 0) return '—';
  const r = a / b;
  return r >= 100 ? `${Math.round(r).toLocaleString('en-US')}×` : r >= 10 ? `${r.toFixed(1)}×` : `${r.toFixed(2)}×`;
}
const dec = (x, d = 1) => (num(x) === null ? '—' : Number(x).toFixed(d));
// the lowest and highest p50 of a dwc run's consecutive stretches (dwc bench's window_p50_*), when it has them
const stretches = (r) => (r && num(r.window_p50_min_ns) !== null ? `${t(r.window_p50_min_ns)} – ${t(r.window_p50_max_ns)}` : '');

// ---- collect ----
const W = {};
for (const name of WORKLOADS) {
  const meta = kv(path.join(RES, `${name}.meta`)) || {};
  W[name] = { meta, modes: {} };
  for (const mode of ['parsed', 'json']) {
    const b = path.join(RES, `${name}.${mode}`);
    W[name].modes[mode] = {
      dwc: kv(`${b}.dwc`), runs: [1, 2, 3, 4, 5, 6, 7, 8, 9].map((r) => kv(`${b}.dwc.${r}`)).filter(Boolean), peer: kv(`${b}.peer`), skip: (readIf(`${b}.peer.skip`) || '').trim(),
      dwcErr: (readIf(`${b}.dwc.err`) || '').trim(), peerErr: (readIf(`${b}.peer.err`) || '').trim(),
    };
  }
}
let harness = null;
for (const name of WORKLOADS) for (const m of Object.values(W[name].modes)) if (m.peer && m.peer.harness) harness = m.peer.harness.replace(/ from-json$/, '');

// ---- write ----
const L = [];
const p = (s = '') => L.push(s);
p('# Performance');
p();
p('Generated by `make bench` (`tests/bench/run.sh`); every run overwrites this file.');
if (QUICK) p('\n**Quick run (`BENCH_QUICK=1`): small decision counts, figures are indicative only.**');
if (!HAVE_BENCH) p('\n**`dwc bench` was not available in this build: only the Cedar side was measured.**');
p();
p('## Machine');
p();
p(`- Date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}`);
// the commit measured: run.sh records it when the run starts (the report may be rendered later)
const runMeta = kv(path.join(RES, 'run.meta')) || {};
const measured = runMeta.commit || commit, measuredDirty = runMeta.commit ? runMeta.dirty === '1' : dirty;
p(`- dwc commit: \`${measured}\`${measuredDirty ? ' (working tree has uncommitted changes)' : ''}`);
p(`- CPU: ${cpuModel}; \`nproc\` = ${nproc}`);
p(`- Memory: ${mem}`);
p(`- OS: ${uname}`);
if (cc) p(`- C compiler: ${cc.split('\n')[0]}`);
p(`- Node.js ${process.version}; Cedar peer: @cedar-policy/cedar-wasm${harness ? ` (reports \`${harness}\`)` : ''}`);
// run.sh's run.meta: when, how long, and how loaded the (shared) machine was
const run = kv(path.join(RES, 'run.meta')) || {};
if (run.started) {
  const mins = (x) => (Number(x) < 120 ? `${Math.round(Number(x))} s` : `${(Number(x) / 60).toFixed(1)} min`);
  const parts = [['workloads', 'VM and from-json runs, dwc and Cedar'], ['engine', 'engine'], ['load', 'compile/load'],
                 ['temporal', 'temporal'], ['dwd', 'dwd']];
  let prev = 0;
  const took = [];
  for (const [k, label] of parts) {
    const v = Number(run[`section_${k}`]);
    if (!Number.isFinite(v)) continue;
    took.push(`${label} ${mins(v - prev)}`);
    prev = v;
  }
  p(`- Run: started ${run.started}${run.seconds ? `, took ${mins(run.seconds)}` : ''}${took.length ? ` (${took.join(', ')})` : ''}`);
  p(`- Load average (1, 5, 15 min): ${run.loadavg_start || '?'} at the start, ${run.loadavg_end || '?'} at the end, on ${nproc} cores: ` +
    'the machine is shared, and figures taken under load are slower and noisier than on an idle machine');
  // clock_probe's core clock and the hypervisor's steal (run.sh): why two runs of one binary differ
  const ghz = [run.clock_ghz_start, run.clock_ghz_end].filter((x) => x && x !== 'n/a');
  const j0 = (run.jiffies_start || '').split(' ').map(Number), j1 = (run.jiffies_end || '').split(' ').map(Number);
  const steal = j0.length === 2 && j1.length === 2 && j1[0] > j0[0] ? (100 * (j1[1] - j0[1])) / (j1[0] - j0[0]) : null;
  if (ghz.length || steal !== null)
    p(`- Core clock${runMeta.pinned_cpu !== undefined ? ` of core ${runMeta.pinned_cpu}` : ''} (tests/bench/clock_probe.c: dependent adds, best of 5): ` +
      `${ghz.length ? `${run.clock_ghz_start || '?'} GHz at the start, ${run.clock_ghz_end || '?'} GHz at the end` : 'not measured'}; ` +
      `CPU time taken by the hypervisor (steal, /proc/stat): ${steal === null ? 'not measured' : `${steal.toFixed(1)}% of the run's`}. ` +
      'A virtual machine\'s cores run between their base and boost clocks and share the host, so the same binary\'s ns figures move with both; ' +
      'the ratios to Cedar, measured in the same run, move less');
}
p();
p('## Method');
p();
p('- **dwc**: `build/dwc bench -p POLICY -s SCHEMA [--entities E] --requests R.jsonl -n N [--from-json]`: requests');
p('  round-robin after a warm-up, N decisions, per-decision latency percentiles. N is 1,000,000 or what a');
p('  calibration run says fits in about 3 s. Each case runs several times; the table shows the run with the');
p('  median p50, and the last column the p50 of every run (the machine may be shared with other work).');
p(runMeta.pinned_cpu !== undefined
  ? `  Every \`dwc bench\` run is pinned to core ${runMeta.pinned_cpu} (\`taskset\`): one moved between cores mid-run loses its caches and reads its timestamps on both, and unpinned the same binary's Box-example p50 varied from 70 to 130 ns between runs (pinned: 60 ns each run). The Cedar peer is not pinned (V8 compiles and collects on helper threads).`
  : '  `dwc bench` runs are not pinned to a core (BENCH_CPU empty, or no `taskset`).');
p('- **Stretches**: each dwc run also reports the p50 of each of 20 consecutive stretches of its timed decisions');
p('  (`window_p50_min_ns`, `window_p50_max_ns`; the *stretches* columns show the lowest and the highest). On this');
p('  virtual machine one process, pinned, moves between two speeds within tens of milliseconds: the engine\'s');
p('  plain set decided at a p50 of about 300 ns in some 50 ms stretches and about 550 ns in the next ones, with');
p('  the load average under 0.5 (most likely the host\'s other tenants on the same physical core and caches,');
p('  which the guest cannot see). The run\'s p50 is what is compared with the targets; the lowest stretch says');
p('  what the same code does when the core is least contended.');
p('- **Cedar**: `tests/bench/cedar_peer.js`, same inputs and output keys, driving `@cedar-policy/cedar-wasm` through');
p('  its stateful API: the policy set and schema are preparsed once (`preparsePolicySet`, `preparseSchema`), then');
p('  every decision is one `statefulIsAuthorized` call (request validated against the schema), timed with');
p('  `process.hrtime.bigint()`. cedar-wasm has no preparsed entity store, so each call passes the request\'s entity');
p('  slice (principal, resource and their ancestors). Its figures therefore include the JS ↔ wasm marshalling of');
p('  the request, the slice and the answer; they are the cost of Cedar as a Node.js program sees it, not of native');
p('  Rust Cedar. The number of Cedar decisions is capped by a time budget per run (see the `decisions` column).');
p('  Its warm-up runs every request, then on for at least 2 s and 5,000 decisions (at most 5 s): V8 compiles the');
p('  wasm code up in the background, and with a 1,000-call warm-up the timed p50 was still a fifth too slow.');
p('- **Run length**: so that `make bench` completes in about 15 minutes on 2 shared cores, each dwc case runs 3 times,');
p('  each Cedar run has a 5 s budget (`BENCH_PEER_BUDGET`), each dwd run 3 s after 1 s of warm-up');
p('  (`DWD_LOAD_SECONDS`), and the Cedar peer skips the 100,000-policy sets (its preparse alone takes over a minute).');
p('  That still gives hundreds of thousands of dwc samples per case and thousands of Cedar ones on the small sets;');
p('  the 10,000-policy Cedar runs have only ~100 decisions, enough for a p50, not for a p99.');
p('- **parsed**: the request is already in memory in each engine\'s input form. **from-json**: the timed region also');
p('  parses the request\'s JSON line (dwc: its JSON reader; Cedar: `JSON.parse` + building the call object).');
p('- **Ratio** = Cedar ÷ dwc (higher means dwc is faster).');
p('- Workloads: Box\'s `examples/box/01-project-read` (Box\'s schema; requests that fail the schema gate dropped) and');
p('  sets from `tests/bench/gen.js --seed 1`: *rbac* (`principal in Role`, `resource in Folder`, 4 actions,');
p('  attribute/context conditions, ~12% forbids) and *box* (Box\'s action vocabulary, scopes keyed on');
p('  `resource == Box::Resource::"wN"`, `like`/`has`/`contains` conditions on `context.input`, ~10% forbids).');
p('  Each policy names one of 25 scope groups and one of 4 actions, so ~1% of a set is in scope for any request.');
p('  *keyed* is *box* with the groups growing with the set (N ÷ 8 workspaces): about two policies share each');
p('  (action, workspace) key at every size, so a request\'s scope holds for the same few policies in every set');
p('  (per-workspace or per-user rules, as template links give); this is the issue\'s scope-keyed scaling set.');
p('  Requests per set: 1,000 (10–1,000 policies), 100 (10,000), 50 (100,000).');
p('- Decisions are cross-checked: dwc bench\'s allow/deny totals against Cedar\'s decisions for the same');
p('  round-robin sequence, and `dwc authorize --requests` against Cedar request by request.');
p();

// Per-workload tables.
p('## Results');
p();
p('One table per workload: dwc and Cedar on the same requests in the same run, each with and without JSON');
p('parsing in the timed loop; the bold rows are Cedar ÷ dwc.');
const checks = [];
for (const name of WORKLOADS) {
  const { meta, modes } = W[name];
  p();
  p(`### ${meta.label || name}`);
  p();
  const d0 = modes.parsed.dwc;
  p(`${int(meta.policies)} policies, ${int(meta.requests)} requests` +
    (meta.dropped && meta.dropped !== '0' ? ` (${meta.dropped} schema-invalid request(s) dropped)` : '') +
    (d0 && d0.policies_evaluated_per_decision !== undefined ? `; dwc evaluates ${dec(d0.policies_evaluated_per_decision, 2)} policies per decision` : '') +
    (d0 && d0.allocs_per_decision !== undefined ? `, ${dec(d0.allocs_per_decision, 2)} allocations per decision` : '') + '.');
  p();
  p('| mode | engine | decisions | p50 | p90 | p99 | mean | allow / deny | p50 of each run | p50 of its stretches |');
  p('|---|---|---:|---:|---:|---:|---:|---:|---|---|');
  for (const mode of ['parsed', 'json']) {
    const m = modes[mode];
    const row = (eng, r, runs) => p(`| ${mode === 'json' ? 'from-json' : 'parsed'} | ${eng} | ${int(r.decisions)} | ${t(r.p50_ns)} | ` +
      `${t(r.p90_ns)} | ${t(r.p99_ns)} | ${t(r.ns_per_decision)} | ${int(r.allow)} / ${int(r.deny)} | ${runs || ''} | ${stretches(r)} |`);
    if (m.dwc) row('dwc', m.dwc, m.runs.length > 1 ? m.runs.map((x) => t(x.p50_ns)).join(', ') : '');
    else p(`| ${mode === 'json' ? 'from-json' : 'parsed'} | dwc | ${HAVE_BENCH ? 'failed' : 'not available'} | | | | | | | |`);
    if (m.peer) row('Cedar (wasm)', m.peer);
    else p(`| ${mode === 'json' ? 'from-json' : 'parsed'} | Cedar (wasm) | ${m.skip ? 'not run¹' : 'failed'} | | | | | | | |`);
    if (m.dwc && m.peer) {
      p(`| ${mode === 'json' ? 'from-json' : 'parsed'} | **Cedar ÷ dwc** | | **${ratio(m.peer.p50_ns, m.dwc.p50_ns)}** | ` +
        `${ratio(m.peer.p90_ns, m.dwc.p90_ns)} | ${ratio(m.peer.p99_ns, m.dwc.p99_ns)} | ${ratio(m.peer.ns_per_decision, m.dwc.ns_per_decision)} | | | |`);
    }
    if (m.skip) checks.push(`${name} (${mode}): Cedar ${m.skip}`);
    for (const line of m.peerErr.split('\n')) if (/WARNING/.test(line)) checks.push(`${name} (${mode}): ${line.replace(/^cedar_peer: /, '')}`);
    if (m.peer && m.peer.check === 'ok') checks.push(`${name} (${mode}): decisions agree`);
    if (m.dwcErr && !m.dwc) checks.push(`${name} (${mode}): dwc bench failed: ${m.dwcErr.split('\n')[0]}`);
  }
  if (modes.parsed.skip || modes.json.skip) p(`\n¹ Cedar on ${meta.label || name}: ` + (modes.parsed.skip || modes.json.skip));
}

// Scaling.
p();
p('## Scaling with the number of policies');
p();
p('p50 latency (parsed requests) and its growth relative to the 10-policy set; `evaluated` is dwc\'s');
p('`policies_evaluated_per_decision`.');
for (const style of ['rbac', 'box', 'keyed']) {
  const rows = WORKLOADS.filter((n) => W[n].meta.style === style).sort((a, b) => Number(W[a].meta.policies) - Number(W[b].meta.policies));
  if (!rows.length) continue;
  const base = W[rows[0]].modes.parsed;
  p();
  p(`### ${style}`);
  p();
  p('| policies | dwc p50 | dwc growth | evaluated | allocs | Cedar p50 | Cedar growth | Cedar ÷ dwc |');
  p('|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const n of rows) {
    const m = W[n].modes.parsed;
    p(`| ${int(W[n].meta.policies)} | ${t(m.dwc && m.dwc.p50_ns)} | ${m.dwc && base.dwc ? ratio(m.dwc.p50_ns, base.dwc.p50_ns) : '—'} | ` +
      `${m.dwc ? dec(m.dwc.policies_evaluated_per_decision, 2) : '—'} | ${m.dwc ? dec(m.dwc.allocs_per_decision, 2) : '—'} | ` +
      `${m.peer ? t(m.peer.p50_ns) : (m.skip ? 'not run' : '—')} | ${m.peer && base.peer ? ratio(m.peer.p50_ns, base.peer.p50_ns) : '—'} | ` +
      `${m.peer && m.dwc ? ratio(m.peer.p50_ns, m.dwc.p50_ns) : '—'} |`);
  }
  const at = (k) => rows.find((n) => W[n].meta.policies === String(k));
  const g = (eng) => {
    const a = at(10), b = at(10000), c = at(100000);
    const v = (n) => n && W[n].modes.parsed[eng] && W[n].modes.parsed[eng].p50_ns;
    if (!v(a)) return null;
    return `10 → 10,000: ${v(b) ? ratio(v(b), v(a)) : '—'}; 10 → 100,000: ${v(c) ? ratio(v(c), v(a)) : '—'}`;
  };
  p();
  if (g('dwc')) p(`dwc p50 growth: ${g('dwc')}.  `);
  if (g('peer')) p(`Cedar p50 growth: ${g('peer')}.`);
}
p();
p('Why dwc\'s p50 grows with the rbac and box sets: the generator makes about 1% of any set match a request\'s');
p('scope (0.1 policies of 10, 100 of 10,000, 1,000 of 100,000), and every policy that can be');
p('true must run, since its errors and its place among the determining policies are part of the');
p('answer. The scope index (and, for Box-style sets, the condition guards of');
p('`docs/ARCHITECTURE.md`) skip every other policy, so `evaluated` is the floor: p50 ≈ a fixed');
p('~100 ns + `evaluated` × the cost of one policy (~40-90 ns in cache; several hundred ns at');
p('100,000 policies, whose code and entity data no longer fit in cache). A p50 growth of ≤ 1.5×');
p('from 10 to 10,000 policies would need `evaluated` to stay near 1, which a set where 1% of the');
p('policies match cannot give; RBAC-style conditions (`resource.owner == principal`,');
p('`context.hour >= 6`) compare request values with each other or with ranges and have no');
p('literal to index, so that style evaluates the whole 1%. The keyed sets hold `evaluated` constant,');
p('so their growth is what the index and the cache cost as the set grows. The scaling target (Targets');
p('below) takes that growth from keyed-10 and keyed-10,000 run back to back, round by round, since the');
p('runs above are minutes apart and this host\'s speed moves by more than the growth between them.');

// The sections other programs measure (run.sh runs them; make bench builds them).
// fragment(NAME, FILE, TITLE, render): FILE rendered, else the reason in NAME.skip.
const skipped = new Set(), missing = [];
function fragment(name, file, title, render) {
  const text = readIf(path.join(RES, file));
  const skip = (readIf(path.join(RES, `${name}.skip`)) || '').trim();
  if (text !== null && text.trim()) { render(text); return; }
  p();
  p(`## ${title}`);
  p();
  skipped.add(title);   /* said here, not again by the table check */
  if (skip) p(`**Not measured in this run:** ${skip}`); else missing.push(`${title}: no ${file} in ${RES}`);
}
// a markdown fragment with its own `## ` heading, blank lines trimmed
const inline = (text) => { p(); for (const l of text.replace(/^\n+|\n+$/g, '').split('\n')) p(l); };
fragment('load', 'load.md', 'Compiling and loading (tests/bench/load_bench.c)', inline);
fragment('temporal', 'temporal.txt', 'Temporal rules (tests/bench/temporal_bench.c)', (text) => {
  p();
  p('## Temporal rules (tests/bench/temporal_bench.c)');
  p();
  p('A count budget over a 1h window (Box shape, box.md §13), decided through the engine with N events');
  p('in the window; the plain decision is the same set without the temporal clause, also through the engine');
  p('(gate, history append, decision).');
  const plain = (/^plain_ns_per_decision=(\S+)/m.exec(text) || [])[1];
  if (plain) { p(); p(`Plain decision: ${t(plain)}.`); }
  // Cedar has no temporal rules: its figure is the plain Box example from JSON of the same run (means)
  const cpeer = (W['box-example'] && W['box-example'].modes.json.peer) || null;
  if (cpeer) {
    p();
    p(`Cedar has no temporal rules; the last column compares with cedar-wasm's mean for the plain Box example from JSON in this run (${t(cpeer.ns_per_decision)}), which decides less than any row here.`);
  }
  p();
  p('| events in window | per decision | ÷ plain | ÷ fewest events | history | allow | cedar-wasm mean ÷ dwc |');
  p('|---:|---:|---:|---:|---:|---|---:|');
  for (const line of text.split('\n')) {
    if (!/events_in_window=/.test(line)) continue;
    const o = {};
    for (const m of line.matchAll(/([a-z_]+)=(\S+)/g)) o[m[1]] = m[2];
    p(`| ${int(o.events_in_window)} | ${t(o.ns_per_decision)} | ${dec(o.ratio_to_plain, 2)}× | ${dec(o.ratio_to_first, 2)}× | ${int(o.history)} | ${o.allow || '—'} | ${cpeer ? ratio(cpeer.ns_per_decision, o.ns_per_decision) : '—'} |`);
  }
});
fragment('engine', 'engine.txt', 'Box events through the engine (dwc bench --engine)', (text) => {
  p();
  p('## Box events through the engine (dwc bench --engine)');
  p();
  p('01-project-read\'s requests as Box events (tests/bench/engine/), each decided by `dw_engine_decide_json`');
  p('as a gateway calls it: JSON parse, gate, history append with the engine\'s retention, temporal leaves,');
  p('verdict (in memory, no log; the clock\'s time). **budget** appends a count budget over 1 h');
  p('(tests/bench/engine/budget-rule.dw): every decision evaluates its leaf and the history keeps every read of');
  p('the run. Cedar has no stateful engine: its figure is cedar-wasm on the same requests with JSON parsing in');
  p('the timed loop (the Box example\'s from-json run above).');
  const peer = (W['box-example'] && W['box-example'].modes.json.peer) || null;
  const rows = [];
  for (const line of text.split('\n')) {
    if (!/^set=/.test(line)) continue;
    const o = {};
    for (const m of line.matchAll(/([a-z_0-9]+)=(\S+)/g)) o[m[1]] = m[2];
    rows.push(o);
  }
  const plain = rows.find((o) => o.set === 'plain');
  p();
  p('| set | decisions | p50 | p90 | p99 | mean | allocations / decision | history | p50 ÷ plain | Cedar from-json p50 ÷ dwc p50 | p50 of its stretches |');
  p('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const o of rows)
    p(`| ${o.set} | ${int(o.decisions)} | ${t(o.p50_ns)} | ${t(o.p90_ns)} | ${t(o.p99_ns)} | ${t(o.ns_per_decision)} | ${o.allocs_per_decision || '—'} | ${int(o.history_events)} | ${plain ? ratio(o.p50_ns, plain.p50_ns) : '—'} | ${peer ? ratio(peer.p50_ns, o.p50_ns) : '—'} | ${stretches(o) || '—'} |`);
});
fragment('dwd', 'dwd.md', 'dwd over the socket (tests/bench/dwd_load.c)', inline);

// Issue 16's targets against this run's own figures.
{
  const tg = [];
  const yes = (ok) => (ok === null ? '—' : ok ? 'yes' : '**no**');
  const chk = (v, f) => (num(v) === null ? null : f(Number(v)));
  const bx = W['box-example'] && W['box-example'].modes;
  const vm = bx && bx.parsed.dwc, vmc = bx && bx.parsed.peer, js = bx && bx.json.dwc, jsc = bx && bx.json.peer;
  const q = (a, b) => (num(a) === null || num(b) === null || !Number(b) ? null : Number(a) / Number(b));
  const within = (r) => (stretches(r) ? ` (its stretches: ${stretches(r)})` : '');
  tg.push(['Box example through the VM: p50 ≤ 100 ns', t(vm && vm.p50_ns) + within(vm), yes(chk(vm && vm.p50_ns, (x) => x <= 100))]);
  tg.push(['… ≥ 1,500× cedar-wasm (p50)', ratio(vmc && vmc.p50_ns, vm && vm.p50_ns), yes(chk(q(vmc && vmc.p50_ns, vm && vm.p50_ns), (x) => x >= 1500))]);
  tg.push(['From JSON (`--from-json`): ≥ 300× cedar-wasm (p50)', `${ratio(jsc && jsc.p50_ns, js && js.p50_ns)} (dwc ${t(js && js.p50_ns)})`,
           yes(chk(q(jsc && jsc.p50_ns, js && js.p50_ns), (x) => x >= 300))]);
  const eng = {}, pairs = [];
  for (const line of (readIf(path.join(RES, 'engine.txt')) || '').split('\n')) {
    const o = {};
    for (const m of line.matchAll(/([a-z_0-9]+)=(\S+)/g)) o[m[1]] = m[2];
    if (o.set) eng[o.set] = o;
    if (o.pair) { const x = q(o.budget_p50_ns, o.plain_p50_ns); if (x !== null) pairs.push(x); }
  }
  tg.push(['`dwc bench --engine`, plain set: p50 ≤ 400 ns', t(eng.plain && eng.plain.p50_ns) + within(eng.plain), yes(chk(eng.plain && eng.plain.p50_ns, (x) => x <= 400))]);
  // the rounds alternate the two sets: the median of each round's ratio, else the medians' ratio
  pairs.sort((a, b) => a - b);
  const bq = pairs.length ? pairs[Math.floor((pairs.length - 1) / 2)] : q(eng.budget && eng.budget.p50_ns, eng.plain && eng.plain.p50_ns);
  tg.push([`… with a count budget over 1 h: ≤ 1.5× the plain set (p50${pairs.length ? ', median of the alternating rounds' : ''})`,
           bq === null ? '—' : `${bq.toFixed(2)}×${pairs.length ? ` (rounds: ${pairs.map((x) => x.toFixed(2)).join(', ')})` : ''}`, yes(bq === null ? null : bq <= 1.5)]);
  tg.push(['… allocations per decision (steady state: 0)', eng.plain ? `plain ${eng.plain.allocs_per_decision}, budget ${eng.budget ? eng.budget.allocs_per_decision : '—'} (the window's growth, amortized)` : '—',
           yes(eng.plain ? Number(eng.plain.allocs_per_decision) === 0 : null)]);
  const DR = args['dwd-results'] || path.join(RES, '..', 'dwd-load-results');
  const pr = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((r) => q((kv(path.join(DR, `pair-batch-${r}`)) || {}).decisions_per_s, (kv(path.join(DR, `pair-echo-${r}`)) || {}).decisions_per_s)).filter((x) => x !== null).sort((a, b) => a - b);
  const med = pr.length ? pr[Math.floor((pr.length - 1) / 2)] : null;
  tg.push(['dwd batch, 8 closed-loop clients: ≥ 0.8× the echo server (median of the back-to-back pairs)', med === null ? '—' : `${med.toFixed(2)}× (pairs: ${pr.map((x) => x.toFixed(2)).join(', ')})`, yes(med === null ? null : med >= 0.8)]);
  for (const c of [8, 64]) {
    const r = kv(path.join(DR, `batch-closed-${c}`)) || {};
    tg.push([`dwd batch, ${c} closed-loop clients: p99 ≤ 1 ms`, r.p99_us ? `${r.p99_us} µs` : '—', yes(chk(r.p99_us, (x) => x <= 1000))]);
  }
  // keyed-rounds.txt: keyed-10 and keyed-10,000 back to back, round by round (run.sh); the median
  // round's ratio, else (no rounds) the ratio of the two workloads' median-p50 runs
  const rounds = [];
  for (const line of (readIf(path.join(RES, 'keyed-rounds.txt')) || '').split('\n')) {
    const o = {};
    for (const m of line.matchAll(/([a-z_0-9]+)=(\S+)/g)) o[m[1]] = m[2];
    const x = q(o.keyed_10000_mean_ns, o.keyed_10_mean_ns);
    if (o.round && x !== null) rounds.push({ x, a: o.keyed_10_mean_ns, b: o.keyed_10000_mean_ns });
  }
  rounds.sort((a, b) => a.x - b.x);
  const kd = (k) => { const w = W[`keyed-${k}`]; return w && w.modes.parsed.dwc ? w.modes.parsed.dwc : null; };
  if (rounds.length) {
    const mr = rounds[Math.floor((rounds.length - 1) / 2)];
    tg.push(['10 → 10,000 scope-keyed policies (*keyed*): mean grows ≤ 1.5× (median of the alternating rounds)',
             `${mr.x.toFixed(2)}× (${t(mr.a)} → ${t(mr.b)} in that round; rounds: ${rounds.map((r) => r.x.toFixed(2)).join(', ')})`, yes(mr.x <= 1.5)]);
  } else {
    const kg = kd(10) && kd(10000) ? q(kd(10000).ns_per_decision, kd(10).ns_per_decision) : null;
    tg.push(['10 → 10,000 scope-keyed policies (*keyed*): mean grows ≤ 1.5×',
             kg === null ? '—' : `${kg.toFixed(2)}× (${t(kd(10).ns_per_decision)} → ${t(kd(10000).ns_per_decision)}; p50 ${t(kd(10).p50_ns)} → ${t(kd(10000).p50_ns)})`,
             yes(kg === null ? null : kg <= 1.5)]);
  }
  p();
  p('## Targets (issue 16)');
  p();
  p('The issue\'s targets against this run\'s own figures (the Cedar ratios are p50 ÷ p50 of the same run).');
  if (vmc && jsc)
    p(`The 1,500× and 300× targets imply a cedar-wasm p50 of about 135–155 µs on the Box example (the issue's 1,036× at 150 ns, and 300× at about 450 ns); warmed up as above it is ${t(vmc.p50_ns)} (parsed) and ${t(jsc.p50_ns)} (from JSON) in this run, which puts them at ${t(vmc.p50_ns / 1500)} and ${t(jsc.p50_ns / 300)} for dwc.`);
  p();
  p('| target | this run | met |');
  p('|---|---|---|');
  for (const [a, b, c] of tg) p(`| ${a} | ${b} | ${c} |`);
}

p();
p('## Checks and notes');
p();
if (!checks.length) p('- (none)');
for (const c of checks) p(`- ${c}`);
p();
p('Reproduce: `make bench` (or `tests/bench/run.sh [SHARED_DIR]` after `make`). Raw key=value outputs are kept in');
p('`build/bench/results/`; the generated sets in `build/bench/<style>-<policies>/`.');

// ---- check: every results section has a table with a row ----
// Sections are `## ` and `### ` headings; the prose-only ones are named here.  A `## `
// section whose tables are in its `### ` subsections is checked through them.
const PROSE = new Set(['Machine', 'Method', 'Checks and notes']);
const sections = [];
for (const line of L.join('\n').split('\n')) {
  const h = /^(#{2,3}) (.*)$/.exec(line);
  if (h) sections.push({ level: h[1].length, title: h[2], rows: 0, sep: false, subs: 0 });
  else if (sections.length) {
    const sec = sections[sections.length - 1];
    if (/^\|[-:| ]+\|$/.test(line)) sec.sep = true;
    else if (sec.sep && /^\|.*\|$/.test(line)) sec.rows++;
  }
}
sections.forEach((sec, i) => {
  if (sec.level !== 3) return;
  for (let j = i - 1; j >= 0; j--) if (sections[j].level === 2) { sections[j].subs++; break; }
});
const bad = [...missing];
for (const sec of sections) {
  if (PROSE.has(sec.title) || skipped.has(sec.title) || (sec.level === 2 && sec.subs)) continue;
  if (!sec.rows) bad.push(`${sec.title}: no table rows`);
}
for (const title of ['Results', 'Scaling with the number of policies'])
  if (!sections.some((x) => x.title === title && x.subs)) bad.push(`${title}: no workloads`);
if (bad.length) {
  console.error(`report.js: not writing ${OUT}: ${bad.length} section(s) without their tables:`);
  for (const b of bad) console.error(`  - ${b}`);
  process.exit(1);
}
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(OUT, L.join('\n') + '\n');
