// The svc inspector's page: lists captured requests live, shows one in full, replays it (as is
// or edited) and compares the new response with the original. Plain DOM, no framework; every
// captured value goes through textContent, never markup, since it is whatever visitors sent.

/** Lines compared by the diff, at most, per side: the LCS table grows with their product. */
const DIFF_MAX_LINES = 2000;

const $ = (id) => document.getElementById(id);
const records = new Map();
let selected;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function statusClass(status) {
  return `s${Math.min(5, Math.max(2, Math.floor(status / 100)))}`;
}

function decode(body) {
  const binary = atob(body.base64);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = undefined;
  }
  let json;
  if (text !== undefined && text.trim() !== '') {
    try {
      json = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      json = undefined;
    }
  }
  return { bytes, text, json };
}

function hex(bytes) {
  const lines = [];
  for (let offset = 0; offset < bytes.length; offset += 16) {
    const row = bytes.subarray(offset, offset + 16);
    const hexPart = Array.from(row, (b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = Array.from(row, (b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${offset.toString(16).padStart(8, '0')}  ${hexPart.padEnd(47)}  ${ascii}`);
  }
  return lines.join('\n');
}

/** A body with its views (JSON, text, hex) and the truncation note. */
function renderBody(container, body) {
  container.replaceChildren();
  if (!body || body.size === 0) {
    container.append(el('p', 'note', 'No body.'));
    return;
  }
  const decoded = decode(body);
  const views = [];
  if (decoded.json !== undefined) views.push(['JSON', decoded.json]);
  if (decoded.text !== undefined) views.push(['Text', decoded.text]);
  views.push(['Hex', hex(decoded.bytes)]);
  const pre = el('pre', 'body-view');
  const bar = el('div', 'views');
  const show = (index) => {
    pre.textContent = views[index][1];
    bar.querySelectorAll('button').forEach((button, i) => button.setAttribute('aria-pressed', String(i === index)));
  };
  views.forEach(([label], index) => {
    const button = el('button', '', label);
    button.type = 'button';
    button.addEventListener('click', () => show(index));
    bar.append(button);
  });
  const size = body.truncated ? `truncated: ${decoded.bytes.length} of ${body.size} bytes kept` : `${body.size} bytes`;
  bar.append(el('span', 'note', size));
  container.append(bar, pre);
  show(0);
}

function renderHeaders(table, headers) {
  table.replaceChildren();
  for (const [name, value] of headers ?? []) {
    const row = el('tr');
    row.append(el('td', '', name), el('td', '', value));
    table.append(row);
  }
}

function listItem(record) {
  const item = el('li');
  item.dataset.id = record.id;
  item.append(
    el('span', 'method', record.method),
    el('span', 'path', (record.replayOf ? '↻ ' : '') + record.path),
    el('span', statusClass(record.status), String(record.status)),
    el('span', 'duration', `${Math.round(record.durationMs)}ms`),
  );
  item.addEventListener('click', () => select(record.id));
  return item;
}

function add(record) {
  if (records.has(record.id)) return;
  records.set(record.id, record);
  $('empty').hidden = true;
  $('requests').prepend(listItem(record));
}

function select(id) {
  const record = records.get(id);
  if (!record) return;
  selected = record;
  for (const item of $('requests').children) item.setAttribute('aria-selected', String(item.dataset.id === id));
  $('detail').hidden = false;
  // The target names the local service that served it (the tunnel's own, or a route's).
  $('summary').textContent =
    `${record.method} ${record.path} → ${record.status} in ${Math.round(record.durationMs)}ms` +
    (record.target ? ` (served by ${record.target})` : '');
  $('summary').className = statusClass(record.status);
  renderHeaders($('request-headers'), record.request.headers);
  renderBody($('request-body'), record.request.body);
  renderHeaders($('response-headers'), record.response?.headers);
  renderBody($('response-body'), record.response?.body);
  $('editor').hidden = true;
}

function responseText(record) {
  const lines = [`HTTP ${record.status}`];
  for (const [name, value] of record.response?.headers ?? []) lines.push(`${name}: ${value}`);
  lines.push('');
  if (record.response) {
    const decoded = decode(record.response.body);
    lines.push(decoded.json ?? decoded.text ?? hex(decoded.bytes));
  }
  return lines.join('\n');
}

/** Line diff by longest common subsequence: unchanged lines plain, removed `-`, added `+`. */
function diffLines(before, after) {
  const a = before.split('\n').slice(0, DIFF_MAX_LINES);
  const b = after.split('\n').slice(0, DIFF_MAX_LINES);
  const table = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push([' ', a[i]]);
      i++;
      j++;
    }
    // Removals before additions, as in a unified diff.
    else if (i < a.length && (j === b.length || table[i + 1][j] >= table[i][j + 1])) out.push(['-', a[i++]]);
    else out.push(['+', b[j++]]);
  }
  return out;
}

function showComparison(original, replayed) {
  $('comparison').hidden = false;
  $('replay-summary').textContent = `${replayed.id}: ${replayed.method} ${replayed.path} → ${replayed.status}`;
  const before = responseText(original);
  const after = responseText(replayed);
  $('original-response').textContent = before;
  $('replayed-response').textContent = after;
  const diff = $('diff');
  diff.replaceChildren();
  for (const [mark, line] of diffLines(before, after)) {
    const className = mark === '+' ? 'add' : mark === '-' ? 'del' : '';
    diff.append(el('span', className, `${mark} ${line}\n`));
  }
}

async function replay(edits) {
  const original = selected;
  $('replay-error').hidden = true;
  const response = await fetch(`/api/requests/${encodeURIComponent(original.id)}/replay`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(edits),
  });
  const answer = await response.json();
  if (!response.ok) {
    $('replay-error').textContent = answer.message ?? `replay failed (${response.status})`;
    $('replay-error').hidden = false;
    return;
  }
  add(answer);
  $('editor').hidden = true;
  showComparison(original, answer);
}

function openEditor() {
  const record = selected;
  $('edit-method').value = record.method;
  $('edit-path').value = record.path;
  $('edit-headers').value = record.request.headers.map(([name, value]) => `${name}: ${value}`).join('\n');
  const decoded = decode(record.request.body);
  $('edit-body').value = decoded.text ?? '';
  $('edit-body').disabled = decoded.text === undefined;
  $('editor').hidden = false;
}

function editsFromForm() {
  const headers = $('edit-headers')
    .value.split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
    });
  const edits = { method: $('edit-method').value.trim(), path: $('edit-path').value, headers };
  if (!$('edit-body').disabled) edits.body = $('edit-body').value;
  return edits;
}

async function loadTunnels() {
  const { tunnels } = await (await fetch('/api/tunnels')).json();
  $('tunnels').textContent = tunnels.map((t) => `${t.url} → ${t.local}`).join('   ');
}

/** Adds the captured requests not shown yet (add() skips known ids), oldest first so the newest end on top. */
async function loadRequests() {
  const { requests } = await (await fetch('/api/requests')).json();
  for (const record of requests.reverse()) add(record);
}

async function start() {
  $('replay').addEventListener('click', () => void replay({}));
  $('edit').addEventListener('click', openEditor);
  $('cancel').addEventListener('click', () => ($('editor').hidden = true));
  $('editor').addEventListener('submit', (event) => {
    event.preventDefault();
    void replay(editsFromForm());
  });
  // Live events are held until the list has loaded, so the newest stay on top.
  let held = [];
  const events = new EventSource('/api/events');
  events.addEventListener('request', (event) => (held ? held.push(JSON.parse(event.data)) : add(JSON.parse(event.data))));
  let opened = false;
  events.addEventListener('open', () => {
    $('live').textContent = 'live';
    // After a reconnect (the agent drops a stream that fell behind), load what passed meanwhile.
    if (opened && held === undefined) void loadRequests();
    opened = true;
  });
  events.addEventListener('error', () => ($('live').textContent = 'reconnecting…'));
  await loadRequests();
  for (const record of held) add(record);
  held = undefined;
  await loadTunnels();
}

void start();
