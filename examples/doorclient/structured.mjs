// Structured output through spoolgate's front door as the JavaScript
// world asks for it, with packages written by others: the official openai
// npm SDK's chat.completions.parse() with a zod schema (zodResponseFormat,
// the Node twin of the Python SDK's parse() with a pydantic model), and
// LangChain.js's ChatOpenAI.withStructuredOutput(). e2e/doors runs it
// against `spoolgate run`. DOOR_URL is the base URL (…/v1), DOOR_TOKEN the
// bearer token (from the environment); the one argument is a JSON list of
// calls {via: "sdk"|"langchain", model, content}. It prints one JSON list
// of {parsed} or {error: {status, code, message}}.
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

const Article = z.object({ title: z.string(), tags: z.array(z.string()) });
const client = new OpenAI({ baseURL: process.env.DOOR_URL, apiKey: process.env.DOOR_TOKEN, maxRetries: 0, timeout: 120000 });
const calls = JSON.parse(process.argv[2]);

async function viaSDK(c) {
  const r = await client.chat.completions.parse({
    model: c.model,
    messages: [{ role: 'user', content: c.content }],
    response_format: zodResponseFormat(Article, 'article'),
  });
  return r.choices[0].message.parsed;
}

async function viaLangChain(c) {
  const llm = new ChatOpenAI({ model: c.model, apiKey: process.env.DOOR_TOKEN, maxRetries: 0, timeout: 120000,
    configuration: { baseURL: process.env.DOOR_URL } });
  return await llm.withStructuredOutput(Article, { name: 'article', method: 'jsonSchema' }).invoke(c.content);
}

const out = [];
for (const c of calls) {
  try {
    out.push({ parsed: await (c.via === 'langchain' ? viaLangChain(c) : viaSDK(c)) });
  } catch (e) {
    out.push({ error: { status: e.status ?? e.lc_error_code ?? 0, code: e.code ?? null, message: String(e.message) } });
  }
}
console.log(JSON.stringify(out));
