// The code block every renderer emits, as the big chat sites draw it: a
// header with the language label and a Copy button, then the code. The
// chrome sits inside the answer on purpose: a reader of the answer's DOM
// must drop it (the page's own click handler copies the code).
export const codeBlockClass = 'code-block';

export function escapeHTML(s) {
  return s.replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
}

// codeBlockHTML is the block as HTML, for the string renderers.
export function codeBlockHTML(code, lang) {
  const l = escapeHTML(lang || '');
  return '<div class="code-block"><div class="code-header"><span class="code-lang">' + (l || 'text') +
    '</span><button type="button" class="copy-code" aria-label="Copy code">Copy</button></div><pre><code' +
    (l ? ' class="language-' + l + '"' : '') + '>' + escapeHTML(code) + '</code></pre></div>';
}
