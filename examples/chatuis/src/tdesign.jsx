// TDesign's AI chat (@tdesign-react/chat, Tencent) as its DeepSeek
// example draws a reasoning answer: a ChatBot whose chatServiceConfig
// reads the OpenAI-style stream, each reasoning_content delta a
// `thinking` part (its collapsible ChatThinking block, "思考中..." while
// it streams) and each content delta a `markdown` part, in the same
// assistant message; the sender's stop button from the send to the
// stream's end; the message's action bar (copy, good, bad, replay) once
// the answer is complete. The page is TDesign's web components (open
// shadow roots) in React.
import React from 'react';
import { createRoot } from 'react-dom/client';
import { ChatBot } from '@tdesign-react/chat';

const chatServiceConfig = {
  endpoint: '/api/chat?sse=openai',
  stream: true,
  onRequest: (params) => ({
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ text: params.prompt }),
  }),
  onMessage: (chunk) => {
    let data = chunk.data;
    if (typeof data === 'string') {
      if (data === '[DONE]') return null;
      try { data = JSON.parse(data); } catch { return null; }
    }
    const delta = ((data && data.choices) || [{}])[0].delta || {};
    if (delta.reasoning_content) return { type: 'thinking', status: 'streaming', data: { title: '思考中...', text: delta.reasoning_content } };
    if (delta.content) return { type: 'markdown', data: delta.content };
    return null;
  },
};

function App() {
  return (
    <div style={{ height: '100vh' }}>
      <ChatBot
        chatServiceConfig={chatServiceConfig}
        senderProps={{ placeholder: '有问题，尽管问' }}
        messageProps={{ assistant: { actions: ['copy', 'good', 'bad', 'replay'] } }}
      />
    </div>
  );
}
createRoot(document.getElementById('root')).render(<App />);
