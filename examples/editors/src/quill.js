// Quill (core, no toolbar): Enter sends, Shift+Enter starts a new line;
// the text sent is quill.getText() without the one newline Quill always
// keeps at the end.
import Quill from 'quill/core';

window.mountEditor = function mountEditor(place, onEnter) {
  const el = document.createElement('div');
  place.append(el);
  const quill = new Quill(el, {
    modules: {
      keyboard: {
        bindings: {
          send: { key: 'Enter', shiftKey: false, handler: () => { onEnter(); return false; } },
        },
      },
    },
  });
  quill.root.classList.add('input');
  return {
    element: quill.root,
    getText: () => quill.getText().replace(/\n$/, ''),
    clear: () => quill.setText(''),
  };
};
