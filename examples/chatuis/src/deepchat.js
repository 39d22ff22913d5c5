// deep-chat, a web component (open shadow root), connected to the bot
// by its own Server-Sent Events client: `connect: {url, stream: true}`.
import 'deep-chat';

const el = document.createElement('deep-chat');
el.connect = { url: '/api/chat?sse=1', stream: true };
el.textInput = { placeholder: { text: 'Ask me anything' } };
el.chatStyle = { width: '100%', height: '90vh' };
document.getElementById('root').append(el);
