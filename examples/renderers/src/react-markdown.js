// react-markdown with remark-gfm, rendered by React 19 into the answer
// element, as the React chat UIs do. flushSync makes each render land in
// the DOM before the page goes on (so "finished" is never shown over an
// older render).
import { createElement as h, Children } from 'react';
import { createRoot } from 'react-dom/client';
import { flushSync } from 'react-dom';
import Markdown from 'react-markdown';
import remarkGfm from 'remark-gfm';

function text(children) {
  let s = '';
  Children.forEach(children, (c) => { if (typeof c === 'string') s += c; });
  return s;
}

const components = {
  // A fenced block: <pre><code class="language-x">; draw the site's block.
  pre({ children }) {
    const code = Children.toArray(children)[0];
    const cls = (code && code.props && code.props.className) || '';
    const lang = (cls.match(/language-(\S+)/) || [])[1] || '';
    const body = text(code && code.props ? code.props.children : children).replace(/\n$/, '');
    return h('div', { className: 'code-block' },
      h('div', { className: 'code-header' },
        h('span', { className: 'code-lang' }, lang || 'text'),
        h('button', { type: 'button', className: 'copy-code', 'aria-label': 'Copy code' }, 'Copy')),
      h('pre', null, h('code', { className: lang ? 'language-' + lang : undefined }, body)));
  },
};

const roots = new WeakMap();

window.chatRenderers = window.chatRenderers || {};
window.chatRenderers['react-markdown'] = {
  render(el, src) {
    let root = roots.get(el);
    if (!root) { root = createRoot(el); roots.set(el, root); }
    flushSync(() => root.render(h(Markdown, { remarkPlugins: [remarkGfm], components }, src)));
  },
};
