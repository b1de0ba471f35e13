'use strict';
// Seeded generator of random Cedar test cases (Cedar's language only, no Dogwood features).
//
//   const { genCase, printPolicy } = require('./gen');
//   const c = genCase(seed);   // seed: any 32-bit integer
//
// A case is { schemaText, policies: [policy AST], entities: [entity JSON], requests: [...] }.
// Policies are kept as small ASTs (see printPolicy) so that run.js can shrink them.
// Expression nodes: { p: [part, ...] } where a part is a string or a child node; printing
// concatenates the parts.  Shrinking replaces a node by one of its descendants or a literal.
//
// Generation is type-directed from the schema (so most policies validate and exercise the
// evaluator deeply) with a deliberate bias towards interesting cases: run-time errors
// (overflow, invalid extension strings, wrong arity, missing attributes, absent entities,
// missing tags), short-circuits around erroring operands, optional attributes with and
// without `has` guards, `has` paths of 1 to 5 names (declared, partly declared, through
// non-records), hierarchy edges (absent entities, self-membership, action groups),
// `like` with wildcards and `\*`, and a small rate of ill-typed expressions.

// ---------------------------------------------------------------- PRNG
function mulberry32(a) {
  return function () {
    a |= 0; a = (a + 0x6D2B79F5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeRng(seed) {
  const r = mulberry32(seed >>> 0);
  const R = {
    f: r,
    int: (lo, hi) => lo + Math.floor(r() * (hi - lo + 1)),
    chance: (p) => r() < p,
    pick: (arr) => arr[Math.floor(r() * arr.length)],
    // weighted pick: list of [weight, value]
    wpick: (list) => {
      let tot = 0;
      for (const [w] of list) tot += w;
      let x = r() * tot;
      for (const [w, v] of list) { if ((x -= w) < 0) return v; }
      return list[list.length - 1][1];
    },
    subset: (arr, p) => arr.filter(() => r() < p),
    shuffle: (arr) => { const a = arr.slice(); for (let i = a.length - 1; i > 0; i--) { const j = Math.floor(r() * (i + 1)); [a[i], a[j]] = [a[j], a[i]]; } return a; },
  };
  return R;
}

// ---------------------------------------------------------------- text helpers
function cedarStr(s) {
  let o = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '"') o += '\\"';
    else if (ch === '\\') o += '\\\\';
    else if (ch === '\n') o += '\\n';
    else if (ch === '\t') o += '\\t';
    else if (c === 0) o += '\\0';
    else if (c < 0x20 || c === 0x7f) o += '\\u{' + c.toString(16) + '}';
    else o += ch;
  }
  return o + '"';
}
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED = new Set(['true', 'false', 'if', 'then', 'else', 'in', 'is', 'like', 'has', '__cedar',
  'permit', 'forbid', 'when', 'unless', 'principal', 'action', 'resource', 'context']);
// attribute names that can be written bare after `.` / `has` / as record keys
const bareAttr = (a) => IDENT.test(a) && !['true', 'false', 'if', 'then', 'else', 'in', 'is', 'like', 'has', '__cedar'].includes(a);
const schemaAttr = (a) => (bareAttr(a) ? a : cedarStr(a));

const N = (...p) => ({ p });             // expression node
const L = (s) => ({ p: [s] });           // leaf
function printExpr(n) {
  if (typeof n === 'string') return n;
  let o = '';
  for (const x of n.p) o += typeof x === 'string' ? x : printExpr(x);
  return o;
}

// ---------------------------------------------------------------- types
const T = {
  Long: { k: 'Long' }, String: { k: 'String' }, Bool: { k: 'Bool' },
  Set: (el) => ({ k: 'Set', el }),
  Rec: (attrs) => ({ k: 'Record', attrs }),      // attrs: [{ name, t, req }]
  Ent: (name) => ({ k: 'Entity', name }),
  Ext: (name) => ({ k: 'Ext', name }),
};
const EXTS = ['decimal', 'ipaddr', 'datetime', 'duration'];
function typeKey(t) {
  switch (t.k) {
    case 'Set': return `Set<${typeKey(t.el)}>`;
    case 'Record': return `{${t.attrs.map((a) => `${a.name}${a.req ? '' : '?'}:${typeKey(a.t)}`).join(',')}}`;
    case 'Entity': return `E:${t.name}`;
    case 'Ext': return `X:${t.name}`;
    default: return t.k;
  }
}
const sameType = (a, b) => typeKey(a) === typeKey(b);

// ---------------------------------------------------------------- value pools
const STR_POOL = ['', 'a', 'b', 'ab', 'abc', 'a*b', '*', 'ba', 'aab', 'hello', 'x y', 'é', '日本', '😀a', 'A', 'a\\b', 'q"t', 'ab*', '\n', '\0z'];
const ID_POOL = ['alice', 'bob', 'x', '', 'a"b', 'é', '*', 'a b', 'Z9', '\u0001'];
const TAG_KEYS = ['t1', 't2', 'a', '', 'x y'];
const DEC_VALID = ['0.0', '1.5', '1.50', '-1.5', '2.25', '0.0001', '-0.0001', '922337203685477.5807', '-922337203685477.5808', '100.0', '3.1415', '007.5'];
const DEC_INVALID = ['1', '1.', '.5', '1.23456', 'abc', '', '922337203685477.5808', '-922337203685477.5809', '1.5e3', ' 1.5', '+1.5', '1,5'];
const IP_VALID = ['10.0.0.1', '10.0.0.0/8', '10.0.0.1/8', '127.0.0.1', '127.0.0.0/8', '192.168.1.1/24', '224.0.0.1', '0.0.0.0/0', '::1', '::', 'ff02::1', 'fe80::1/64', '2001:db8::/32', 'FFFF::1', '1:2:3:4:5:6:7:8', '::/0', '255.255.255.255/32', '::1/128'];
const IP_INVALID = ['1.2.3', '256.0.0.1', '01.2.3.4', '::ffff:1.2.3.4', '::1.2.3.4', '1.2.3.4/33', '::1/129', '1.2.3.4/', 'fe80::1%eth0', '[::1]', ' 1.2.3.4', '1::2::3', '', '1.2.3.4/08', 'abc'];
const DT_VALID = ['2024-01-01', '1970-01-01', '1969-12-31T23:59:59Z', '2024-02-29', '2023-06-15T12:30:45.123Z', '2023-06-15T12:30:45+0130', '2023-06-15T12:30:45.500-2359', '0000-01-01', '9999-12-31T23:59:59.999Z', '1900-03-01T00:00:00Z', '2000-01-01T00:00:00-0000'];
const DT_INVALID = ['2023-02-29', '2024-13-01', '2024-01-01T24:00:00Z', '2024-01-01T23:59:60Z', '2024-01-01T00:00:00+01:00', '2024-01-01T00:00:00+2400', '2024-01-01T00:00:00.12Z', '24-01-01', '2024-1-1', '2024-01-01t00:00:00Z', '', '2024-01-01T00:00:00+0060', '2024-01-01 00:00:00Z'];
const DUR_VALID = ['1h30m', '-2d', '500ms', '1d2h3m4s5ms', '0ms', '-1h30m', '0001s', '9223372036854775807ms', '-9223372036854775808ms', '106751991167d', '1d', '59s', '-1ms'];
const DUR_INVALID = ['', '-', '1', '1h-30m', '1m1h', '1H', '1d1d', '9223372036854775808ms', '106751991168d', '1.5h', ' 1h', '1h 2m', '+1h'];
const LONG_EXTREME = ['9223372036854775807', '-9223372036854775808', '4611686018427387904', '-4611686018427387904', '3037000500', '9223372036854775806', '-9223372036854775807'];

// ---------------------------------------------------------------- schema
function genSchema(R) {
  const ns = R.wpick([[5, ''], [3, 'NS'], [1, 'A::B']]);
  const q = (n) => (ns ? `${ns}::${n}` : n);
  const nStd = R.int(1, 4);
  const names = R.shuffle(['User', 'Group', 'Doc', 'Folder', 'Team', 'Box']).slice(0, nStd);
  const S = { ns, q, types: {}, std: [], enums: [], actions: [], commons: [], actionType: q('Action') };
  S.std = names.map(q);
  const hasEnum = R.chance(0.35);
  if (hasEnum) S.enums.push(q('Color'));
  const allEnt = () => S.std.concat(S.enums);
  const ATTR_NAMES = ['a', 'b', 'n', 's', 'flag', 'owner', 'ip', 'when', 'dur', 'amt', 'items', 'rec', 'x y', 'if', 'tags'];

  // common types (used by name in the schema text; here they are just inlined)
  function genType(depth) {
    return R.wpick([
      [4, T.Long], [4, T.String], [3, T.Bool],
      [depth > 0 ? 2 : 0, { k: 'SetLazy' }],
      [depth > 0 ? 1.5 : 0, { k: 'RecLazy' }],
      [2, { k: 'EntLazy' }],
      [3, { k: 'ExtLazy' }],
    ]);
  }
  function realise(t, depth) {
    if (t.k === 'SetLazy') return T.Set(realise(genType(depth - 1), depth - 1));
    if (t.k === 'RecLazy') return genRecord(depth - 1, R.int(0, 3));
    if (t.k === 'EntLazy') return T.Ent(R.pick(allEnt()));
    if (t.k === 'ExtLazy') return T.Ext(R.pick(EXTS));
    return t;
  }
  function genRecord(depth, n) {
    const names = R.shuffle(ATTR_NAMES).slice(0, n);
    return T.Rec(names.map((name) => ({ name, t: realise(genType(depth), depth), req: R.chance(0.65) })));
  }

  // entity types
  for (let i = 0; i < S.std.length; i++) {
    const name = S.std[i];
    const parents = S.std.filter((_, j) => j > i && R.chance(0.5));
    if (R.chance(0.12)) parents.push(name); // self-membership
    const shape = genRecord(2, R.int(0, 5));
    const tags = R.chance(0.3) ? realise(R.pick([T.String, T.Long, { k: 'SetLazy' }, { k: 'ExtLazy' }, T.Bool]), 1) : null;
    S.types[name] = { kind: 'std', parents, shape, tags };
  }
  for (const e of S.enums) S.types[e] = { kind: 'enum', ids: R.shuffle(['red', 'green', 'blue', 'a b']).slice(0, R.int(1, 3)), parents: [], shape: T.Rec([]), tags: null };

  // actions
  const actNames = R.shuffle(['read', 'write', 'view', 'del ete', 'edit']).slice(0, R.int(1, 3));
  const groups = R.chance(0.6) ? R.shuffle(['grp', 'all']).slice(0, R.int(1, 2)) : [];
  // groups have no appliesTo (mostly); they may be in other groups
  for (let i = 0; i < groups.length; i++) {
    const parents = groups.filter((_, j) => j > i && R.chance(0.6));
    const applies = R.chance(0.2) ? genApplies() : null;
    S.actions.push({ id: groups[i], parents, applies, group: true });
  }
  function genApplies() {
    const ents = allEnt();
    const pts = R.subset(ents, 0.45); if (!pts.length) pts.push(R.pick(S.std));
    const rts = R.subset(ents, 0.45); if (!rts.length) rts.push(R.pick(S.std));
    return { principals: pts, resources: rts, context: genRecord(2, R.int(0, 4)) };
  }
  for (const a of actNames) {
    const parents = R.subset(groups, 0.6);
    S.actions.push({ id: a, parents, applies: genApplies(), group: false });
  }
  S.allEnt = allEnt();
  return S;
}

function typeText(S, t, R, noHoist = false) {
  const pre = () => (R && R.chance(0.15) ? '__cedar::' : '');
  switch (t.k) {
    case 'Long': case 'String': case 'Bool': return pre() + t.k;
    case 'Set': return `Set<${typeText(S, t.el, R)}>`;
    case 'Record': {
      const txt = `{${t.attrs.map((a) => `${R && R.chance(0.1) ? '@doc("d") ' : ''}${schemaAttr(a.name)}${a.req ? '' : '?'}: ${typeText(S, a.t, R)}`).join(', ')}}`;
      if (R && S.commonDecls && !noHoist && R.chance(0.25)) { // hoist into a common type
        const name = `Ct${S.commonDecls.length}`;
        S.commonDecls.push(`type ${name} = ${txt};`);
        return R.chance(0.5) && S.ns ? `${S.ns}::${name}` : name;
      }
      return txt;
    }
    case 'Entity': return S.ns && R && R.chance(0.5) && t.name.startsWith(S.ns + '::') ? t.name.slice(S.ns.length + 2) : t.name;
    case 'Ext': return pre() + t.name;
  }
  throw new Error('bad type ' + t.k);
}

function schemaText(S, R) {
  S.commonDecls = [];
  const ind = S.ns ? '  ' : '';
  const out = [];
  const local = (n) => (S.ns && n.startsWith(S.ns + '::') ? n.slice(S.ns.length + 2) : n);
  for (const name of S.std.concat(S.enums)) {
    const ty = S.types[name];
    if (ty.kind === 'enum') { out.push(`${ind}entity ${local(name)} enum [${ty.ids.map(cedarStr).join(', ')}];`); continue; }
    let s = `${ind}entity ${local(name)}`;
    if (ty.parents.length) s += ` in [${ty.parents.map(local).join(', ')}]`;
    if (ty.shape.attrs.length || R.chance(0.5)) s += ` ${R.chance(0.5) ? '= ' : ''}${typeText(S, ty.shape, R, true)}`;
    if (ty.tags) s += ` tags ${typeText(S, ty.tags, R)}`;
    out.push(s + ';');
  }
  const aname = (id) => (IDENT.test(id) && !RESERVED.has(id) ? id : cedarStr(id));
  for (const a of S.actions) {
    let s = `${ind}action ${aname(a.id)}`;
    if (a.parents.length) s += ` in [${a.parents.map(aname).join(', ')}]`;
    if (a.applies) {
      s += ` appliesTo {\n${ind}  principal: [${a.applies.principals.map(local).join(', ')}],\n${ind}  resource: [${a.applies.resources.map(local).join(', ')}],\n${ind}  context: ${typeText(S, a.applies.context, R)}\n${ind}}`;
    }
    out.push((R.chance(0.1) ? '@doc("a")\n' + ind : '') + s + ';');
  }
  for (const c of S.commonDecls) out.unshift(ind + c);
  const body = out.join('\n');
  return S.ns ? `namespace ${S.ns} {\n${body}\n}\n` : body + '\n';
}

// ---------------------------------------------------------------- values (JSON)
function genStr(R) { return R.pick(STR_POOL); }
function genLongVal(R) { return R.wpick([[5, R.int(-5, 5)], [2, R.int(-1000, 1000)], [1, R.pick([9007199254740991, -9007199254740991, 2147483647, -2147483648])]]); }

function genValueJson(S, E, t, R, depth = 0) {
  switch (t.k) {
    case 'Long': return genLongVal(R);
    case 'String': return genStr(R);
    case 'Bool': return R.chance(0.5);
    case 'Set': { const n = R.int(0, 3); const a = []; for (let i = 0; i < n; i++) a.push(genValueJson(S, E, t.el, R, depth + 1)); return a; }
    case 'Record': {
      const o = {};
      for (const a of t.attrs) if (a.req || R.chance(0.55)) o[a.name] = genValueJson(S, E, a.t, R, depth + 1);
      return o;
    }
    case 'Entity': {
      const uid = genUid(S, E, t.name, R, true);
      return R.chance(0.7) ? { __entity: uid } : uid;
    }
    case 'Ext': {
      const s = R.pick({ decimal: DEC_VALID, ipaddr: IP_VALID, datetime: DT_VALID, duration: DUR_VALID }[t.name]);
      const fn = { decimal: 'decimal', ipaddr: 'ip', datetime: 'datetime', duration: 'duration' }[t.name];
      if (t.name === 'datetime' && R.chance(0.15))
        return { __extn: { fn: 'offset', args: [{ __extn: { fn: 'datetime', arg: '1970-01-01' } }, { __extn: { fn: 'duration', arg: `${R.int(-100000, 100000000)}ms` } }] } };
      return R.chance(0.5) ? s : { __extn: { fn, arg: s } };
    }
  }
  throw new Error('value of ' + t.k);
}

// a uid of entity type `ty`: mostly an existing entity, sometimes a missing one
function genUid(S, E, ty, R, valid = false) {
  const ty_ = S.types[ty];
  if (ty_ && ty_.kind === 'enum') return { type: ty, id: valid || R.chance(0.9) ? R.pick(ty_.ids) : 'purple' };
  const existing = (E.byType[ty] || []);
  if (existing.length && R.chance(0.8)) return { type: ty, id: R.pick(existing) };
  return { type: ty, id: R.pick(['ghost', 'alice', 'nobody']) };
}

function genEntities(S, R) {
  const E = { byType: {}, list: [] };
  for (const ty of S.std) E.byType[ty] = R.shuffle(ID_POOL).slice(0, R.int(1, 3));
  for (const ty of S.std) {
    const td = S.types[ty];
    const ids = E.byType[ty];
    ids.forEach((id, idx) => {
      if (R.chance(0.08)) return; // declared id, but the entity is absent from the store
      const attrs = genValueJson(S, E, td.shape, R);
      const parents = [];
      for (const pt of td.parents) {
        const cands = (E.byType[pt] || []).filter((pid, j) => pt !== ty || j > idx); // keep the data acyclic
        for (const pid of cands) if (R.chance(0.45)) parents.push(R.chance(0.8) ? { type: pt, id: pid } : { __entity: { type: pt, id: pid } });
      }
      const ent = { uid: { type: ty, id }, attrs, parents };
      if (td.tags) {
        const tags = {};
        for (const k of R.subset(TAG_KEYS, 0.4)) tags[k] = genValueJson(S, E, td.tags, R);
        if (Object.keys(tags).length || R.chance(0.5)) ent.tags = tags;
      }
      E.list.push(ent);
    });
  }
  for (const ty of S.enums) for (const id of S.types[ty].ids) if (R.chance(0.3)) E.list.push({ uid: { type: ty, id }, attrs: {}, parents: [] });
  // action entities in the data, exactly as declared (Cedar's corpus writes them this way)
  if (R.chance(0.3)) for (const a of S.actions) E.list.push({ uid: { type: S.actionType, id: a.id }, attrs: {}, parents: a.parents.map((p) => ({ type: S.actionType, id: p })) });
  E.list = R.chance(0.5) ? R.shuffle(E.list) : E.list;
  return E;
}

// ---------------------------------------------------------------- expressions
// env: { S, E, R, P: [principal types], Rs: [resource types], ctx: Record type, errRate }
function entLit(env, ty) {
  const u = genUid(env.S, env.E, ty, env.R);
  return L(`${ty}::${cedarStr(u.id)}`);
}
function actionLit(env) {
  const a = env.R.pick(env.S.actions);
  return L(`${env.S.actionType}::${cedarStr(a.id)}`);
}
function attrAccess(env, base, name) {
  if (bareAttr(name) && env.R.chance(0.85)) return N(base, '.' + name);
  return N(base, `[${cedarStr(name)}]`);
}
function hasTest(base, name) {
  return N(base, ' has ', bareAttr(name) ? name : cedarStr(name));
}

// typed access paths reachable from the variables and from entity literals
function paths(env) {
  if (env._paths) return env._paths;
  const { S, R } = env;
  const out = [];
  const visit = (node, t, guards, depth) => {
    out.push({ node, t, guards });
    if (depth >= 3) return;
    let attrs = null;
    if (t.k === 'Record') attrs = t.attrs;
    else if (t.k === 'Entity' && S.types[t.name]) attrs = S.types[t.name].shape.attrs;
    if (!attrs) return;
    for (const a of attrs) {
      const acc = attrAccess(env, node, a.name);
      visit(acc, a.t, a.req ? guards : guards.concat([{ base: node, name: a.name }]), depth + 1);
    }
    if (t.k === 'Entity' && S.types[t.name] && S.types[t.name].tags) {
      const k = R.pick(TAG_KEYS);
      const acc = N(node, `.getTag(${cedarStr(k)})`);
      out.push({ node: acc, t: S.types[t.name].tags, guards: guards.concat([{ base: node, tag: k }]) });
    }
  };
  const pt = R.pick(env.P), rt = R.pick(env.Rs);
  visit(L('principal'), T.Ent(pt), [], 0);
  visit(L('resource'), T.Ent(rt), [], 0);
  visit(L('context'), env.ctx, [], 0);
  for (const ty of S.std) if (R.chance(0.3)) visit(entLit(env, ty), T.Ent(ty), [], 1);
  env._paths = out;
  return out;
}

function guardExpr(g) {
  return g.tag !== undefined ? N(g.base, `.hasTag(${cedarStr(g.tag)})`) : hasTest(g.base, g.name);
}
// use a path of type t, guarded (usually) by `has`/`hasTag` for its optional components
function usePath(env, p, t, d) {
  const { R } = env;
  if (!p.guards.length || R.chance(0.12)) return p.node; // unguarded: validation error / run-time error
  const gs = p.guards.map(guardExpr);
  let g = gs[0];
  for (let i = 1; i < gs.length; i++) g = N(g, ' && ', gs[i]);
  if (t.k === 'Bool' && R.chance(0.6)) return N('(', g, ' && ', p.node, ')');
  return N('(if ', g, ' then ', p.node, ' else ', gen(env, t, d + 1), ')');
}
function pathOfType(env, t) {
  const c = paths(env).filter((p) => sameType(p.t, t));
  return c.length ? env.R.pick(c) : null;
}

const ANY_TYPES = (env) => [T.Long, T.String, T.Bool, T.Ext('decimal'), T.Ext('ipaddr'), T.Ext('datetime'), T.Ext('duration'),
  T.Ent(env.R.pick(env.S.allEnt)), T.Set(T.Long), T.Set(T.String)];
function randomType(env) {
  const ps = paths(env);
  if (env.R.chance(0.5) && ps.length) return env.R.pick(ps).t;
  return env.R.pick(ANY_TYPES(env));
}

function extCtor(env, name) {
  const { R } = env;
  const fn = { decimal: 'decimal', ipaddr: 'ip', datetime: 'datetime', duration: 'duration' }[name];
  const valid = { decimal: DEC_VALID, ipaddr: IP_VALID, datetime: DT_VALID, duration: DUR_VALID }[name];
  const invalid = { decimal: DEC_INVALID, ipaddr: IP_INVALID, datetime: DT_INVALID, duration: DUR_INVALID }[name];
  const r = R.f();
  if (r < 0.75) return L(`${fn}(${cedarStr(R.pick(valid))})`);
  if (r < 0.93) return L(`${fn}(${cedarStr(R.pick(invalid))})`);
  if (r < 0.97) return L(R.chance(0.5) ? `${fn}()` : `${fn}(${cedarStr(R.pick(valid))}, ${cedarStr(R.pick(valid))})`);
  return N(`${fn}(`, gen(env, T.String, 3), ')'); // non-literal argument: validation error
}

function likePattern(R) {
  const n = R.int(0, 4);
  let s = '';
  for (let i = 0; i < n; i++) s += R.wpick([[3, 'a'], [2, 'b'], [3, '*'], [1.5, '\\*'], [0.5, 'é'], [0.4, '😀'], [0.3, '\\u{2a}'], [0.2, '\\x2a'], [0.2, '\\x41'], [0.3, '**'], [0.3, ' '], [0.3, '\\\\']]);
  return '"' + s + '"';
}

function longLit(R) {
  return R.wpick([[6, String(R.int(0, 9))], [3, String(R.int(-100, 100))], [2, R.pick(LONG_EXTREME)]]);
}

function gen(env, t, d) {
  const { R } = env;
  const deep = d >= env.maxDepth;
  // occasionally produce an expression of the wrong type
  if (!deep && R.chance(env.errRate)) { const u = randomType(env); if (!sameType(u, t)) return gen(env, u, d + 1); }
  // path
  if (R.chance(deep ? 0.5 : 0.25)) { const p = pathOfType(env, t); if (p) return usePath(env, p, t, d); }
  // if-then-else
  if (!deep && R.chance(0.06)) return N('(if ', gen(env, T.Bool, d + 1), ' then ', gen(env, t, d + 1), ' else ', gen(env, t, d + 1), ')');
  switch (t.k) {
    case 'Bool': return genBool(env, d, deep);
    case 'Long': return genLong(env, d, deep);
    case 'String': {
      if (!deep && R.chance(0.1)) { const p = pathOfType(env, T.String); if (p) return usePath(env, p, t, d); }
      return L(cedarStr(genStr(R)));
    }
    case 'Set': {
      if (R.chance(0.05)) return L('[]');
      const n = R.int(1, deep ? 2 : 3), kids = ['['];
      for (let i = 0; i < n; i++) { if (i) kids.push(', '); kids.push(gen(env, t.el, d + 1)); }
      kids.push(']');
      return N(...kids);
    }
    case 'Record': {
      const kids = ['{'];
      let first = true;
      for (const a of t.attrs) {
        if (!a.req && R.chance(0.5)) continue;
        if (!first) kids.push(', ');
        first = false;
        kids.push(`${bareAttr(a.name) && R.chance(0.8) ? a.name : cedarStr(a.name)}: `, gen(env, a.t, d + 1));
      }
      kids.push('}');
      return N(...kids);
    }
    case 'Entity': {
      if (t.name === env.S.actionType) return R.chance(0.5) ? L('action') : actionLit(env);
      const c = [];
      if (env.P.includes(t.name)) c.push(L('principal'));
      if (env.Rs.includes(t.name)) c.push(L('resource'));
      if (c.length && R.chance(0.5)) return R.pick(c);
      return entLit(env, t.name);
    }
    case 'Ext': return genExt(env, t.name, d, deep);
  }
  throw new Error('gen ' + t.k);
}

function genExt(env, name, d, deep) {
  const { R } = env;
  if (!deep && R.chance(0.25)) {
    if (name === 'datetime') return R.chance(0.6) ? N(gen(env, T.Ext('datetime'), d + 1), '.offset(', gen(env, T.Ext('duration'), d + 1), ')') : N(gen(env, T.Ext('datetime'), d + 1), '.toDate()');
    if (name === 'duration') return R.chance(0.6) ? N(gen(env, T.Ext('datetime'), d + 1), '.durationSince(', gen(env, T.Ext('datetime'), d + 1), ')') : N(gen(env, T.Ext('datetime'), d + 1), '.toTime()');
  }
  return extCtor(env, name);
}

function genLong(env, d, deep) {
  const { R } = env;
  if (deep) return L(longLit(R));
  const x = () => gen(env, T.Long, d + 1);
  return R.wpick([
    [4, () => L(longLit(R))],
    [2, () => N('(', x(), ' + ', x(), ')')],
    [2, () => N('(', x(), ' - ', x(), ')')],
    [2, () => N('(', x(), ' * ', x(), ')')],
    [1, () => N('-(', x(), ')')],
    [0.5, () => N('-', L(String(R.int(0, 9))))],
    [0.3, () => L(R.chance(0.5) ? '-9223372036854775808' : '--9223372036854775807')],
    [1.5, () => N(gen(env, T.Ext('duration'), d + 1), '.', R.pick(['toMilliseconds', 'toSeconds', 'toMinutes', 'toHours', 'toDays']), '()')],
  ])();
}

function genBool(env, d, deep) {
  const { R, S } = env;
  if (deep) return L(R.pick(['true', 'false']));
  const b = () => gen(env, T.Bool, d + 1);
  const l = () => gen(env, T.Long, d + 1);
  const anyEnt = () => {
    const ts = paths(env).filter((p) => p.t.k === 'Entity' && S.types[p.t.name]);
    if (ts.length && R.chance(0.4)) { const p = R.pick(ts); return usePath(env, p, p.t, d + 1); }
    return R.wpick([[3, () => L('principal')], [3, () => L('resource')], [1, () => L('action')], [3, () => entLit(env, R.pick(S.allEnt))], [1, () => actionLit(env)]])();
  };
  const entOrSet = () => {
    const sp = paths(env).filter((p) => p.t.k === 'Set' && p.t.el.k === 'Entity');
    if (sp.length && R.chance(0.3)) { const p = R.pick(sp); return usePath(env, p, p.t, d + 1); }
    return R.chance(0.65) ? anyEnt() : (R.chance(0.2) ? L('[]') : N('[', anyEnt(), ', ', anyEnt(), ']'));
  };
  const anyT = () => randomType(env);
  return R.wpick([
    [2, () => L(R.pick(['true', 'false']))],
    [2, () => N('!', '(', b(), ')')],
    [3, () => N('(', b(), ' && ', b(), ')')],
    [3, () => N('(', b(), ' || ', b(), ')')],
    [3, () => N('(', l(), ` ${R.pick(['<', '<=', '>', '>=', '==', '!='])} `, l(), ')')],
    [3, () => { const t = anyT(); const u = R.chance(0.9) ? t : anyT(); return N('(', gen(env, t, d + 1), ` ${R.pick(['==', '!='])} `, gen(env, u, d + 1), ')'); }],
    [2, () => N('(', gen(env, T.String, d + 1), ' like ', likePattern(R), ')')],
    [3, () => N('(', anyEnt(), ' in ', entOrSet(), ')')],
    [2, () => { const ty = R.chance(0.9) ? R.pick(S.allEnt.concat([S.actionType])) : 'Nope'; return R.chance(0.6) ? N('(', anyEnt(), ` is ${ty})`) : N('(', anyEnt(), ` is ${ty} in `, entOrSet(), ')'); }],
    [4, () => genHas(env, d)],
    [3, () => genSetOp(env, d)],
    [1.5, () => { const e = anyEnt(); return N(e, `.hasTag(`, R.chance(0.85) ? L(cedarStr(R.pick(TAG_KEYS))) : gen(env, T.String, d + 1), ')'); }],
    [1, () => { // getTag guarded
      const ts = S.std.filter((ty) => S.types[ty].tags);
      if (!ts.length) return b();
      const e = R.chance(0.5) ? (env.P.includes(ts[0]) ? L('principal') : entLit(env, ts[0])) : entLit(env, R.pick(ts));
      const k = cedarStr(R.pick(TAG_KEYS));
      const tagT = S.types[R.pick(ts)].tags;
      const cmp = N('(', N(e, `.getTag(${k})`), ' == ', gen(env, tagT, d + 1), ')');
      return R.chance(0.8) ? N('(', N(e, `.hasTag(${k})`), ' && ', cmp, ')') : cmp;
    }],
    [2, () => N(gen(env, T.Ext('decimal'), d + 1), `.${R.pick(['lessThan', 'lessThanOrEqual', 'greaterThan', 'greaterThanOrEqual'])}(`, gen(env, T.Ext('decimal'), d + 1), ')')],
    [2, () => R.chance(0.7) ? N(gen(env, T.Ext('ipaddr'), d + 1), `.${R.pick(['isIpv4', 'isIpv6', 'isLoopback', 'isMulticast'])}()`) : N(gen(env, T.Ext('ipaddr'), d + 1), '.isInRange(', gen(env, T.Ext('ipaddr'), d + 1), ')')],
    [2, () => { const x = R.pick(['datetime', 'duration']); return N('(', gen(env, T.Ext(x), d + 1), ` ${R.pick(['<', '<=', '>', '>=', '==', '!='])} `, gen(env, T.Ext(x), d + 1), ')'); }],
    [0.4, () => { // wrong-arity extension method
      const c = R.pick([['ipaddr', '.isIpv4(', ')'], ['decimal', '.lessThan(', ')'], ['ipaddr', '.isMulticast(ip("1.2.3.4"), ', ')']]);
      return N(gen(env, T.Ext(c[0]), d + 1), c[1], c[1].endsWith(', ') ? gen(env, T.Ext('ipaddr'), d + 1) : '', c[2]);
    }],
    [0.5, () => N('(', gen(env, T.Long, d + 1), ' < ', gen(env, T.String, d + 1), ')')], // type error
    [1, () => { // structural equality of sets / records / extension values, written differently
      const c = R.pick([
        () => N('([', l(), ', ', l(), '] == [', l(), ', ', l(), '])'),
        () => N('([', l(), ', ', l(), ', ', l(), '] ', R.pick(['==', '!=']), ' [', l(), '])'),
        () => N('({a: ', l(), ', b: ', b(), '} == {b: ', b(), ', a: ', l(), '})'),
        () => N('([', gen(env, T.Ext('decimal'), d + 1), '] == [', gen(env, T.Ext('decimal'), d + 1), '])'),
        () => N('(', gen(env, T.Ext('ipaddr'), d + 1), ' == ', gen(env, T.Ext('ipaddr'), d + 1), ')'),
        () => N('(', gen(env, T.Ext('duration'), d + 1), ' == ', gen(env, T.Ext('duration'), d + 1), ')'),
      ]);
      return c();
    }],
    [0.6, () => { // has on literals and nested records, `has a.b…` type errors
      const c = R.pick([
        () => N('({a: {b: ', l(), '}} has a.b)'),
        () => N('({a: ', l(), '} has a.b)'),
        () => N('({a: {b: {c: ', l(), '}}} has a.b.', R.pick(['c', 'd']), ')'),
        () => N('({a: {b: ', l(), '}} has a.b.c)'),
        () => N('({a: {b: {c: {}}, e: ', b(), '}} has a.', R.pick(['b.c.d', 'e.f', 'b.c', 'b.x.y']), ')'),
        () => N('({"x y": ', b(), '} has "x y")'),
        () => N('(', anyEnt(), ' has ', R.pick(['a', 'n', 'owner', 's']), ')'),
        () => N('({a: ', b(), '}["a"])'),
      ]);
      return c();
    }],
    [0.6, () => N('(', anyEnt(), ' in [', anyEnt(), ', ', R.pick([() => l(), () => anyEnt(), () => L('"s"')])(), '])')], // mixed set: type error
    [0.6, () => { const a = S.actions.filter((x) => x.group); return a.length ? N('(action in ', L(`${S.actionType}::${cedarStr(R.pick(a).id)}`), ')') : N('(action == ', actionLit(env), ')'); }],
    [0.4, () => N('(', R.pick([L('principal'), L('resource')]), ' == ', R.pick([L('principal'), L('resource')]), ')')],
  ])();
}

// the declared attributes of a value of type t (a record, or an entity type of the schema), or null
function attrsOf(env, t) {
  if (!t) return null;
  if (t.k === 'Record') return t.attrs;
  if (t.k === 'Entity' && env.S.types[t.name]) return env.S.types[t.name].shape.attrs;
  return null;
}

// `e has a` or `e has a.b.c…` (1 to 5 names): each name mostly one the type declares (leading
// deeper while names remain), sometimes an undeclared one, and past a name of a non-record
// type (Long, a set, an extension value) or an undeclared one, any name
function genHas(env, d) {
  const { R } = env;
  const ps = paths(env).filter((p) => attrsOf(env, p.t));
  if (!ps.length) return L('true');
  const p = R.pick(ps);
  const attrs = attrsOf(env, p.t);
  const base = usePathBase(env, p);
  const len = R.wpick([[5, 1], [3, 2], [2, 3], [1, 4], [0.6, 5]]);
  if (len === 1) {
    const name = attrs.length && R.chance(0.85) ? R.pick(attrs).name : R.pick(['zz', 'a', 'if', 'x y']);
    return N('(', hasTest(base, name), ')');
  }
  const names = [];
  let t = p.t;
  for (let i = 0; i < len; i++) {
    const as = (attrsOf(env, t) || []).filter((x) => bareAttr(x.name));
    const deeper = as.filter((x) => attrsOf(env, x.t));
    let a = null;
    if (as.length && R.chance(0.85)) a = R.pick(i < len - 1 && deeper.length && R.chance(0.75) ? deeper : as);
    names.push(a ? a.name : R.pick(['zz', 'a', 'b', 'n', 'owner', 'rec']));
    t = a ? a.t : null;
  }
  return N('(', base, ` has ${names.join('.')})`);
}
// the path itself, with its guards only when needed for a valid `has`
function usePathBase(env, p) {
  if (!p.guards.length) return p.node;
  return p.node; // `has` on an unguarded optional path: validation error (exercised on purpose)
}

function genSetOp(env, d) {
  const { R } = env;
  const ps = paths(env).filter((p) => p.t.k === 'Set');
  let st;
  let s;
  if (ps.length && R.chance(0.6)) { const p = R.pick(ps); st = p.t; s = usePath(env, p, st, d + 1); }
  else { st = T.Set(R.pick([T.Long, T.String, T.Ent(R.pick(env.S.allEnt)), T.Ext('decimal')])); s = gen(env, st, d + 1); }
  const m = R.pick(['contains', 'containsAll', 'containsAny', 'isEmpty', 'contains']);
  if (m === 'isEmpty') return N(s, '.isEmpty()');
  if (m === 'contains') return N(s, '.contains(', gen(env, st.el, d + 1), ')');
  return N(s, `.${m}(`, gen(env, st, d + 1), ')');
}

// ---------------------------------------------------------------- policies
function genPolicy(S, E, R) {
  const withApplies = S.actions.filter((a) => a.applies);
  const A = R.pick(withApplies);
  const aref = (a) => `${S.actionType}::${cedarStr(a.id)}`;
  const scope = { p: 'principal', a: 'action', r: 'resource' };
  // action scope
  const ar = R.f();
  if (ar < 0.2) scope.a = 'action';
  else if (ar < 0.55) scope.a = `action == ${aref(A)}`;
  else if (ar < 0.8) { const gid = A.parents.length && R.chance(0.6) ? R.pick(A.parents) : A.id; const g = S.actions.find((x) => x.id === gid); scope.a = `action in ${aref(g)}`; }
  else { const as = R.shuffle(S.actions).slice(0, R.int(0, 3)); if (!as.includes(A) && R.chance(0.8)) as.push(A); scope.a = `action in [${as.map(aref).join(', ')}]`; }
  const pr = (role, types) => {
    const ty = R.chance(0.9) ? R.pick(types) : R.pick(S.allEnt);
    const r = R.f();
    if (r < 0.45) return role;
    const uid = genUid(S, E, ty, R);
    const lit = `${uid.type}::${cedarStr(uid.id)}`;
    if (r < 0.6) return `${role} == ${lit}`;
    if (r < 0.75) { const anc = ancestorOf(S, E, uid, R); return `${role} in ${anc ? `${anc.type}::${cedarStr(anc.id)}` : lit}`; }
    if (r < 0.9) return `${role} is ${ty}`;
    const anc = ancestorOf(S, E, uid, R) || uid;
    return `${role} is ${ty} in ${anc.type}::${cedarStr(anc.id)}`;
  };
  scope.p = pr('principal', A.applies.principals);
  scope.r = pr('resource', A.applies.resources);
  const env = { S, E, R, P: A.applies.principals, Rs: A.applies.resources, ctx: A.applies.context, errRate: R.pick([0, 0.02, 0.05]), maxDepth: R.int(2, 5) };
  const m = /^principal is ([^ ]+)/.exec(scope.p);
  if (m && env.P.includes(m[1])) env.P = [m[1]];
  const m2 = /^resource is ([^ ]+)/.exec(scope.r);
  if (m2 && env.Rs.includes(m2[1])) env.Rs = [m2[1]];
  const clauses = [];
  const nc = R.wpick([[1, 0], [5, 1], [2, 2], [0.5, 3]]);
  for (let i = 0; i < nc; i++) clauses.push({ kind: R.chance(0.75) ? 'when' : 'unless', expr: gen(env, T.Bool, 0) });
  if (R.chance(0.3)) for (const c of clauses) dropParens(c.expr, R, 0.35);
  const annos = R.chance(0.15) ? R.shuffle(['id', 'doc', 'x']).slice(0, R.int(1, 2)) : [];
  return { effect: R.chance(0.8) ? 'permit' : 'forbid', scope, clauses, annos };
}

// remove some "(" … ")" pairs: the text is still a fair test (precedence, chained relations)
function dropParens(n, R, q) {
  if (typeof n !== 'object') return;
  if (n.p.length >= 3 && n.p[0] === '(' && n.p[n.p.length - 1] === ')' && R.chance(q)) { n.p[0] = ''; n.p[n.p.length - 1] = ''; }
  for (const x of n.p) dropParens(x, R, q);
}

function ancestorOf(S, E, uid, R) {
  // a random (transitive) parent of uid in the generated data, if any
  let cur = uid, out = null;
  for (let i = 0; i < 3; i++) {
    const e = E.list.find((x) => x.uid.type === cur.type && x.uid.id === cur.id);
    if (!e || !e.parents.length || !R.chance(0.7)) break;
    const p = R.pick(e.parents);
    cur = p.__entity || p;
    out = cur;
  }
  return out;
}

function printPolicy(p) {
  let s = (p.annos || []).map((a) => `@${a}("v")\n`).join('') + `${p.effect}(\n  ${p.scope.p},\n  ${p.scope.a},\n  ${p.scope.r}\n)`;
  for (const c of p.clauses) s += `\n${c.kind} {\n  ${printExpr(c.expr)}\n}`;
  return s + ';\n';
}

// ---------------------------------------------------------------- requests
function genRequest(S, E, R) {
  const withApplies = S.actions.filter((a) => a.applies);
  const A = R.pick(withApplies);
  let validateRequest = true;
  let pt = R.pick(A.applies.principals), rt = R.pick(A.applies.resources);
  if (R.chance(0.08)) { validateRequest = false; pt = R.pick(S.allEnt); rt = R.pick(S.allEnt); }
  return {
    principal: genUid(S, E, pt, R, R.chance(0.9)),
    action: { type: S.actionType, id: A.id },
    resource: genUid(S, E, rt, R, R.chance(0.9)),
    context: genValueJson(S, E, A.applies.context, R),
    validateRequest,
  };
}

function genCase(seed, opts = {}) {
  const R = makeRng(seed);
  const S = genSchema(R);
  const E = genEntities(S, R);
  const np = opts.policies || R.wpick([[4, 1], [3, 2], [2, 3], [1, 4]]);
  const policies = [];
  for (let i = 0; i < np; i++) policies.push(genPolicy(S, E, R));
  const nr = opts.requests || 6;
  const requests = [];
  for (let i = 0; i < nr; i++) requests.push(genRequest(S, E, R));
  return { seed, schemaText: schemaText(S, R), policies, entities: E.list, requests };
}

// A case for `dwc evaluate` (tests/diff/evaluate.js): one request and n expressions of
// random types over it (its principal, resource, context and the entities' paths).
function genEvalCase(seed, n) {
  const R = makeRng(seed);
  const S = genSchema(R);
  const E = genEntities(S, R);
  const request = genRequest(S, E, R);
  const A = S.actions.find((a) => a.id === request.action.id);
  const env = { S, E, R, P: [request.principal.type], Rs: [request.resource.type], ctx: A.applies.context,
    errRate: R.pick([0, 0.05, 0.1]), maxDepth: R.int(1, 4) };
  if (!S.types[request.principal.type] || !S.types[request.resource.type]) { env.P = A.applies.principals; env.Rs = A.applies.resources; }
  const exprs = [];
  for (let i = 0; i < n; i++) {
    const t = R.chance(0.25) ? T.Bool : randomType(env);
    const e = gen(env, t, 0);
    if (R.chance(0.3)) dropParens(e, R, 0.35);
    exprs.push(printExpr(e));
  }
  return { seed, schemaText: schemaText(S, R), entities: E.list, request, exprs };
}

module.exports = { genCase, genEvalCase, printPolicy, printExpr, cedarStr, makeRng };

if (require.main === module) {
  const seed = Number(process.argv[2] || 1);
  const c = genCase(seed);
  process.stdout.write(c.schemaText + '\n' + c.policies.map(printPolicy).join('\n') + '\n' +
    JSON.stringify(c.entities) + '\n' + c.requests.map((r) => JSON.stringify(r)).join('\n') + '\n');
}
