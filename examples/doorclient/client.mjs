// A client of spoolgate's front door written with the official openai npm
// SDK, as any Node tool would: cmd/spoolgate's door tests run it against
// `spoolgate run`. DOOR_URL is the base URL (…/v1), DOOR_TOKEN the bearer
// token (from the environment, never the command line); the one argument
// is a JSON list of calls {model, prompt, content, stream, key}. It prints
// one JSON list of {text, chunks} or {error: {status, code, param}}.
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.DOOR_URL, apiKey: process.env.DOOR_TOKEN, maxRetries: 0 });
const calls = JSON.parse(process.argv[2]);

async function call(c) {
  const messages = [];
  if (c.prompt) messages.push({ role: 'system', content: c.prompt });
  messages.push({ role: 'user', content: c.content });
  const options = c.key ? { headers: { 'Idempotency-Key': c.key } } : {};
  try {
    if (c.stream) {
      const stream = await client.chat.completions.create({ model: c.model, messages, stream: true }, options);
      let text = '';
      let chunks = 0;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        chunks++;
      }
      return { text, chunks };
    }
    const r = await client.chat.completions.create({ model: c.model, messages }, options);
    return { text: r.choices[0].message.content, id: r.id };
  } catch (e) {
    return { error: { status: e.status ?? 0, code: e.code ?? null, param: e.param ?? null, message: String(e.message) } };
  }
}

const out = [];
for (const c of calls) out.push(await call(c));
console.log(JSON.stringify(out));
