package browser

import "encoding/json"

// js quotes v as a JavaScript literal.
func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// helpers is a prelude of small page functions shared by the expressions
// the driver evaluates. Selectors reach into open shadow roots:
//
//   - `host >>> inner` (any number of `>>>`): each part is looked up inside
//     the open shadow roots of the previous part's matches;
//   - a plain selector with no match in the page's light DOM is looked up
//     in every open shadow root of the page, in document order.
//
// qa returns {els, shadow, bad}: the matches; how many open shadow roots
// were searched (-1: the selector named them with >>>); and the syntax
// error of a selector the browser refused. A closed shadow root cannot be
// entered by any script and is not searched.
const helpers = `
let rootsCache = null;
const openRoots = () => {
  if (rootsCache) return rootsCache;
  const out = [];
  const walk = (r) => { for (const el of r.querySelectorAll('*')) if (el.shadowRoot) { out.push(el.shadowRoot); walk(el.shadowRoot); } };
  walk(document);
  return (rootsCache = out);
};
const qa = (sel) => {
  if (!sel) return {els: [], shadow: 0};
  try {
    const parts = sel.split('>>>').map((s) => s.trim());
    if (parts.length > 1) {
      let scopes = [document];
      for (let i = 0; ; i++) {
        const found = scopes.flatMap((s) => [...s.querySelectorAll(parts[i])]);
        if (i === parts.length - 1) return {els: found, shadow: -1};
        scopes = found.map((e) => e.shadowRoot).filter(Boolean);
      }
    }
    const light = [...document.querySelectorAll(sel)];
    if (light.length) return {els: light, shadow: 0};
    const rs = openRoots();
    return {els: rs.flatMap((r) => [...r.querySelectorAll(sel)]), shadow: rs.length};
  } catch (e) {
    return {els: [], shadow: 0, bad: String((e && e.message) || e)};
  }
};
const q = (s) => qa(s).els[0] || null;
const qlast = (s) => { const a = qa(s).els; return a.length ? a[a.length - 1] : null; };
const vis = (el) => !!el && !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length) && getComputedStyle(el).visibility !== 'hidden';
const visText = (el) => vis(el) ? (el.innerText || el.textContent || '').trim() : '';
const FIELD = Symbol.for('spoolgate.field');
` + editableJS

// editableJS finds the editable element behind a selector and reads what
// it holds the way the page would send it:
//
//   - textarea and input: their value;
//   - a plain contenteditable: innerText, what such pages send;
//   - an editor framework's root (ProseMirror, Lexical, Quill, Slate, or
//     any contenteditable whose lines are blocks): one line per block and
//     per <br>, where a <br> that ends its block is the editors' caret
//     placeholder and adds nothing. innerText is no check here: a correct
//     blank line between two <p> reads as several newlines.
const editableJS = `
const isField = (el) => el && (el.tagName === 'TEXTAREA' || el.tagName === 'INPUT' || el.isContentEditable);
const editable = (el) => {
  if (!el || isField(el)) return el;
  const inner = (r) => r.querySelector('textarea, input:not([type=hidden]), [contenteditable=""], [contenteditable=true], [contenteditable=plaintext-only]');
  return inner(el) || (el.shadowRoot && inner(el.shadowRoot)) || el;
};
const fieldKind = (el) => {
  if (!el) return 'none';
  if (el.tagName === 'TEXTAREA') return 'textarea';
  if (el.tagName === 'INPUT') return 'input';
  if (!el.isContentEditable) return 'none';
  if (el.closest('.ProseMirror')) return 'prosemirror';
  if (el.closest('[data-lexical-editor]')) return 'lexical';
  if (el.closest('.ql-editor')) return 'quill';
  if (el.closest('[data-slate-editor]')) return 'slate';
  return el.querySelector(':scope > p') ? 'blocks' : 'contenteditable';
};
const BLOCK = /^(P|DIV|LI|UL|OL|H[1-6]|PRE|BLOCKQUOTE|TABLE|TR|SECTION|ARTICLE|HEADER|FOOTER|FIGURE)$/;
const skipNode = (el) => el.tagName === 'IMG' || el.tagName === 'STYLE' || el.tagName === 'SCRIPT' || el.getAttribute('contenteditable') === 'false' || el.getAttribute('aria-hidden') === 'true';
const blockText = (root) => {
  const lines = [''];
  let needBreak = false;
  const endsBlock = (br) => {
    for (let n = br; n && n !== root; n = n.parentNode) {
      for (let s = n.nextSibling; s; s = s.nextSibling) {
        if (s.nodeType === 3 && s.data.length) return false;
        if (s.nodeType === 1 && !skipNode(s) && (s.tagName === 'BR' || s.textContent.length || s.querySelector('br'))) return false;
      }
      if (n.parentNode && n.parentNode.nodeType === 1 && BLOCK.test(n.parentNode.tagName)) return true;
    }
    return true;
  };
  const walk = (node) => {
    for (let c = node.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3) {
        if (!c.data) continue;
        if (needBreak) { lines.push(''); needBreak = false; }
        lines[lines.length - 1] += c.data;
        continue;
      }
      if (c.nodeType !== 1 || skipNode(c)) continue;
      if (c.tagName === 'BR') {
        if (needBreak) { lines.push(''); needBreak = false; }
        if (!endsBlock(c)) lines.push('');
        continue;
      }
      const block = BLOCK.test(c.tagName);
      if (block && (lines[lines.length - 1] !== '' || needBreak)) lines.push('');
      if (block) needBreak = false;
      walk(c);
      if (block) needBreak = true;
    }
  };
  walk(root);
  return lines.join('\n');
};
const fieldText = (el) => {
  switch (fieldKind(el)) {
    case 'none': return '';
    case 'textarea': case 'input': return el.value;
    case 'contenteditable': return el.innerText;
    default: return blockText(el);
  }
};
`
