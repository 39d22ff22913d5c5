// marked (GFM), re-rendering the whole answer on every delta.
import { Marked } from 'marked';
import { codeBlockHTML } from './codeblock.js';

const marked = new Marked({
  gfm: true,
  renderer: {
    code({ text, lang }) { return codeBlockHTML(text, (lang || '').trim().split(/\s+/)[0]); },
  },
});

window.chatRenderers = window.chatRenderers || {};
window.chatRenderers.marked = {
  render(el, src) { el.innerHTML = marked.parse(src); },
};
