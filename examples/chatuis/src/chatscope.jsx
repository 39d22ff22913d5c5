// chatscope's chat UI kit (React): MessageInput is a contenteditable, the
// answer streams into the last Message, a TypingIndicator while it does.
import React, { useState } from 'react';
import { createRoot } from 'react-dom/client';
import '@chatscope/chat-ui-kit-styles/dist/default/styles.min.css';
import { MainContainer, ChatContainer, MessageList, Message, MessageInput, TypingIndicator, ConversationHeader } from '@chatscope/chat-ui-kit-react';
import { streamChat } from './stream.js';

function App() {
  const [msgs, setMsgs] = useState([]);
  const [typing, setTyping] = useState(false);
  const onSend = (_html, text) => {
    const id = Date.now();
    setMsgs((m) => [...m, { id: id + 'u', dir: 'outgoing', text }, { id: id + 'a', dir: 'incoming', text: '' }]);
    setTyping(true);
    const grow = (c) => setMsgs((m) => m.map((x) => (x.id === id + 'a' ? { ...x, text: x.text + c } : x)));
    streamChat(text, grow).finally(() => setTyping(false));
  };
  const reset = () => setMsgs([]);
  return (
    <div style={{ height: '90vh' }}>
      <MainContainer>
        <ChatContainer>
          <ConversationHeader>
            <ConversationHeader.Content userName="Bot" info="A streaming stand-in" />
            <ConversationHeader.Actions>
              <button type="button" className="new-conversation" onClick={reset}>New conversation</button>
            </ConversationHeader.Actions>
          </ConversationHeader>
          <MessageList typingIndicator={typing ? <TypingIndicator content="Bot is typing" /> : null}>
            {msgs.map((m) => (
              <Message key={m.id} model={{ message: m.text, direction: m.dir, position: 'single', sender: m.dir === 'incoming' ? 'Bot' : 'You' }} />
            ))}
          </MessageList>
          <MessageInput placeholder="Type message here" attachButton={false} onSend={onSend} />
        </ChatContainer>
      </MainContainer>
    </div>
  );
}
createRoot(document.getElementById('root')).render(<App />);
