// streamChat posts the user's text to the stand-in's bot (/api/chat) and
// calls onChunk with each piece of the answer as it arrives: the way a
// chat front end reads a streaming completion.
export async function streamChat(text, onChunk, signal) {
  const res = await fetch('/api/chat', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ text }),
    signal,
  });
  if (!res.ok || !res.body) throw new Error('the bot answered ' + res.status);
  const reader = res.body.getReader();
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
