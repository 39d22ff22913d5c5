// streamChat posts the user's text to the stand-in's bot (/api/chat) and
// calls onChunk with each piece of the answer as it arrives: the way a
// chat front end reads a streaming completion.
export async function streamChat(text, onChunk, signal) {
  const reader = await ask('/api/chat', text, signal);
  const dec = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const s = dec.decode(value, { stream: true });
    if (s) onChunk(s);
  }
  const tail = dec.decode();
  if (tail) onChunk(tail);
}

// streamReasoning posts the user's text to the bot's reasoning stream
// (/api/chat?sse=openai: OpenAI-style chunks, the thinking first as
// choices[0].delta.reasoning_content, then the answer as
// choices[0].delta.content) and calls onDelta(kind, piece) with kind
// 'reasoning' or 'content' for each: the way a DeepSeek client reads it.
export async function streamReasoning(text, onDelta, signal) {
  const reader = await ask('/api/chat?sse=openai', text, signal);
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = ev.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      if (!data || data === '[DONE]') continue;
      const delta = (JSON.parse(data).choices || [{}])[0].delta || {};
      if (delta.reasoning_content) onDelta('reasoning', delta.reasoning_content);
      if (delta.content) onDelta('content', delta.content);
    }
  }
}

// ask posts the user's text to the bot and returns the reader of its
// streaming answer.
async function ask(url, text, signal) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ text }),
    signal,
  });
  if (!res.ok || !res.body) throw new Error('the bot answered ' + res.status);
  return res.body.getReader();
}
