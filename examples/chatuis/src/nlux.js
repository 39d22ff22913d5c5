// nlux (vanilla @nlux/core) with its Luna theme and a streaming adapter.
import { createAiChat } from '@nlux/core';
import '@nlux/themes/luna.css';
import { streamChat } from './stream.js';

const chat = createAiChat()
  .withAdapter({
    streamText: (message, observer) => {
      streamChat(message, (c) => observer.next(c)).then(() => observer.complete(), (e) => observer.error(e));
    },
  })
  .withDisplayOptions({ height: '90vh', width: '100%' })
  .withComposerOptions({ placeholder: 'Ask me anything' })
  .withConversationOptions({ conversationLayout: 'bubbles' })
  .withPersonaOptions({ assistant: { name: 'Bot', tagline: 'A streaming stand-in', avatar: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=' } });
chat.mount(document.getElementById('root'));
