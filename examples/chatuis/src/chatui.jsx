// Alibaba's ChatUI (@chatui/core): the composer's textarea, the answer
// streamed into a text bubble with updateMsg, its typing bubble
// (isTyping) until the first piece arrives.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import Chat, { Bubble, useMessages } from '@chatui/core';
import '@chatui/core/dist/index.css';
import { streamChat } from './stream.js';

function App() {
  const { messages, appendMsg, updateMsg } = useMessages([]);
  const [typing, setTyping] = useState(false);
  const onSend = (type, val) => {
    if (type !== 'text' || !val.trim()) return;
    appendMsg({ type: 'text', content: { text: val }, position: 'right' });
    setTyping(true);
    let id = null;
    let text = '';
    streamChat(val, (c) => {
      text += c;
      if (id === null) {
        setTyping(false);
        id = appendMsg({ type: 'text', content: { text }, position: 'left' });
      } else {
        updateMsg(id, { type: 'text', content: { text }, position: 'left' });
      }
    }).finally(() => setTyping(false));
  };
  const renderMessageContent = (msg) => <Bubble content={msg.content.text} />;
  return (
    <div style={{ height: '90vh' }}>
      <Chat
        navbar={{ title: 'Bot' }}
        messages={messages}
        isTyping={typing}
        renderMessageContent={renderMessageContent}
        onSend={onSend}
        placeholder="Type a message"
        locale="en-US"
      />
    </div>
  );
}
createRoot(document.getElementById('root')).render(<App />);
