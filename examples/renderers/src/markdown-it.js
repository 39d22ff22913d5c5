// markdown-it (CommonMark + GFM tables and strikethrough), re-rendering the
// whole answer on every delta as streaming chat pages do.
import MarkdownIt from 'markdown-it';
import { codeBlockHTML } from './codeblock.js';

const md = new MarkdownIt({ html: false, linkify: false });
md.renderer.rules.fence = (tokens, idx) => {
  const t = tokens[idx];
  return codeBlockHTML(t.content, t.info.trim().split(/\s+/)[0]);
};

window.chatRenderers = window.chatRenderers || {};
window.chatRenderers['markdown-it'] = {
  render(el, src) { el.innerHTML = md.render(src); },
};
