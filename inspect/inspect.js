// The ctxgraph inspector. It reads through the REST API only, with the key the user
// entered (kept in sessionStorage, sent as an Authorization header, never put in a URL),
// and writes text with textContent only: nothing from the graph is ever parsed as HTML.
'use strict';

const KEY = 'ctxgraph-inspector-key';
const $ = (id) => document.getElementById(id);

// el builds an element: el('td', {class: 'ref'}, 'text', child, ...).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

class APIError extends Error {
  constructor(status, body) {
    super((body && body.error && body.error.message) || `HTTP ${status}`);
    this.status = status;
  }
}

// api calls a route of the REST API with the session's key; raw answers the body's bytes.
async function api(method, path, body, raw) {
  const headers = { Authorization: 'Bearer ' + sessionStorage.getItem(KEY) };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' });
  if (!r.ok) {
    let detail = null;
    try { detail = await r.json(); } catch (_) { /* not JSON */ }
    if (r.status === 401) forget();
    throw new APIError(r.status, detail);
  }
  return raw ? { bytes: new Uint8Array(await r.arrayBuffer()), headers: r.headers } : r.json();
}

function showError(err) {
  const box = $('error');
  box.textContent = err.message || String(err);
  box.hidden = false;
  setTimeout(() => { box.hidden = true; }, 6000);
}

function forget() {
  sessionStorage.removeItem(KEY);
  $('app').hidden = true;
  $('forget').hidden = true;
  $('login').hidden = false;
}

const ms = (v) => (v || 0).toFixed(v >= 10 ? 0 : 2);

async function sha256Hex(bytes) {
  const sum = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(sum, (b) => b.toString(16).padStart(2, '0')).join('');
}

// --- conversations ---------------------------------------------------------------------

let searchTimer = null;
async function listConversations() {
  const q = $('search').value.trim();
  const page = await api('GET', '/v1/conversations?limit=100' + (q ? '&title=' + encodeURIComponent(q) : ''));
  const list = $('conversation-list');
  list.replaceChildren(...page.conversations.map((c) => el('li', { class: 'pick', 'data-conversation': c.id,
    onclick: () => openConversation(c.id).catch(showError) }, c.title || '(untitled)', el('div', { class: 'sub' }, c.createdAt))));
  if (!page.conversations.length) list.append(el('li', { class: 'sub' }, 'No conversation.'));
}

let current = { conversation: null, participants: {} };

async function openConversation(id) {
  for (const li of document.querySelectorAll('#conversation-list li')) li.classList.toggle('on', li.dataset.conversation === id);
  const c = await api('GET', '/v1/conversations/' + encodeURIComponent(id));
  current = { conversation: c, participants: Object.fromEntries(c.participants.map((p) => [p.id, p])) };
  const children = {};
  for (const b of c.branches) (children[b.parentBranchId || ''] ||= []).push(b);
  const tree = (parent) => (children[parent] || []).map((b) => el('li', {},
    el('span', { class: 'pick', 'data-branch': b.id, onclick: () => openBranch(b.id).catch(showError) }, b.name),
    b.parentBranchId ? el('span', { class: 'sub' }, ` forked after ${b.forkAfterMessageId}`) : null,
    children[b.id] ? el('ul', { class: 'tree' }, tree(b.id)) : null));
  $('conversation').replaceChildren(
    el('h2', {}, c.title || '(untitled)'),
    el('div', { class: 'sub' }, c.id),
    el('h3', {}, 'Branches'), el('ul', { class: 'tree' }, tree('')),
    el('h3', {}, 'History'), el('ul', { class: 'history', id: 'history' }, el('li', { class: 'sub' }, 'Pick a branch.')));
  $('run').replaceChildren();
  await openBranch(c.branchId);
}

async function openBranch(id) {
  for (const s of document.querySelectorAll('[data-branch]')) s.classList.toggle('on', s.dataset.branch === id);
  const h = await api('GET', `/v1/branches/${encodeURIComponent(id)}/history`);
  const items = h.items.map((it) => {
    if (it.type !== 'message') {
      return el('li', { class: 'sub' }, `${it.tool} call: ${it.status}${it.errorCode ? ' ' + it.errorCode : ''}`,
        it.runId ? el('button', { type: 'button', onclick: () => openRun(it.runId).catch(showError) }, 'run') : null);
    }
    const who = it.participantName || (current.participants[it.participantId] || {}).name;
    const pickable = it.role === 'assistant' && it.runId;
    return el('li', { class: pickable ? 'assistant' : it.role, 'data-message': it.id, 'data-run': it.runId,
      onclick: pickable ? () => openRun(it.runId, it.id).catch(showError) : null },
    el('span', { class: 'role' }, it.role + (who ? ` (${who})` : '')), it.content);
  });
  $('history').replaceChildren(...items);
}

// --- a run and its model calls ---------------------------------------------------------

async function openRun(runId, messageId) {
  for (const li of document.querySelectorAll('#history li')) li.classList.toggle('on', !!messageId && li.dataset.message === messageId);
  const [run, calls, policies] = await Promise.all([
    api('GET', '/v1/runs/' + encodeURIComponent(runId)),
    api('GET', `/v1/runs/${encodeURIComponent(runId)}/model-calls`),
    api('GET', '/v1/policies')]);
  const who = (current.participants[run.participantId] || {}).name || run.participantId;
  const box = $('run');
  box.replaceChildren(el('h2', {}, `Run ${run.id}`),
    el('div', {}, el('span', { class: 'kv' }, `by ${who}`), el('span', { class: 'kv' }, `${run.provider}/${run.model}`),
      el('span', { class: 'kv' }, run.runtimeKind), el('span', { class: 'kv' }, run.status),
      run.latencyMs ? el('span', { class: 'kv' }, `provider ${ms(run.latencyMs)} ms`) : null));
  if (!calls.modelCalls.length) box.append(el('p', { class: 'hint' }, 'No model call was assembled for this run.'));
  for (const [i, call] of calls.modelCalls.entries()) {
    const step = el('div', { class: 'step', 'data-assembly': call.assemblyId }, el('h3', {}, `Model call ${i + 1}: ${call.assemblyId}`));
    box.append(step);
    await renderCall(step, call, policies.policies || []);
  }
}

const SECTION_COLORS = { instructions: '#7a5af8', context: '#12b76a', messages: '#1f5fbf', toolRounds: '#f79009', reply: '#98a2b3',
  assembled: '#1f5fbf', message: '#1f5fbf', memory: '#12b76a', stale_marker: '#f79009', raw: '#d92d20',
  recovery: '#e31b54', reference: '#98a2b3', safe_summary: '#0ba5ec', conflict: '#ee46bc', checkpoint: '#6172f3', skills: '#475467' };

async function renderCall(step, call, policies) {
  if (call.recordState === 'trimmed') {
    step.append(el('p', { class: 'hint' }, `Its full record was trimmed (DESIGN §10): ${call.tokens.assembled} tokens under ${call.policyVersion}, request sha256 ${call.requestSha256 || 'none'}.`));
    return;
  }
  const a = await api('GET', '/v1/assemblies/' + encodeURIComponent(call.assemblyId));
  // The recorded version's own diff names every record's outcome, form, reason and rule.
  const own = await api('POST', `/v1/assemblies/${encodeURIComponent(a.id)}/diff`, { policyVersion: a.policyVersion });
  const t = a.tokens;
  step.append(el('div', {},
    el('span', { class: 'kv' }, `policy ${a.policyVersion}`), el('span', { class: 'kv' }, a.assemblerVersion),
    el('span', { class: 'kv' }, `at ${a.createdAt}`),
    el('span', { class: 'kv', 'data-timings': '' }, ['graph', 'policy', 'serialize', 'record'].map((k) => `${k} ${ms(a.timingsMs[k])} ms`).join(' · '))));

  // The request as the provider received it, checked against the recorded sha256.
  const req = el('div', { class: 'request' });
  step.append(el('h3', {}, 'The request as the provider received it'), req);
  if (!call.requestSha256 || !call.requestKept) {
    req.append(el('p', { class: 'hint' }, call.requestSha256 ? 'The request body is no longer kept.' : 'This call sent no request.'));
  } else {
    const sent = await api('GET', `/v1/assemblies/${encodeURIComponent(a.id)}/request`, undefined, true);
    const got = await sha256Hex(sent.bytes);
    const ok = got === call.requestSha256;
    req.append(el('p', { class: ok ? 'verified' : 'mismatch', 'data-sha256': got, 'data-recorded-sha256': call.requestSha256 },
      ok ? `sha256 ${got} — matches the recorded requestSha256` : `sha256 ${got} — DOES NOT match the recorded ${call.requestSha256}`));
    renderRequest(req, JSON.parse(new TextDecoder().decode(sent.bytes)));
  }

  // Tokens by section against the budget (records made before sections were counted show
  // the total alone), and the included records by form.
  const count = {};
  for (const inc of a.included) count[inc.as] = (count[inc.as] || 0) + 1;
  const budget = Math.max(t.budget || 0, t.assembled);
  const sections = t.sections ? Object.entries(t.sections) : [['assembled', t.assembled]];
  const sectionSum = sections.reduce((n, [, v]) => n + v, 0);
  step.append(el('h3', {}, 'Tokens'),
    el('div', {}, el('span', { class: 'kv', 'data-tokens': t.assembled }, `assembled ${t.assembled} of a budget of ${t.budget}`),
      el('span', { class: 'kv' }, `history replay would send ${t.baseline}`), a.overBudget ? el('span', { class: 'mismatch' }, 'over budget') : null),
    el('div', { class: 'bar', title: `${t.assembled} / ${budget}`, 'data-sections-sum': sectionSum },
      sections.map(([name, n]) => el('span', { title: `${name} ${n}`, style: `width:${100 * n / budget}%;background:${SECTION_COLORS[name] || '#999'}` }))),
    el('div', { class: 'legend' }, sections.map(([name, n]) =>
      el('span', { 'data-section': name }, el('i', { style: `background:${SECTION_COLORS[name] || '#999'}` }), `${name}: ${n} tokens`))),
    el('div', { class: 'legend' }, Object.entries(count).map(([as, n]) => el('span', {}, `${as}: ${n} record${n === 1 ? '' : 's'}`))));

  const records = Object.fromEntries(own.records.map((r) => [r.ref, r]));
  // Included records, in the request's order, with form, rule and reason.
  step.append(el('h3', {}, `Included (${a.included.length})`), el('table', { class: 'included' },
    el('tr', {}, el('th', {}, 'record'), el('th', {}, 'type'), el('th', {}, 'as'), el('th', {}, 'rule'), el('th', {}, 'reason')),
    a.included.map((inc) => {
      const r = (records[inc.ref] || {}).recorded || {};
      return recordRow(a.id, inc.ref, inc.type, inc.as, r.rule, r.reason);
    })));
  // Omitted records with their reason and rule: the trace when there is one, else the
  // recorded version's recomputation.
  const omitted = own.records.filter((r) => r.recorded.outcome === 'omitted');
  step.append(el('h3', {}, `Omitted (${omitted.length}; outside the lineage: ${a.omitted.branch_ineligible || 0})`), el('table', { class: 'omitted' },
    el('tr', {}, el('th', {}, 'record'), el('th', {}, 'type'), el('th', {}, 'reason'), el('th', {}, 'rule')),
    omitted.map((r) => recordRow(a.id, r.ref, r.type, null, r.recorded.rule, r.recorded.reason, true))));
  const explain = el('div', { class: 'explain' });
  step.append(explain);

  // What another policy version would have sent.
  const pick = el('select', { class: 'policy' }, policies.map((p) =>
    el('option', { value: p.id, selected: p.id === a.policyVersion }, `${p.name} (${p.id})`)));
  const out = el('div', { class: 'diff' });
  step.append(el('h3', {}, 'What would another policy have sent?'),
    el('div', {}, pick, ' ', el('button', { type: 'button', class: 'run-diff', onclick: () => renderDiff(out, a.id, pick.value).catch(showError) }, 'Compare')), out);
}

function recordRow(assemblyId, ref, type, as, rule, reason, omitted) {
  const cells = omitted
    ? [el('td', { class: 'ref' }, ref), el('td', {}, type), el('td', { class: 'reason' }, reason || ''), el('td', {}, rule || '')]
    : [el('td', { class: 'ref' }, ref), el('td', {}, type), el('td', {}, as), el('td', {}, rule || ''), el('td', {}, reason || '')];
  return el('tr', { class: 'clickable', 'data-ref': ref, 'data-type': type,
    onclick: (ev) => explainRecord(ev.currentTarget.closest('.step'), assemblyId, ref).catch(showError) }, cells);
}

// renderRequest shows a provider request body: OpenAI chat completions, Anthropic Messages
// or the echo provider's JSON (messages with roles, names and tool calls; the tools).
function renderRequest(box, body) {
  const messages = [];
  if (body.system) messages.push({ role: 'system', content: typeof body.system === 'string' ? body.system : JSON.stringify(body.system) });
  for (const m of body.messages || []) {
    let content = m.content;
    if (Array.isArray(content)) content = content.map((b) => b.text ?? JSON.stringify(b)).join('\n');
    const calls = m.tool_calls || m.toolCalls || [];
    messages.push({ role: m.role, name: m.name, content: content || '',
      calls: calls.map((c) => (c.function ? `${c.function.name} ${c.function.arguments}` : `${c.name} ${c.arguments}`)),
      callId: m.tool_call_id || m.toolCallId });
  }
  box.append(el('div', { class: 'sub' }, `model ${body.model || ''} · ${messages.length} messages`),
    ...messages.map((m) => el('div', { class: 'msg', 'data-role': m.role },
      el('div', { class: 'who' }, m.role + (m.name ? ` · ${m.name}` : '') + (m.callId ? ` · result of ${m.callId}` : '')),
      el('pre', {}, m.content), m.calls.map((c) => el('pre', {}, `→ ${c}`)))));
  const tools = (body.tools || []).map((t) => (t.function ? t.function.name : t.name));
  box.append(el('div', { class: 'sub' }, tools.length ? `tools offered: ${tools.join(', ')}` : 'no tools offered'));
}

// explainRecord shows why a record was included or omitted, and its provenance path down to
// the participant, with the raw body of every artifact on it that the key may read.
async function explainRecord(step, assemblyId, ref) {
  const box = step.querySelector('.explain');
  const ex = await api('GET', `/v1/assemblies/${encodeURIComponent(assemblyId)}/explain?ref=${encodeURIComponent(ref)}`);
  const path = el('div', { class: 'path' });
  ex.provenancePath.forEach((s, i) => {
    if (i) path.append('→');
    path.append(el('span', { class: 'node', 'data-step': s.type }, el('b', {}, s.type), s.id, s.name ? ` (${s.name})` : ''));
  });
  const locators = ex.provenancePath.flatMap((s) => s.locators || []);
  box.replaceChildren(el('h3', {}, `Why ${ref}`),
    el('div', {}, el('span', { class: 'kv' }, ex.outcome + (ex.as ? ` as ${ex.as}` : '')), el('span', { class: 'kv' }, `rule ${ex.rule}`),
      ex.reason ? el('span', { class: 'kv' }, `reason ${ex.reason}`) : null),
    el('h3', {}, 'Provenance'), path,
    locators.length ? el('div', { class: 'sub' }, 'locators: ' + locators.join(', ')) : null);
  for (const s of ex.provenancePath.filter((p) => p.type === 'ToolArtifact')) {
    try {
      const raw = await api('GET', `/v1/artifacts/${encodeURIComponent(s.id)}/raw`);
      box.append(el('div', { class: 'sub' }, `raw body of ${s.id}`),
        el('pre', { class: 'raw', 'data-artifact': s.id }, JSON.stringify({ arguments: raw.arguments, result: raw.result, error: raw.error }, null, 2)));
    } catch (err) {
      box.append(el('p', { class: 'hint' }, `The raw body of ${s.id} is not readable with this key (${err.status || ''} ${err.message}).`));
    }
  }
  box.scrollIntoView({ block: 'nearest' });
}

async function renderDiff(out, assemblyId, version) {
  const d = await api('POST', `/v1/assemblies/${encodeURIComponent(assemblyId)}/diff`, { policyVersion: version });
  const changed = d.records.filter((r) => r.change !== 'unchanged');
  const form = (o) => (o.outcome === 'included' ? o.as : `omitted: ${o.reason}`);
  out.replaceChildren(
    el('p', { 'data-identical': String(d.identical) }, d.identical
      ? `${d.other.policyVersion} sends the same request.`
      : `${d.other.policyVersion}: ${d.other.tokens.assembled} tokens instead of ${d.recorded.tokens.assembled}; ` +
        `${d.changes.changed} changed, ${d.changes.only_recorded} only under the recorded version, ${d.changes.only_other} only under this one.`),
    changed.length ? el('table', { class: 'diff-records' },
      el('tr', {}, el('th', {}, 'record'), el('th', {}, 'type'), el('th', {}, 'change'), el('th', {}, d.recorded.policyVersion), el('th', {}, d.other.policyVersion)),
      changed.map((r) => el('tr', { class: 'change-' + r.change, 'data-ref': r.ref },
        el('td', { class: 'ref' }, r.ref), el('td', {}, r.type), el('td', {}, r.change),
        el('td', {}, form(r.recorded), el('div', { class: 'sub' }, r.recorded.rule || '')),
        el('td', {}, form(r.other), el('div', { class: 'sub' }, r.other.rule || ''))))) : null);
}

// --- start -----------------------------------------------------------------------------

async function start() {
  $('login').hidden = true;
  $('app').hidden = false;
  $('forget').hidden = false;
  await listConversations();
}

document.addEventListener('DOMContentLoaded', () => {
  $('key-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(KEY, $('key').value.trim());
    $('key').value = '';
    start().catch(showError);
  });
  $('forget').addEventListener('click', forget);
  $('search').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => listConversations().catch(showError), 250);
  });
  if (sessionStorage.getItem(KEY)) start().catch(showError);
  else $('login').hidden = false;
});
