// assistant-ui's primitives (as its shadcn-style thread is built) over a
// LocalRuntime whose ChatModelAdapter streams the bot's answer.
import React from 'react';
import { createRoot } from 'react-dom/client';
import { AssistantRuntimeProvider, useLocalRuntime, ThreadPrimitive, ComposerPrimitive, MessagePrimitive, ActionBarPrimitive, ThreadListPrimitive } from '@assistant-ui/react';
import { streamChat } from './stream.js';
import './assistantui.css';

const adapter = {
  async *run({ messages, abortSignal }) {
    const last = messages[messages.length - 1];
    const text = last.content.filter((p) => p.type === 'text').map((p) => p.text).join('');
    const queue = [];
    let wake = null;
    let done = false;
    let failed = null;
    streamChat(text, (c) => { queue.push(c); if (wake) wake(); }, abortSignal)
      .catch((e) => { failed = e; })
      .finally(() => { done = true; if (wake) wake(); });
    let acc = '';
    for (;;) {
      while (queue.length) acc += queue.shift();
      yield { content: [{ type: 'text', text: acc }] };
      if (done) break;
      await new Promise((r) => { wake = r; });
      wake = null;
    }
    while (queue.length) acc += queue.shift();
    if (failed) throw failed;
    yield { content: [{ type: 'text', text: acc }] };
  },
};

const UserMessage = () => (
  <MessagePrimitive.Root className="aui-user-message"><MessagePrimitive.Content /></MessagePrimitive.Root>
);
const AssistantMessage = () => (
  <MessagePrimitive.Root className="aui-assistant-message">
    <MessagePrimitive.Content />
    <ActionBarPrimitive.Root hideWhenRunning autohide="never" className="aui-action-bar">
      <ActionBarPrimitive.Copy aria-label="Copy" title="Copy">Copy</ActionBarPrimitive.Copy>
    </ActionBarPrimitive.Root>
  </MessagePrimitive.Root>
);

function Thread() {
  return (
    <ThreadPrimitive.Root className="aui-thread">
      <ThreadListPrimitive.New className="aui-new" aria-label="New thread">New thread</ThreadListPrimitive.New>
      <ThreadPrimitive.Viewport className="aui-viewport">
        <ThreadPrimitive.Messages components={{ UserMessage, AssistantMessage }} />
      </ThreadPrimitive.Viewport>
      <ComposerPrimitive.Root className="aui-composer">
        <ComposerPrimitive.Input placeholder="Write a message..." className="aui-input" />
        <ThreadPrimitive.If running={false}>
          <ComposerPrimitive.Send aria-label="Send" className="aui-send">Send</ComposerPrimitive.Send>
        </ThreadPrimitive.If>
        <ThreadPrimitive.If running>
          <ComposerPrimitive.Cancel aria-label="Stop generating" className="aui-cancel">Stop</ComposerPrimitive.Cancel>
        </ThreadPrimitive.If>
      </ComposerPrimitive.Root>
    </ThreadPrimitive.Root>
  );
}

function App() {
  const runtime = useLocalRuntime(adapter);
  return <AssistantRuntimeProvider runtime={runtime}><Thread /></AssistantRuntimeProvider>;
}
createRoot(document.getElementById('root')).render(<App />);
