// react-chatbotify, embedded, its flow's message streamed with
// params.streamMessage as the bot's answer arrives.
import React from 'react';
import { createRoot } from 'react-dom/client';
import ChatBot from 'react-chatbotify';
import { streamChat } from './stream.js';

const flow = {
  start: { message: 'Hello! Ask me anything.', path: 'loop' },
  loop: {
    message: async (params) => {
      let text = '';
      await streamChat(params.userInput, (c) => { text += c; params.streamMessage(text); });
      await params.endStreamMessage('BOT');
    },
    path: 'loop',
  },
};
const settings = {
  general: { embedded: true, showFooter: false },
  chatHistory: { disabled: true },
  botBubble: { simulateStream: false },
  tooltip: { mode: 'NEVER' },
  notification: { disabled: true },
  audio: { disabled: true },
  voice: { disabled: true },
  fileAttachment: { disabled: true },
  emoji: { disabled: true },
  chatInput: { enabledPlaceholderText: 'Type your message...' },
};
createRoot(document.getElementById('root')).render(<ChatBot flow={flow} settings={settings} />);
