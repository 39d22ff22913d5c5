// Lexical with its rich-text plugin: Enter sends, Shift+Enter inserts a
// line break (the plugin's own behaviour); the text sent is each block's
// text, blocks joined by newlines.
import { createEditor, $getRoot, $createParagraphNode, COMMAND_PRIORITY_HIGH, KEY_ENTER_COMMAND } from 'lexical';
import { registerRichText, HeadingNode, QuoteNode } from '@lexical/rich-text';
import { registerHistory, createEmptyHistoryState } from '@lexical/history';

window.mountEditor = function mountEditor(place, onEnter) {
  const el = document.createElement('div');
  el.className = 'input lexical';
  el.contentEditable = 'true';
  place.append(el);
  const editor = createEditor({ namespace: 'standin', nodes: [HeadingNode, QuoteNode], onError: (e) => { throw e; } });
  editor.setRootElement(el);
  registerRichText(editor);
  registerHistory(editor, createEmptyHistoryState(), 300);
  editor.registerCommand(KEY_ENTER_COMMAND, (ev) => {
    if (ev && ev.shiftKey) return false;
    if (ev) ev.preventDefault();
    onEnter();
    return true;
  }, COMMAND_PRIORITY_HIGH);
  editor.update(() => { const r = $getRoot(); if (r.getChildrenSize() === 0) r.append($createParagraphNode()); });
  return {
    element: el,
    getText: () => editor.getEditorState().read(() => $getRoot().getChildren().map((n) => n.getTextContent()).join('\n')),
    clear: () => editor.update(() => { const r = $getRoot(); r.clear(); r.append($createParagraphNode()); }),
  };
};
