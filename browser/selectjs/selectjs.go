// Package selectjs is the page-side script calibration uses to turn an
// element into checked CSS selectors: the page's shared state and text
// helpers, how a class or attribute value reads (a name a person wrote,
// or one a build tool or a message id made), the simple selectors that
// describe one element (parts) and the checked combinations of them
// (cands).
package selectjs

// Script is evaluated as part of browser's suggestJS, after the
// driver's helpers (qa, vis), which it uses.
const Script = `
const SG = window.__spoolgateSuggest || (window.__spoolgateSuggest = {});
const allEls = () => {
  const out = [];
  const walk = (r) => { for (const el of r.querySelectorAll('*')) { out.push(el); if (el.shadowRoot) walk(el.shadowRoot); } };
  walk(document);
  return out;
};
const norm = (s) => String(s || '').replace(/[\u00a0\s]+/g, ' ').replace(/[\u200b\ufeff]/g, '').trim();
const textOf = (el) => norm(el.innerText ?? el.textContent);
const parentOf = (el) => el.parentElement || (el.parentNode && el.parentNode.host) || null;
const contains = (a, b) => { for (let n = b; n; n = parentOf(n)) if (n === a) return true; return false; };
const depth = (el) => { let d = 0; for (let n = el; n; n = parentOf(n)) d++; return d; };
const quote = (v) => '"' + String(v).replace(/["\\]/g, '\\$&') + '"';
const okText = (v) => !!v && v.length <= 60 && !/[\n\r]/.test(v) && norm(v) === v;

// How a class or id reads: 'generated' (a build tool's hash: css-1x2ab,
// sc-bdVaJa, _a1b2c3, svelte-xyz12), 'utility' (Tailwind and the like),
// or 'ok' (a name a person wrote: Composer-input, rcb-chat-input).
const UTIL = /^(-?(m|p)[trblxyse]?-|[wh]-|min-|max-|size-|text-|bg-|border|rounded|flex|grid|gap-|items-|justify-|content-|space-|shadow|font-|leading-|tracking-|overflow|absolute|relative|fixed|sticky|static|hidden|block|inline|contents|top-|left-|right-|bottom-|inset-|z-|opacity-|transition|duration-|ease-|delay-|animate-|cursor-|select-|pointer-events|ring|outline|sr-only|col-|row-|self-|place-|order-|aspect-|truncate|whitespace-|break-|underline|italic|uppercase|lowercase|capitalize|basis-|grow|shrink|visible|invisible|fill-|stroke-|dark|group|peer|prose|container$)/;
const nameKind = (c) => {
  if (!c || c.length > 48) return 'generated';
  if (/[:\[\]\/!@]/.test(c) || UTIL.test(c)) return 'utility';
  if (/^(css|sc|jsx|emotion|styled|svelte|astro|tw|ng-tns|ember)-/i.test(c) || /^_/.test(c) || /^[a-z]{1,3}-?\d/i.test(c)) return 'generated';
  if (/^:r[0-9a-z]*:?$|^radix-|^headlessui-|^mui-\d|^react-aria\d/i.test(c)) return 'generated';
  const parts = c.split(/[-_]+/).filter(Boolean);
  for (const p of parts) {
    if (/\d/.test(p) && /[a-z]/i.test(p) && !/^(h[1-6]|v\d+|x[1-9]|[1-9]x|2xl|3xl|4xl|i18n|l10n|mp3|mp4|utf8|base64)$/i.test(p)) return 'generated';
    if (/^\d{3,}$/.test(p)) return 'generated';
    if (p.length >= 5 && !/[aeiouy]/i.test(p)) return 'generated';
    if (/[a-z][A-Z][a-z]?[A-Z]/.test(p) && p.length <= 8) return 'generated';
    if (p.length >= 6 && /^[a-z0-9]+$/i.test(p) && /[A-Z]/.test(p.slice(1)) && /[a-z]/.test(p) && !/^[A-Z]?[a-z]+([A-Z][a-z]+)+$/.test(p)) return 'generated';
  }
  return 'ok';
};
const TESTIDS = ['data-testid', 'data-test-id', 'data-test', 'data-qa', 'data-cy', 'data-e2e'];
const SKIPDATA = /^data-(v-|reactid|react|radix|headlessui|state$|rbd-|aria-|slot$|lexical|slate|gramm|new-gr|lt-|ms-|darkreader|sveltekit|astro|n-)/;
const SEMANTIC = /^(textarea|input|button|form|main|footer|header|nav|aside|article|section|select|dialog|output|svg|time|ul|ol|li|p|pre|code|table|h[1-6])$/;

// perItem: attribute a names one item, not a kind: an element like el
// (its tag) carries a with a value that is another of the same (the
// digits apart, or a random token of the same make), so v finds the
// probe's answer and never the next one: chatui's data-id="ojuyisedytwo"
// on every message, ChatGPT's data-testid="conversation-turn-3",
// assistant-ui's 7-character data-message-id="AyMotwz". Kinds stay:
// data-role "assistant" and "user" (or "system"), testids "copy-button"
// and "like-button" (a shared end).
const perItem = (el, a, v) => {
  for (const n of el.getRootNode().querySelectorAll('[' + CSS.escape(a) + ']')) {
    if (n === el || n.localName !== el.localName || n.contains(el) || el.contains(n)) continue;
    const w = n.getAttribute(a);
    if (w !== v && itemPair(v, w)) return true;
  }
  return false;
};
const itemPair = (v, w) => {
  if (/\d/.test(v) && v.replace(/\d+/g, '#') === w.replace(/\d+/g, '#')) return true;
  // Words joined by dashes (send-button beside model-selector, the test
  // ids of a template page) are names a person wrote, however alike
  // their lengths: a random token has no such words.
  if (wordy(v) || wordy(w)) return false;
  const tok = /^[A-Za-z0-9_-]{5,64}$/;
  if (!tok.test(v) || !tok.test(w) || Math.abs(v.length - w.length) > 4) return false;
  if (v.replace(/[^-]/g, '').length !== w.replace(/[^-]/g, '').length) return false;
  // Below 8 characters a pair of words ("assistant", "system") looks
  // alike too: short ones count only when both are of a machine's make
  // (nanoid's and assistant-ui's ids: a capital inside, or digits with
  // letters). A short id that happens to read as two words (AyMotwz)
  // still has its capital inside.
  const machine = (s) => /[a-z]/.test(s) && /[A-Z]/.test(s.slice(1)) || /\d/.test(s) && /[a-z]/i.test(s);
  if ((v.length < 8 || w.length < 8) && !(machine(v) && machine(w))) return false;
  let p = 0, q = 0;
  while (p < v.length && p < w.length && v[p] === w[p]) p++;
  while (q < v.length && q < w.length && v[v.length - 1 - q] === w[w.length - 1 - q]) q++;
  return p < 3 && q < 3;
};

const wordy = (s) => /^[a-z]+([-_][a-z]+)+$/i.test(s) && s.split(/[-_]/).every((p) => nameKind(p) === 'ok');

// parts: the simple selectors that describe el alone, each with its kind.
const parts = (el) => {
  const tag = el.localName;
  const out = [];
  const add = (sel, kind, note) => out.push({sel, kind, note: note || ''});
  for (const a of TESTIDS) { const v = el.getAttribute(a); if (okText(v) && !perItem(el, a, v)) add('[' + a + '=' + quote(v) + ']', 'testid', a); }
  const role = el.getAttribute('role');
  const aria = el.getAttribute('aria-label');
  if (okText(aria)) add(tag + '[aria-label=' + quote(aria) + ']', 'aria', 'aria-label "' + aria + '"');
  if (role && okText(role)) {
    add('[role=' + quote(role) + ']', 'role', 'role ' + role);
    if (okText(aria)) add('[role=' + quote(role) + '][aria-label=' + quote(aria) + ']', 'aria', 'role ' + role + ', aria-label "' + aria + '"');
  }
  for (const a of ['aria-roledescription', 'aria-live', 'aria-busy']) { const v = el.getAttribute(a); if (okText(v)) add('[' + a + '=' + quote(v) + ']', 'aria', a); }
  const name = el.getAttribute('name');
  if (okText(name) && nameKind(name) === 'ok') add(tag + '[name=' + quote(name) + ']', 'name', 'name "' + name + '"');
  const ph = el.getAttribute('placeholder') || el.getAttribute('aria-placeholder') || el.getAttribute('data-placeholder');
  if (okText(ph)) {
    const a = el.hasAttribute('placeholder') ? 'placeholder' : el.hasAttribute('aria-placeholder') ? 'aria-placeholder' : 'data-placeholder';
    add(tag + '[' + a + '=' + quote(ph) + ']', 'placeholder', a + ' "' + ph + '"');
  }
  const title = el.getAttribute('title');
  if (okText(title)) add(tag + '[title=' + quote(title) + ']', 'title', 'title "' + title + '"');
  const type = el.getAttribute('type');
  if (type === 'submit') add(tag + '[type="submit"]', 'type', 'type=submit');
  if (el.id && nameKind(el.id) === 'ok') add('#' + CSS.escape(el.id), 'id', 'id ' + el.id);
  for (const a of el.getAttributeNames()) {
    if (!a.startsWith('data-') || TESTIDS.includes(a) || SKIPDATA.test(a) || a === 'data-placeholder') continue;
    const v = el.getAttribute(a);
    if (/^(true|false|on|off|open|closed|active|inactive|checked|unchecked|selected|visible|hidden|empty|loading|idle)$/i.test(v)) continue; // a state, not a name
    if (v !== '' && okText(v) && nameKind(v) === 'ok' && !/^\d+$/.test(v) && v.length <= 40 && !perItem(el, a, v)) add('[' + a + '=' + quote(v) + ']', 'data', a + '=' + v);
    else if (nameKind(a.slice(5)) === 'ok') add('[' + a + ']', 'dataPresence', a);
  }
  if (el.isContentEditable && el.getAttribute('contenteditable') !== null) add(tag + '[contenteditable=' + quote(el.getAttribute('contenteditable')) + ']', 'editable', 'contenteditable');
  if (tag.includes('-')) add(tag, 'component', 'element <' + tag + '>');
  else if (SEMANTIC.test(tag)) add(tag, 'tag', '<' + tag + '>');
  for (const c of el.classList) if (nameKind(c) === 'ok') add('.' + CSS.escape(c), 'class', 'class ' + c);
  return out;
};

// hostChain: the shadow hosts around el, outermost first.
const hostChain = (el) => {
  const hosts = [];
  for (let r = el.getRootNode(); r instanceof ShadowRoot; r = r.host.getRootNode()) hosts.unshift(r.host);
  return hosts;
};

// cands: every selector of up to two parts (an ancestor's and el's own)
// for which ok(matches) holds; each with the kinds it rests on. Inside a
// shadow root, a selector that the light-DOM-first lookup does not resolve
// is also tried behind its hosts' tag names and >>>.
const cands = (el, ok, limit) => {
  const out = [];
  const seen = new Set();
  const own = parts(el);
  const ancs = [];
  for (let n = el.parentElement, i = 0; n && i < 8; n = n.parentElement, i++) {
    for (const p of parts(n)) if (p.kind !== 'tag' || /^(form|footer|main|header|nav|aside|article|section|li|dialog)$/.test(p.sel)) ancs.push(p);
  }
  const hosts = hostChain(el);
  const prefix = hosts.map((h) => h.localName).join(' >>> ');
  const tryOne = (sel, kinds, notes, combo) => {
    for (const s of hosts.length ? [sel, prefix + ' >>> ' + sel] : [sel]) {
      if (seen.has(s)) continue;
      seen.add(s);
      const r = qa(s);
      if (r.bad || !r.els.length || !ok(r.els)) continue;
      out.push({sel: s, kinds, notes, combo, matches: r.els.length, shadow: s.includes('>>>') ? -1 : hosts.length ? 1 : 0});
      return true;
    }
    return false;
  };
  for (const p of own) tryOne(p.sel, [p.kind], [p.note], false);
  for (let i = 0; i < own.length && out.length < limit; i++) {
    for (let j = i + 1; j < own.length; j++) {
      const a = own[i], b = own[j];
      if (a.sel.includes(b.sel)) continue;
      if (a.sel.startsWith('.') || a.sel.startsWith('[') || a.sel.startsWith('#') || b.sel.startsWith('#')) continue;
      if (!b.sel.startsWith('.') && !b.sel.startsWith('[')) continue;
      tryOne(a.sel + b.sel, [a.kind, b.kind], [a.note, b.note], false);
    }
  }
  for (const a of ancs) {
    if (out.length >= limit) break;
    for (const p of own) tryOne(a.sel + ' ' + p.sel, [a.kind, p.kind], [a.note + ' (an ancestor)', p.note], true);
  }
  return out;
};
`
