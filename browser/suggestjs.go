package browser

import "github.com/spoolgate/spoolgate/browser/selectjs"

// suggestJS finds, on a live chat page, the elements behind each site key
// and every CSS selector that picks each of them out, with what each
// selector rests on (a test id, an aria label, a role, a class...). It
// does not rank them: rankCandidates (suggest.go) does, in Go, where the
// weights are tested. Its state between evaluations lives in
// window.__spoolgateSuggest: the elements found, and while a probe
// message streams, what appeared, grew and went.
//
// The selectors it makes are the driver's own (qa in helpers): plain CSS,
// found in the light DOM first and then in every open shadow root, or
// `host >>> inner` chains; each candidate is checked with qa against the
// element it is meant to find before it is returned.
//
// The page's shared state and the making of selectors are in
// browser/selectjs; this file finds the keys and watches the probe.
const suggestJS = helpers + selectjs.Script + thinkingJS + `
const first = (target) => (els) => els[0] === target || editable(els[0]) === target;
const labelOf = (el) => [el.getAttribute('aria-label'), el.getAttribute('title'), el.getAttribute('placeholder'), el.getAttribute('aria-placeholder'), el.getAttribute('data-placeholder'), el.value && el.tagName === 'INPUT' && el.type !== 'text' ? el.value : '', ...TESTIDS.map((a) => el.getAttribute(a)), el.id, String(el.className && el.className.baseVal !== undefined ? el.className.baseVal : el.className || '')].filter(Boolean).join(' ');
const iconOf = (el) => [...el.querySelectorAll('svg, use, img, i, [data-icon]')].map((i) => [i.getAttribute('data-icon'), i.getAttribute('class'), i.getAttribute('href'), i.getAttribute('xlink:href'), i.getAttribute('alt'), i.getAttribute('aria-label')].filter(Boolean).join(' ')).join(' ');
const describe = (el) => {
  if (!el) return '';
  const r = el.getBoundingClientRect();
  const l = el.getAttribute('aria-label') || el.getAttribute('placeholder') || el.getAttribute('aria-placeholder') || el.getAttribute('data-placeholder') || el.getAttribute('title') || textOf(el).slice(0, 40);
  return '<' + el.localName + '>' + (l ? ' "' + l + '"' : '') + ' at ' + Math.round(r.left) + ',' + Math.round(r.top) + (hostChain(el).length ? ', in an open shadow root' : '');
};
const BUTTONISH = 'button, [role=button], input[type=submit], input[type=button], a[href]';
const clickable = (el) => el.matches(BUTTONISH) || getComputedStyle(el).cursor === 'pointer';

// The message field: a visible textarea, text input, contenteditable root
// or role=textbox, the one nearest the bottom of the page.
SG.findInput = () => {
  const fields = allEls().filter((e) => {
    if (!vis(e)) return false;
    if (e.tagName === 'TEXTAREA') return !e.disabled && !e.readOnly;
    if (e.tagName === 'INPUT') return /^(text|search|)$/.test(e.getAttribute('type') || '') && !e.disabled && !e.readOnly;
    if (e.isContentEditable) { const p = parentOf(e); return !(p && p.isContentEditable); }
    return e.getAttribute('role') === 'textbox' && !e.querySelector('textarea, [contenteditable]');
  });
  fields.sort((a, b) => b.getBoundingClientRect().bottom - a.getBoundingClientRect().bottom || b.getBoundingClientRect().width - a.getBoundingClientRect().width);
  SG.input = fields[0] || null;
  return {count: fields.length};
};

// Buttons near the field: those inside the closest ancestor of the field
// (up to 6 levels, across shadow hosts) that holds any.
const nearButtons = () => {
  const input = SG.input;
  if (!input) return [];
  let scope = input;
  for (let i = 0; i < 7 && scope; i++) {
    scope = parentOf(scope);
    if (!scope) break;
    const roots = [scope, ...(scope.shadowRoot ? [scope.shadowRoot] : [])];
    const found = [];
    const walk = (r) => { for (const e of r.querySelectorAll('*')) { if (e !== input && !contains(e, input) && !contains(input, e) && vis(e) && clickable(e) && !(parentOf(e) && clickable(parentOf(e)) && contains(scope, parentOf(e)) && parentOf(e) !== scope)) found.push(e); if (e.shadowRoot) walk(e.shadowRoot); } };
    roots.forEach(walk);
    if (found.length) return found;
  }
  return [];
};
const SENDWORD = /send|submit|发送|提交|傳送|送信|enviar|envoyer|senden|paper-?plane|arrow-?up|arrow-?right/i;
SG.sendState = () => new Map(nearButtons().map((b) => [b, !(b.disabled || b.getAttribute('aria-disabled') === 'true')]));
SG.findSend = (before) => {
  const now = SG.sendState();
  const ir = SG.input ? SG.input.getBoundingClientRect() : {right: 0, bottom: 0};
  let best = null;
  for (const [b, enabled] of now) {
    const label = labelOf(b) + ' ' + iconOf(b) + ' ' + (textOf(b).length <= 20 ? textOf(b) : '');
    const ev = [];
    let s = 0;
    if (SENDWORD.test(label)) { s += 10; ev.push('named ' + (label.match(SENDWORD)[0])); }
    if (b.getAttribute('type') === 'submit') { s += 6; ev.push('type=submit'); }
    if (before && enabled && before.get(b) === false) { s += 5; ev.push('enabled once text was typed'); }
    if (before && !before.has(b)) { s += 4; ev.push('showed once text was typed'); }
    if (/new|attach|upload|file|emoji|mic|voice|record|speech|camera|image|plus|clip|menu|setting|stop|cancel|clear/i.test(label)) s -= 8;
    if (!enabled) s -= 3;
    const r = b.getBoundingClientRect();
    const dist = Math.hypot(Math.max(0, r.left - ir.right), Math.max(0, r.top - ir.bottom));
    s -= Math.min(3, dist / 200);
    if (!best || s > best.s) best = {b, s, ev};
  }
  SG.send = best ? best.b : null;
  return best ? {why: best.ev.length ? best.ev.join(', ') : 'the button nearest the field', sure: best.s >= 9 ? 2 : best.s >= 4 ? 1 : 0} : null;
};
const NEWWORD = /\bnew\b.{0,20}?\b(chat|conversation|thread|topic|session|message)\b|^\s*new\s*$|^\+?\s*new\b|新(对话|聊天|会话|建|話題)|开启新|開始新/i;
SG.findNewChat = () => {
  const hits = allEls().filter((e) => vis(e) && e.matches(BUTTONISH + ', [role=menuitem], [role=link]') && e !== SG.send && !(SG.input && contains(e, SG.input)) && NEWWORD.test(labelOf(e) + ' | ' + (textOf(e).length <= 40 ? textOf(e) : '')));
  SG.newChat = hits[0] || null;
  return SG.newChat ? {why: 'named "' + (((labelOf(SG.newChat) + ' ' + textOf(SG.newChat)).match(NEWWORD) || [''])[0].trim()) + '"'} : null;
};
const keyOut = (el, ok, why, extra) => el ? Object.assign({found: true, what: describe(el), why: why || '', cands: cands(el, ok, 40)}, extra || {}) : {found: false, cands: []};
SG.rest = (before) => {
  const fi = SG.findInput();
  const send = SG.findSend(before ? SG.before : null);
  const nc = SG.findNewChat();
  const input = SG.input;
  let inputWhy = '';
  if (input) inputWhy = (fi.count > 1 ? 'the lowest of ' + fi.count + ' fields' : 'the only text field') + ' (' + (input.tagName === 'TEXTAREA' ? 'textarea' : input.tagName === 'INPUT' ? 'input' : input.isContentEditable ? 'contenteditable' : 'role=textbox') + ')';
  return {
    input: keyOut(input, first(input), inputWhy),
    send: keyOut(SG.send, first(SG.send), send && send.why, {sure: send ? send.sure : 0}),
    newChat: keyOut(SG.newChat, first(SG.newChat), nc && nc.why),
  };
};
// The element that shows the stream's thinking (want) apart from the
// answer: new since the send, neither inside the answer nor around it,
// the smallest whose letters and digits hold all of want's (its text
// content: a folded block hides it from innerText). Its
// selectors must find it as their last match (the driver takes the last
// thinking before the answer).
SG.thinkingBeside = (want) => {
  const ans = SG.answer;
  const key = (s) => String(s || '').replace(/[^\p{L}\p{N}]+/gu, '');
  const w = key(want);
  if (!ans || w.length < 8) return {found: false, cands: []};
  let best = null;
  for (const e of allEls()) {
    if (contains(ans, e) || contains(e, ans) || (SG.old && SG.old.has(e)) || !key(e.textContent).includes(w)) continue;
    if (!best || key(e.textContent).length < key(best.textContent).length || contains(best, e)) best = e;
  }
  if (!best) return {found: false, cands: []};
  const last = (els) => els[els.length - 1] === best && !els.some((e) => contains(e, ans) || contains(ans, e));
  return {found: true, what: describe(best), why: 'shows the thinking the stream carried (' + w.length + ' letters and digits), apart from the answer', cands: cands(best, last, 20)};
};
SG.keepBefore = () => { SG.before = SG.sendState(); return SG.before.size; };

// The probe: everything on the page before the send is "old"; a sampler
// (a MutationObserver on the document and every open shadow root, and a
// 30 ms timer) records the elements that appear, when the page's text
// last grew, and which elements showed only while it grew.
SG.arm = (probe, watch) => {
  SG.probe = norm(probe);
  // watch: selectors to judge by this probe (the config's, or the first
  // probe's proposals on the second): when each showed (see watchVerdicts).
  SG.watch = watch || {};
  SG.seen = {};
  // What each watched selector matched before the send: an element it
  // matches only later (a new one, or one whose attribute changed:
  // aria-busy) is what the probe brought.
  SG.watchBefore = {};
  for (const [k, sel] of Object.entries(SG.watch)) { const r = sel ? qa(sel) : {els: []}; SG.watchBefore[k] = new Set((r.els || []).filter(vis)); }
  SG.old = new WeakSet(allEls());
  SG.visBefore = new WeakSet(allEls().filter(vis));
  SG.appeared = new Map(); // el -> {first, last, cands: [{sel, kinds, notes, combo, matches, shadow, during: n}]}
  SG.t0 = performance.now();
  SG.wall0 = Date.now();
  SG.firstGrowth = 0; SG.lastGrowth = 0; SG.maxGap = 0; SG.growEvents = 0; SG.samples = 0;
  SG.busyAttr = new Map();
  const textLen = () => (document.documentElement.textContent || '').length + openRootsNow().reduce((n, r) => n + (r.textContent || '').length, 0);
  const openRootsNow = () => allEls().filter((e) => e.shadowRoot).map((e) => e.shadowRoot);
  SG.lastLen = textLen();
  const INDICATOR = /typing|loading|loader|spinner|stop|progress|thinking|generat|busy|pending|cursor|dots|indicator|wait|streaming|cancel|abort/i;
  const sample = () => {
    const t = performance.now() - SG.t0;
    SG.samples++;
    const len = textLen();
    const grew = len !== SG.lastLen;
    if (grew) {
      SG.lastLen = len;
      if (!SG.firstGrowth) SG.firstGrowth = t;
      else SG.maxGap = Math.max(SG.maxGap, t - SG.lastGrowth);
      SG.lastGrowth = t;
      SG.growEvents++;
    }
    let described = 0;
    for (const el of allEls()) {
      if (SG.visBefore.has(el) || !vis(el)) continue;
      let a = SG.appeared.get(el);
      if (!a) {
        a = {first: t, last: t, seen: 0, cands: null};
        SG.appeared.set(el, a);
      }
      a.last = t; a.seen++;
      if (a.cands === null && described < 40) {
        const hint = labelOf(el) + ' ' + el.localName + ' ' + (el.getAttribute('role') || '');
        const small = textOf(el).length <= 30 && el.querySelectorAll('*').length <= 30;
        a.ind = small && INDICATOR.test(hint);
        if (small && (a.ind || el.matches('button, [role=button], [role=progressbar], [role=status], [aria-busy=true], svg'))) {
          described++;
          a.cands = cands(el, (els) => vis(els[0]), 30);
        } else if (!small) a.cands = [];
      }
      // When each selector found a visible element (a page may mount its
      // stop button anew mid-stream: the selector is what busy keeps).
      if (a.cands) for (const c of a.cands) if (vis(q(c.sel))) { c.during = (c.during || 0) + 1; if (c.first === undefined) c.first = t; c.last = t; }
    }
    for (const el of allEls()) if (el.getAttribute('aria-busy') === 'true') SG.busyAttr.set(el, (SG.busyAttr.get(el) || 0) + 1);
    for (const [k, sel] of Object.entries(SG.watch)) {
      if (!sel || k === 'answer' || k === 'thinking') continue;
      const r = qa(sel);
      if (r.bad || !r.els.some((e) => vis(e) && !SG.watchBefore[k].has(e))) continue;
      const w = SG.seen[k] || (SG.seen[k] = {first: t, last: t});
      w.last = t;
    }
  };
  SG.sample = sample;
  if (SG.mo) SG.mo.forEach((m) => m.disconnect());
  SG.mo = [];
  let queued = false;
  const onMut = () => { if (!queued) { queued = true; queueMicrotask(() => { queued = false; sample(); }); } };
  const observe = () => {
    for (const r of [document, ...openRootsNow()]) {
      if (r.__sgObserved) continue;
      r.__sgObserved = true;
      const mo = new MutationObserver(onMut);
      mo.observe(r, {subtree: true, childList: true, characterData: true, attributes: true});
      SG.mo.push(mo);
    }
  };
  observe();
  if (SG.timer) clearInterval(SG.timer);
  SG.timer = setInterval(() => { observe(); sample(); }, 30);
  return true;
};
SG.progress = () => {
  const t = performance.now() - SG.t0;
  let showing = 0;
  for (const [el, a] of SG.appeared) if (a.ind && el.isConnected && vis(el) && a.first < SG.lastGrowth + 50) showing++;
  return {grew: SG.firstGrowth > 0, sinceGrowth: SG.firstGrowth ? t - SG.lastGrowth : 0, elapsed: t, indicators: showing};
};

// finish reads what the probe left: the answer (the longest new text that
// holds neither the probe's own message nor the field, descended to the
// element that holds most of it), busy (shown only while the text grew),
// done (shown only after), the answer's copy button, and any error.
SG.finish = () => {
  SG.done = true;
  clearInterval(SG.timer);
  SG.mo.forEach((m) => m.disconnect());
  SG.sample && SG.sample();
  const input = SG.input;
  const fresh = allEls().filter((e) => !SG.old.has(e) && e.isConnected && vis(e));
  // The probe's own text: its bubble, and wherever else the page repeats
  // it (a history entry titled with it).
  const same = fresh.filter((e) => textOf(e) === SG.probe);
  const users = same.filter((e) => !same.some((o) => o !== e && contains(o, e)));
  const user = users.find((u) => u.closest('[data-message-author-role], [data-turn], [class*=message], [class*=msg], [class*=bubble]')) || users[0] || null;
  const bad = (e) => users.some((u) => contains(e, u) || contains(u, e)) || (input && contains(e, input));
  let box = null;
  for (const e of fresh) {
    if (bad(e)) continue;
    const n = textOf(e).length;
    if (n === 0) continue;
    if (!box || n > textOf(box).length || (n === textOf(box).length && contains(e, box))) box = e;
  }
  const out = {user: user ? describe(user) : '', answer: {found: false, cands: []}, busy: {found: false, cands: []}, done: {found: false, cands: []}, copy: {found: false, cands: []}, error: {found: false, cands: []}};
  if (!box) {
    // No answer: an alert or error message that showed instead is the
    // page's error (a successful probe shows none to learn from).
    const err = fresh.find((e) => !bad(e) && textOf(e) && (e.matches('[role=alert], [aria-live=assertive]') || /error|fail|alert/i.test(labelOf(e))));
    if (err) out.error = {found: true, what: describe(err), why: 'showed after the send instead of an answer', text: textOf(err), cands: cands(err, first(err), 20)};
    return out;
  }
  // A reasoning model's thinking block inside the answer's bubble (see
  // thinkingJS) is never the answer: its text counts for nothing below,
  // the descent never enters it, and the answer's text leaves it out.
  const think = findThinking(box, '');
  const inThink = (e) => !!think && think.nodes.some((n) => n === e || n.contains(e));
  const thinkLen = (el) => think ? think.nodes.filter((n) => el.contains(n) && n !== el).reduce((s, n) => s + textOf(n).length, 0) : 0;
  // Descend while one child holds at least 80% of the text that is not
  // a button's (an action bar's "Copy Regenerate" is no part of the answer).
  const contentLen = (el) => {
    if (inThink(el)) return 0;
    let n = textOf(el).length - thinkLen(el);
    for (const b of el.querySelectorAll(BUTTONISH)) if (!parentOf(b).closest(BUTTONISH) && !inThink(b)) n -= textOf(b).length;
    return Math.max(0, n);
  };
  const textNoThink = (el) => {
    if (!think || !think.nodes.some((n) => el.contains(n))) return textOf(el);
    const c = el.cloneNode(true);
    const live = [el, ...el.querySelectorAll('*')], copy = [c, ...c.querySelectorAll('*')];
    live.forEach((x, i) => { if (x !== el && think.nodes.includes(x)) copy[i].remove(); });
    return norm(c.textContent);
  };
  let ans = box;
  for (;;) {
    const total = contentLen(ans);
    const kids = [...ans.children, ...(ans.shadowRoot ? ans.shadowRoot.children : [])].filter((k) => contentLen(k) >= total * 0.8 && contentLen(k) > 0);
    if (kids.length !== 1 || kids[0].matches('p, span, code, pre, li, strong, em, b, i, a') && ans !== box && contentLen(kids[0]) < total) break;
    ans = kids[0];
  }
  // Climb back while the text stays the same: the higher element of the
  // same text often has the better name (message-content, markdown...).
  const chain = [ans];
  for (let n = parentOf(ans); n && contains(box, n) && textOf(n) === textOf(ans); n = parentOf(n)) chain.push(n);
  const text = textNoThink(ans);
  SG.answer = ans;
  const oldCount = (els) => els.filter((e) => SG.old.has(e)).length;
  const answerOK = (els) => {
    const last = els[els.length - 1];
    if (!last || textNoThink(last) !== text || inThink(last)) return false;
    if (els.some((e) => bad(e) || (input && contains(input, e)))) return false;
    return els.length > oldCount(els);
  };
  const ac = [];
  const seen = new Set();
  for (const el of chain) for (const c of cands(el, answerOK, 40)) if (!seen.has(c.sel)) { seen.add(c.sel); ac.push(c); }
  out.answer = {found: true, what: describe(ans), why: 'the new text that grew after the send (' + text.length + ' characters' + (user ? ', beside the probe message ' + describe(user) : '') + ')', text, cands: ac};
  // Busy: shown after the send, gone now. One element's selectors only
  // (they are ranked in Go): the one that showed from the send to the
  // stream's end, before one that went mid-stream (a thinking spinner,
  // gone once the thinking was done, while the answer still streamed).
  const bc = [];
  const bseen = new Set();
  const gone = [];
  const groups = [];
  for (const [el, a] of SG.appeared) {
    if (!a.cands || !a.cands.length) continue;
    if (el.isConnected && vis(el)) continue;
    if (a.first > SG.lastGrowth + 50) continue;
    gone.push(describe(el));
    const cover = SG.growSpan() ? Math.min(1, (a.last - Math.max(a.first, 0)) / SG.growSpan()) : 0;
    const cs = a.cands.filter((c) => c.during && !vis(q(c.sel)));
    if (cs.length) groups.push({el, cover, first: a.first, last: a.last, lag: Math.max(0, SG.lastGrowth - a.last), fromSend: a.first <= SG.firstGrowth + 150, cs});
  }
  const spans = (g) => g.fromSend && g.cover >= 0.8; // a first pick; Go judges it by the stream's end
  groups.sort((x, y) => (spans(y) - spans(x)) || (y.cover - x.cover));
  for (const g of groups.slice(0, 1)) {
    for (const c of g.cs) {
      if (bseen.has(c.sel)) continue;
      bseen.add(c.sel);
      bc.push(Object.assign({}, c, {cover: g.cover, lag: g.lag, first: Math.min(g.first, c.first ?? g.first), last: Math.max(g.last, c.last ?? g.last), what: describe(g.el)}));
    }
  }
  for (const [el, n] of SG.busyAttr) {
    if (el.getAttribute('aria-busy') === 'true') continue;
    const sel = '[aria-busy="true"]';
    if (!bseen.has(sel)) { bseen.add(sel); bc.push({sel, kinds: ['aria'], notes: ['aria-busy=true'], combo: false, matches: 0, shadow: 0, cover: 1, first: 0, last: SG.lastGrowth, what: describe(el)}); }
  }
  bc.sort((x, y) => (y.cover || 0) - (x.cover || 0));
  if (bc.length) out.busy = {found: true, what: bc[0].what, why: 'showed after the send and went once the answer stopped growing', cands: bc};
  // Done and copy: new, visible now, appeared after the text stopped growing
  // (or with it), inside or beside the answer's container.
  let scope = box;
  for (let i = 0; i < 3 && parentOf(scope) && !bad(parentOf(scope)); i++) scope = parentOf(scope);
  const late = [];
  for (const [el, a] of SG.appeared) {
    if (!el.isConnected || !vis(el) || !contains(scope, el) || contains(ans, el) || inThink(el)) continue;
    if (a.first < SG.lastGrowth - 100) continue;
    late.push(el);
  }
  const lastIn = (target) => (els) => els[els.length - 1] === target && els.every((e) => !bad(e));
  const copyBtn = [...scope.querySelectorAll('*'), ...(scope.shadowRoot ? scope.shadowRoot.querySelectorAll('*') : [])].filter((e) => vis(e) && clickable(e) && !contains(ans, e) && !inThink(e) && /copy|复制|複製|コピー|copiar|copier|kopieren/i.test(labelOf(e) + ' ' + iconOf(e) + ' ' + (textOf(e).length <= 20 ? textOf(e) : ''))).pop();
  if (copyBtn) out.copy = {found: true, what: describe(copyBtn), why: 'a button named copy under the answer', cands: cands(copyBtn, lastIn(copyBtn), 30)};
  const doneEl = late.filter((e) => clickable(e) || e.matches('[role=toolbar], [role=group]')).sort((x, y) => depth(x) - depth(y))[0] || (copyBtn && late.includes(copyBtn) ? copyBtn : null);
  // A done selector matches nothing inside the answer: a code block's own
  // Copy button shows mid-stream, and a done that matches it ends the
  // answer at its first code block.
  const doneOK = (els) => lastIn(doneEl)(els) && !els.some((e) => contains(ans, e) || (contains(box, e) && box.contains(e.closest('pre, [class*=code-block], [class*=codeblock], [class*=code-header]'))));
  if (doneEl) out.done = {found: true, what: describe(doneEl), why: 'showed under the answer only once it stopped growing, and matches nothing inside it', cands: cands(doneEl, doneOK, 30)};
  out.gone = gone.slice(0, 8);
  out.thinking = !!think;
  out.wall0 = SG.wall0; out.firstGrowth = SG.firstGrowth; out.lastGrowth = SG.lastGrowth;
  out.seen = SG.seen;
  out.watch = watchVerdicts(ans, box, text, inThink, textNoThink);
  out.maxGap = SG.maxGap;
  out.growEvents = SG.growEvents;
  return out;
};
// watchVerdicts judges each watched selector by what this probe showed:
// "ok", or why not. answer: its last match is the answer (its thinking
// left out), not the thinking; thinking: it finds a block apart from the
// answer; busy: it showed from the send to the stream's end and is gone;
// done: it showed only after the answer's end, outside the answer and
// its code blocks; copy: it shows now, outside the answer.
const watchVerdicts = (ans, box, text, inThink, textNoThink) => {
  const res = {};
  const inside = (e) => contains(ans, e) || (contains(box, e) && !!e.closest && box.contains(e.closest('pre, [class*=code-block], [class*=codeblock], [class*=code-header]')));
  for (const [k, sel] of Object.entries(SG.watch)) {
    if (!sel) continue;
    const r = qa(sel);
    if (r.bad) { res[k] = 'not a valid selector'; continue; }
    const now = r.els.filter((e) => vis(e) && !(SG.watchBefore[k] || SG.visBefore).has(e));
    const w = SG.seen[k];
    const last = r.els[r.els.length - 1];
    switch (k) {
    case 'answer':
      res[k] = !last ? 'matches nothing' : inThink(last) ? 'its last match is the thinking block' : textNoThink(last) === text ? 'ok' : 'its last match is not the answer';
      break;
    case 'thinking': {
      const th = findThinking(box, sel);
      res[k] = !th ? 'finds no thinking block' : th.nodes.some((n) => n === ans || n.contains(ans)) ? 'its block holds the answer' : 'ok';
      break;
    }
    case 'busy': // whether it lasted to the stream's end is judged in Go (probeKeys.spans)
      res[k] = !w ? 'never showed' : now.length ? 'still shows after the answer' : 'span';
      break;
    case 'done':
      res[k] = !now.length ? 'does not show under the answer' : w && w.first < SG.lastGrowth - 100 ? 'showed while the answer still grew' : now.some(inside) ? 'matches something inside the answer or its code' : 'ok';
      break;
    case 'copy':
      res[k] = !now.length ? 'shows no button' : now.some((e) => contains(ans, e)) ? 'matches a button inside the answer' : 'ok';
      break;
    }
  }
  return res;
};
SG.growSpan = () => Math.max(0, SG.lastGrowth - SG.firstGrowth);
// current: does each of the config's selectors still find what was found?
SG.current = (keys) => {
  const res = {};
  for (const [k, sel] of Object.entries(keys)) {
    if (!sel) continue;
    const r = qa(sel);
    const target = SG[k];
    if (r.bad) res[k] = 'not a valid selector';
    else if (!r.els.length) res[k] = 'matches nothing';
    else if (target && k === 'answer') res[k] = textOf(r.els[r.els.length - 1]) === textOf(target) ? 'ok' : 'its last match is not the answer';
    else if (target) res[k] = first(target)(r.els) ? 'ok' : 'matches another element';
    else res[k] = 'matches';
  }
  return res;
};
`
