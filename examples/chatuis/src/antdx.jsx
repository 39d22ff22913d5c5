// Ant Design X (@ant-design/x) as its DeepSeek example draws a reasoning
// answer: a Bubble.List whose assistant bubble holds a Think block (its
// spinner and "Deep thinking..." while the thinking streams, "Complete
// thinking" after, collapsible) above the answer in XMarkdown; the
// Sender's loading state (its stop button) from the send to the stream's
// end; the Actions bar (copy, feedback) under a finished answer only.
import React from 'react';
import { createRoot } from 'react-dom/client';
import { Bubble, Sender, Think, Actions, XProvider } from '@ant-design/x';
import XMarkdown from '@ant-design/x-markdown';
import { streamReasoning } from './stream.js';

function Answer({ reasoning, text, status }) {
  const thinking = status === 'updating' && !text;
  return (
    <div className="answer">
      {reasoning ? (
        <Think title={thinking ? 'Deep thinking...' : 'Complete thinking'} loading={thinking} defaultExpanded>
          {reasoning}
        </Think>
      ) : null}
      {text ? <XMarkdown content={text} streaming={{ hasNextChunk: status === 'updating' }} /> : null}
    </div>
  );
}

const role = {
  ai: {
    placement: 'start',
    contentRender: (c, info) => <Answer {...c} status={info.status} />,
    footer: (c, info) => info.status === 'success' ? (
      <Actions items={[
        { key: 'copy', label: 'Copy', actionRender: () => <Actions.Copy text={c.text} /> },
        { key: 'retry', label: 'Retry', icon: '↻' },
      ]} />
    ) : null,
  },
  user: { placement: 'end' },
};

function App() {
  const [items, setItems] = React.useState([]);
  const [value, setValue] = React.useState('');
  const [busy, setBusy] = React.useState(false);
  const abort = React.useRef(null);
  const send = async (text) => {
    const id = Date.now();
    setValue('');
    setBusy(true);
    const ac = new AbortController();
    abort.current = ac;
    const ans = { reasoning: '', text: '' };
    const put = (status) => setItems((old) => [...old.filter((m) => m.key !== id + 1), { key: id + 1, role: 'ai', content: { ...ans }, status, loading: status === 'loading' }]);
    setItems((old) => [...old, { key: id, role: 'user', content: text }]);
    put('loading');
    let status = 'success';
    try {
      await streamReasoning(text, (kind, piece) => { ans[kind === 'reasoning' ? 'reasoning' : 'text'] += piece; put('updating'); }, ac.signal);
    } catch (e) {
      status = ac.signal.aborted ? 'abort' : 'error';
      if (status === 'error') ans.text += '\n\nRequest failed: ' + e.message;
    }
    put(status);
    setBusy(false);
  };
  return (
    <XProvider>
      <div style={{ display: 'flex', flexDirection: 'column', height: '100vh', padding: 16, boxSizing: 'border-box' }}>
        <Bubble.List style={{ flex: 1 }} role={role} items={items} />
        <Sender value={value} onChange={setValue} loading={busy} placeholder="Ask anything"
          onSubmit={(t) => { if (t.trim()) send(t); }} onCancel={() => abort.current && abort.current.abort()} />
      </div>
    </XProvider>
  );
}
createRoot(document.getElementById('root')).render(<App />);
