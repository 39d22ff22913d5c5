// ProseMirror as chat sites set it up: Enter sends, Shift+Enter is a hard
// break, and the text sent is what the document holds (blocks and hard
// breaks as newlines).
import { EditorState } from 'prosemirror-state';
import { EditorView } from 'prosemirror-view';
import { schema } from 'prosemirror-schema-basic';
import { keymap } from 'prosemirror-keymap';
import { baseKeymap } from 'prosemirror-commands';
import { history, undo, redo } from 'prosemirror-history';

const br = schema.nodes.hard_break;

function hardBreak(state, dispatch) {
  if (dispatch) dispatch(state.tr.replaceSelectionWith(br.create()).scrollIntoView());
  return true;
}

window.mountEditor = function mountEditor(place, onEnter) {
  let view;
  const send = () => { onEnter(); return true; };
  view = new EditorView(place, {
    state: EditorState.create({
      schema,
      plugins: [
        history(),
        keymap({ 'Mod-z': undo, 'Shift-Mod-z': redo, 'Shift-Enter': hardBreak, Enter: send }),
        keymap(baseKeymap),
      ],
    }),
  });
  view.dom.classList.add('input');
  return {
    element: view.dom,
    getText: () => view.state.doc.textBetween(0, view.state.doc.content.size, '\n', (leaf) => (leaf.type === br ? '\n' : '')),
    clear: () => view.dispatch(view.state.tr.delete(0, view.state.doc.content.size)),
  };
};
