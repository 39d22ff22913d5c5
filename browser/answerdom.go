package browser

import (
	"context"
	"strings"

	"github.com/chromedp/chromedp"
)

// answerView is the last answer element as the page shows it, read in
// one evaluation: its HTML with everything the reader does not see or
// that is not the model's words taken out (for the dom method), and its
// visible text without that same chrome (the text method, and what
// every result is checked against).
type answerView struct {
	Found bool   `json:"found"`
	HTML  string `json:"html"`
	Text  string `json:"text"`
	// ThinkHTML is a reasoning model's thinking block (the site's
	// `thinking:`, or one the page marks, see thinkingJS), its label and
	// toggle left out, read whether it is expanded or collapsed. It is
	// never part of HTML or Text.
	ThinkHTML string `json:"thinkHtml"`
	// ThinkText is the thinking block as its text, line breaks kept, when
	// it holds no block of Markdown (a pre-wrap text): what it says
	// exactly, where its HTML would run its lines together.
	ThinkText string `json:"thinkText"`
	// ThinkHow says how it was found: "thinking" (the key), "details"
	// or "toggle"; "" when there is none.
	ThinkHow string `json:"thinkHow"`
}

// defaultChrome is dropped from every answer before it is read: buttons
// are the page's controls, never the model's words.
var defaultChrome = []string{"button", "script", "style", "template", "[aria-hidden=true]", "[role=toolbar]", "[role=button]"}

// answerViewJS reads the answer element (see answerView). The element is
// looked at live (computed styles, sizes) and changed only in a clone:
// live and clone are walked in the same document order, so the i-th
// element of one is the i-th of the other.
//
//   - Hidden elements are dropped: display none, visibility hidden,
//     aria-hidden, the hidden attribute, what checkVisibility says is
//     not rendered (the content of a closed details), and boxes of at
//     most a pixel that clip their content (screen-reader text) or have
//     no box at all.
//   - Chrome is dropped: the site's `chrome:` selectors and the defaults
//     above; labels the reader cannot select (user-select: none) that
//     hold no block of the answer; and the UI around a code block (the
//     header's language label, a Copy or 复制 caption), found without a
//     site key as a short, block-free sibling of the block (or of a
//     wrapper that holds only that block), never a paragraph; and the
//     header just before the block among other blocks when it names the
//     block's language or sits beside a control (issue 55). A label
//     that names a language becomes the block's language when its code
//     has none.
//   - Text whose computed white-space keeps line breaks (pre, pre-wrap,
//     pre-line, break-spaces; a chat kit's plain-text bubble) keeps them:
//     each break becomes a <br>, so a blank line is a paragraph break.
//   - A code block's text is exactly its code element's (or, without
//     one, the block's text without the chrome), with its language.
//   - Emphasis the page draws by style alone (a bold or italic span) is
//     read as such (issue 55).
//   - A link drawn as a button (data-href, data-url, data-link) or as
//     role=link keeps its text, and becomes a link to its URL where the
//     DOM has one (issue 55): the default chrome (buttons) never takes it.
const answerViewJS = `(() => {
const el = qlast(__ANSWER__);
if (!el) return {found: false, html: '', text: ''};
const chrome = __CHROME__;
` + thinkingJS + `
const think = findThinking(el, __THINKING__);
const CAPTION = /^(copy|copy code|copied!?|copy to clipboard|复制|复制代码|已复制|拷贝|拷贝代码)$/i;
const LANG = /^[\w+#.-]{1,20}$/;
const BLOCKS = 'p,pre,li,ul,ol,table,h1,h2,h3,h4,h5,h6,blockquote';
const live = [el, ...el.querySelectorAll('*')];
const gone = new Set();
const styles = new Map();
const style = (x) => { let s = styles.get(x); if (!s) { s = getComputedStyle(x); styles.set(x, s); } return s; };
const wsOf = (s) => {
  const c = s.whiteSpaceCollapse;
  if (c) return c === 'preserve' || c === 'break-spaces' ? 'pre' : c === 'preserve-breaks' ? 'pre-line' : '';
  const w = s.whiteSpace || '';
  return /^(pre|pre-wrap|break-spaces)$/.test(w) ? 'pre' : w === 'pre-line' ? 'pre-line' : '';
};
const matches = (x, s) => { try { return x.matches(s); } catch (e) { return false; } };
const hasBlock = (x) => !!x.querySelector(BLOCKS);
const tiny = (x, s) => {
  if (s.display === 'contents' || /^(BR|WBR|IMG|HR|svg|SVG)$/.test(x.tagName)) return false;
  const r = x.getBoundingClientRect();
  if (r.width > 1 || r.height > 1) return false;
  return s.overflowX !== 'visible' || s.overflowY !== 'visible' || x.getClientRects().length === 0;
};
const hidden = (x, s) => s.display === 'none' || s.visibility === 'hidden' || s.visibility === 'collapse' || x.hidden ||
  (x.checkVisibility && !x.checkVisibility({contentVisibilityAuto: true})) || tiny(x, s); // checkVisibility: a closed details' content
const textOf = (x) => (x.textContent || '').trim();
// A link drawn as a button (<button data-href>) or as role=link: words
// of the answer, not chrome; its URL where the DOM has one (http and
// https only, never followed).
const linkURL = (x) => {
  for (const a of ['data-href', 'data-url', 'data-link', 'href']) {
    const v = x.getAttribute(a);
    try { const u = v && new URL(v, location.href); if (u && /^https?:$/.test(u.protocol)) return u.href; } catch (e) {}
  }
  return '';
};
const linkish = (x) => x.tagName !== 'A' && !!textOf(x) && !CAPTION.test(textOf(x)) && !hasBlock(x) && !x.closest('pre') &&
  (x.getAttribute('role') === 'link' || matches(x, 'button,[role=button]') && !!linkURL(x));
const links = new Map();
for (let i = 1; i < live.length; i++) {
  const x = live[i];
  if (gone.has(x.parentElement)) { gone.add(x); continue; }
  if (think && think.nodes.some((n) => n.contains(x))) { gone.add(x); continue; } // the thinking is never the answer
  const hits = chrome.filter((s) => matches(x, s));
  const link = linkish(x) && hits.every((s) => s === 'button' || s === '[role=button]');
  if (hits.length && !link) { gone.add(x); continue; }
  const s = style(x);
  if (hidden(x, s)) { gone.add(x); continue; }
  if (link) { links.set(x, linkURL(x)); continue; }
  if ((s.userSelect || s.webkitUserSelect) === 'none' && !hasBlock(x) && textOf(x).length <= 40 && !/^(IMG|CODE|PRE)$/.test(x.tagName)) { gone.add(x); continue; }
  if (!/^(P|LI|H[1-6]|TD|TH|CODE|PRE)$/.test(x.tagName) && CAPTION.test(textOf(x)) && !hasBlock(x)) { gone.add(x); continue; }
}
const goneAll = (x) => { gone.add(x); for (const d of x.querySelectorAll('*')) gone.add(d); };
// A label's words: its text outside buttons, captions left out.
const labelOf = (x) => {
  const words = [];
  const walk = (n) => {
    if (n.nodeType === 3) { const t = n.data.trim(); if (t && !CAPTION.test(t)) words.push(t); return; }
    if (n.nodeType === 1 && !matches(n, 'button,[role=button]')) for (const c of n.childNodes) walk(c);
  };
  walk(x);
  return words.join(' ');
};
// The UI around each code block.
const lang = new Map();
for (const pre of el.querySelectorAll('pre')) {
  if (gone.has(pre)) continue;
  const code = pre.querySelector('code') || pre;
  const m = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec((code.className || '') + ' ' + (pre.className || ''));
  let found = m ? m[1] : (code.getAttribute('data-language') || pre.getAttribute('data-language') || '');
  const around = [];
  for (const c of pre.children) if (c !== code && !c.contains(code)) around.push(c); // chrome inside the block
  let box = pre;
  for (; box !== el && box.parentElement && box.parentElement !== el; box = box.parentElement) {
    const p = box.parentElement;
    if (p.querySelectorAll('pre').length !== 1) break;
    for (const c of p.children) if (c !== box) around.push(c);
  }
  // A header drawn just before the block among other blocks (a sibling
  // of the pre, or of its one-block wrapper, in a parent that holds
  // more): chrome when it names the block's language, or is a label
  // beside the page's own controls (a Copy button).
  const head = box.previousElementSibling;
  if (head && !around.includes(head) && !/^(P|LI|H[1-6]|TABLE|UL|OL|BLOCKQUOTE|PRE)$/.test(head.tagName) && !hasBlock(head)) {
    const t = labelOf(head);
    const controls = !!head.querySelector('button,[role=button],[role=toolbar]');
    if (t && LANG.test(t) && ((found && t.toLowerCase() === found.toLowerCase()) || controls)) {
      if (!found) found = t;
      goneAll(head);
    }
  }
  for (const c of around) {
    if (c.querySelector('pre') || /^(P|LI|H[1-6]|TABLE|UL|OL|BLOCKQUOTE)$/.test(c.tagName) || hasBlock(c)) continue;
    const t = labelOf(c);
    if (t.length > 30) continue;
    if (!found && LANG.test(t)) found = t;
    if (gone.has(c)) continue;
    if (c.querySelector('button,[role=button],[role=toolbar]') || t === '' || LANG.test(t)) goneAll(c);
  }
  lang.set(pre, found);
}
// The visible text, as innerText would give it without what is gone: a
// paragraph is set apart by a blank line, any other block by a line
// break, table cells by tabs; white space collapses where the element's
// white-space says so.
const visible = (root) => {
  const out = [];
  let req = 0, lineStart = true;
  const last = () => out.length ? out[out.length - 1] : '';
  const trimEnd = () => { if (out.length) out[out.length - 1] = last().replace(/ +$/, ''); };
  const put = (s, keep) => {
    if (!s) return;
    if (!keep && (lineStart || req || / $/.test(last()))) s = s.replace(/^ +/, '');
    if (!s) return;
    if (req && out.length) { trimEnd(); out.push('\n'.repeat(req)); }
    req = 0;
    out.push(s);
    lineStart = s.endsWith('\n');
  };
  const need = (n) => { if (out.length) req = Math.max(req, n); };
  const walk = (n, ws) => {
    if (n.nodeType === 3) {
      let s = n.data;
      if (!ws) s = s.replace(/[ \t\n\r\f]+/g, ' ');
      else if (ws === 'pre-line') s = s.replace(/[ \t]+/g, ' ');
      put(s, !!ws);
      return;
    }
    if (n.nodeType !== 1 || gone.has(n) || /^(SCRIPT|STYLE|TEMPLATE|NOSCRIPT)$/.test(n.tagName)) return;
    if (n.tagName === 'BR') { put('\n', true); return; }
    const s = style(n);
    const d = s.display || '';
    const cell = d === 'table-cell';
    const block = !cell && !/^inline/.test(d) && d !== 'contents';
    const br = n.tagName === 'P' ? 2 : block ? 1 : 0;
    if (cell && n.previousElementSibling) { trimEnd(); put('\t', true); }
    need(br);
    const w = n.tagName === 'PRE' ? 'pre' : wsOf(s);
    for (const c of n.childNodes) walk(c, w);
    if (cell) trimEnd();
    need(br);
  };
  walk(root, wsOf(style(root)));
  return out.join('').trim();
};
// A code block's code: its text, without what is gone; a line element
// (display block) ends its line.
const codeText = (root) => {
  let t = '';
  const walk = (n) => {
    if (n.nodeType === 3) { t += n.data; return; }
    if (n.nodeType !== 1 || gone.has(n)) return;
    if (n.tagName === 'BR') { t += '\n'; return; }
    const block = n !== root && !/^inline|contents/.test(style(n).display || '');
    if (block && t && !t.endsWith('\n')) t += '\n';
    for (const c of n.childNodes) walk(c);
    if (block && t && !t.endsWith('\n')) t += '\n';
  };
  walk(root);
  return t;
};
const text = visible(el);
// The clone: what is gone removed, kept line breaks as <br>, code exact.
// Made in a document of its own, where no custom element is defined: a
// web component cloned in the page runs its constructor, which may add
// children (TDesign's chat, made with Omi), and the clone's elements
// would no longer pair with the live ones.
const c = document.implementation.createHTMLDocument('').importNode(el, true);
const copy = [c, ...c.querySelectorAll('*')];
const keep = [];
live.forEach((x, i) => {
  if (!gone.has(x) && x.tagName !== 'PRE' && !x.closest('pre') && wsOf(style(x))) keep.push([x, copy[i]]);
});
live.forEach((x, i) => {
  if (x.tagName !== 'PRE' || gone.has(x)) return;
  const code = x.querySelector('code') || x;
  let t = codeText(code);
  if (code === x) t = t.replace(/^\n+/, ''); // the chrome's lines before the code
  const nc = document.createElement('code');
  if (lang.get(x)) nc.className = 'language-' + lang.get(x);
  nc.textContent = t.replace(/\n$/, '');
  const np = document.createElement('pre');
  np.appendChild(nc);
  copy[i].replaceWith(np);
});
live.forEach((x, i) => { if (gone.has(x) && !gone.has(x.parentElement)) copy[i].remove(); });
for (const [x, y] of keep) {
  const nodes = [...y.childNodes];
  nodes.forEach((t, j) => {
    if (t.nodeType !== 3 || !t.data.includes('\n')) return;
    let data = t.data;
    const block = !/^inline/.test(style(x).display || '');
    if (block && j === 0) data = data.replace(/^\n+/, '');
    if (block && j === nodes.length - 1) data = data.replace(/\n+$/, '');
    const f = document.createDocumentFragment();
    data.split('\n').forEach((line, k) => { if (k) f.appendChild(document.createElement('br')); if (line) f.appendChild(document.createTextNode(line)); });
    t.replaceWith(f);
  });
}
// Emphasis drawn by style (a span the page makes bold or italic, not a
// strong or em): the clone says it with the element the Markdown
// converter knows, so it is read as **bold** and *italic*. Only where
// the element itself starts the emphasis (its parent is not already so),
// and never in a link, a heading, a table header or code (bold or set
// apart by their kind).
const EMPH_SKIP = /^(STRONG|B|EM|I|A|H[1-6]|TH|CODE|PRE|SUMMARY|BUTTON)$/;
live.forEach((x, i) => {
  if (i === 0 || gone.has(x) || EMPH_SKIP.test(x.tagName) || x.closest('a,pre,code,h1,h2,h3,h4,h5,h6,th,strong,b') || !textOf(x)) return;
  const s = style(x);
  if (!/^inline/.test(s.display || '')) return;
  const ps = style(x.parentElement);
  const wrap = (tag) => { const w = document.createElement(tag); while (copy[i].firstChild) w.appendChild(copy[i].firstChild); copy[i].appendChild(w); };
  if ((parseInt(s.fontWeight, 10) || 400) >= 600 && (parseInt(ps.fontWeight, 10) || 400) < 600) wrap('strong');
  if (/^(italic|oblique)/.test(s.fontStyle || '') && !/^(italic|oblique)/.test(ps.fontStyle || '') && !x.closest('em,i')) wrap('em');
});
// Each link drawn otherwise becomes a link (a span without a URL).
live.forEach((x, i) => {
  if (!links.has(x) || gone.has(x)) return;
  const a = c.ownerDocument.createElement(links.get(x) ? 'a' : 'span');
  if (links.get(x)) a.setAttribute('href', links.get(x));
  a.append(...copy[i].childNodes);
  copy[i].replaceWith(a);
});
for (const x of c.querySelectorAll('th, td')) {
  const a = x.getAttribute('align') || x.style.textAlign;
  if (a) x.setAttribute('align', a);
}
return {found: true, html: c.innerHTML, text, thinkHtml: think ? think.html : '', thinkText: think ? think.plain : '', thinkHow: think ? think.how : ''};
})()`

// thinkingJS finds a reasoning model's thinking block of the answer el:
//
//   - the site's thinking: selector: its match inside el, else its last
//     match before el in the document (a block drawn above the answer
//     bubble) that follows the answer before el;
//   - without it, a block the page marks: a details element whose summary
//     says 思考, 推理, Thinking, Thought or Reasoning (已深度思考, "Thought
//     for 8 s"), or a toggle so labelled (a button, an element with
//     aria-expanded, or one with a pointer cursor) beside a block: the
//     element its aria-controls names,
//     else its next sibling that is not inline (an inline one is a label:
//     "8s"), else its parent's next sibling. A toggle
//     whose block holds the whole answer is not one.
//
// nodes leave the answer (the details; the toggle and its block, or the
// wrapper or header that holds only them); html is the thinking
// without its label, read from the DOM whether it shows or not.
const thinkingJS = `
const THINK_LABEL = /(思考|推理|thinking|thought|reasoning)/i;
const findThinking = (el, sel) => {
  const labelText = (x) => (x.textContent || '').trim();
  const short = (x) => labelText(x).length <= 60;
  const htmlOf = (block, drop) => {
    const c = block.cloneNode(true);
    const live = [block, ...block.querySelectorAll('*')];
    const copy = [c, ...c.querySelectorAll('*')];
    const out = [];
    live.forEach((x, i) => { if (drop.some((d) => d === x) || (x !== block && /^(BUTTON|SUMMARY|SCRIPT|STYLE|TEMPLATE)$/.test(x.tagName))) out.push(copy[i]); });
    for (const x of out) x.remove();
    return c.innerHTML;
  };
  // plainOf is a block that holds no block of Markdown (a pre-wrap text,
  // lines parted by <br>) as its text, line breaks kept as innerText
  // keeps them, read from the DOM whether it shows or not; '' otherwise,
  // when its HTML says more.
  const plainOf = (block, drop) => {
    if (block.querySelector('p,li,ul,ol,pre,table,blockquote,h1,h2,h3,h4,h5,h6,hr,img')) return '';
    let out = '';
    const walk = (n, pre) => {
      if (n.nodeType === 3) { out += pre ? n.data : n.data.replace(/\s+/g, ' '); return; }
      if (n.nodeType !== 1 || drop.includes(n) || /^(BUTTON|SUMMARY|SCRIPT|STYLE|TEMPLATE)$/.test(n.tagName)) return;
      if (n.tagName === 'BR') { out += '\n'; return; }
      const s = getComputedStyle(n);
      const p = /^(pre|pre-wrap|pre-line|break-spaces)$/.test(s.whiteSpace || '') || /^(preserve|preserve-breaks|break-spaces)$/.test(s.whiteSpaceCollapse || '') || (pre && !s.whiteSpace);
      const block = n !== block0 && !/^inline/.test(s.display || 'inline') && s.display !== 'contents';
      if (block && out && !out.endsWith('\n')) out += '\n';
      for (const c of n.childNodes) walk(c, p);
      if (block && out && !out.endsWith('\n')) out += '\n';
    };
    const block0 = block;
    walk(block, false);
    return out.split('\n').map((l) => l.replace(/[ \t]+$/, '')).join('\n').replace(/^\n+|\s+$/g, '');
  };
  const read = (block, drop) => ({html: htmlOf(block, drop), plain: plainOf(block, drop)});
  if (sel) {
    let m = null;
    try { m = [...el.querySelectorAll(sel)].pop() || null; } catch (e) {}
    if (!m) {
      const all = qa(sel).els.filter((x) => x.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING);
      m = all.length ? all[all.length - 1] : null;
    }
    if (m) return {nodes: [m], ...read(m, []), how: 'thinking'};
    return null;
  }
  for (const d of el.querySelectorAll('details')) {
    const s = d.querySelector(':scope > summary');
    if (s && short(s) && THINK_LABEL.test(labelText(s))) return {nodes: [d], ...read(d, [s]), how: 'details'};
  }
  // A toggle may also be a plain element the page made clickable (Ant
  // Design X's Think: a div with an onClick and cursor: pointer), the
  // outermost so marked (the cursor is inherited by its children).
  const pointer = (x) => !!x && getComputedStyle(x).cursor === 'pointer';
  const plain = [...el.querySelectorAll('div,span')].filter((x) => short(x) && THINK_LABEL.test(labelText(x)) && pointer(x) && !pointer(x.parentElement));
  for (const t of [...el.querySelectorAll('button,[role=button],[aria-expanded]'), ...plain]) {
    if (!short(t) || !THINK_LABEL.test(labelText(t)) || t.closest('pre')) continue;
    let b = null;
    const id = t.getAttribute('aria-controls');
    if (id) b = document.getElementById(id);
    for (let n = t.nextElementSibling; !b && n; n = n.nextElementSibling) if (!/^inline/.test(getComputedStyle(n).display || '')) b = n; // not a label beside it ("8s")
    if (!b && t.parentElement !== el) b = t.parentElement.nextElementSibling;
    if (!b || !el.contains(b) || b === el || b.contains(t)) continue;
    if (labelText(b).length >= labelText(el).length - labelText(t).length) continue; // the whole answer: not a thinking block
    const p = t.parentElement;
    let nodes = [t, b];
    if (p !== el && p.contains(b) && [...p.children].every((c) => c === t || c === b || short(c))) nodes = [p]; // a wrapper of toggle and block
    else if (p !== el && !p.contains(b) && p.nextElementSibling === b && [...p.children].every((c) => c === t || short(c))) nodes = [p, b]; // a header, then the block
    return {nodes, ...read(b, [t]), how: 'toggle'};
  }
  return null;
};
`

// answerView reads the last answer element (see answerViewJS).
func (d *driver) answerView(ctx context.Context) (answerView, error) {
	chrome := append(append([]string(nil), d.rs.chrome...), defaultChrome...) // the site's first: its selectors may name a button
	expr := strings.NewReplacer("__ANSWER__", js(d.site.Answer), "__CHROME__", js(chrome), "__THINKING__", js(d.site.Thinking)).Replace(answerViewJS)
	return chromedp.Run(ctx, chromedp.Evaluate[answerView]("(() => {"+helpers+"\nreturn "+expr+";\n})()"))
}

// pageThinking is the last answer's thinking block as the page shows
// it, as Markdown; "" when it has none or cannot be read.
func (d *driver) pageThinking(ctx context.Context) string {
	v, err := d.answerView(ctx)
	if err != nil {
		return ""
	}
	return thinkMarkdown(v)
}

// thinkMarkdown is a view's thinking block as Markdown (its text, when
// it is plain text).
func thinkMarkdown(v answerView) string {
	if v.ThinkText != "" {
		return v.ThinkText
	}
	if v.ThinkHTML == "" {
		return ""
	}
	md, err := htmlToMarkdown(v.ThinkHTML)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(md)
}
