// An application written with the Vercel AI SDK (ai with @ai-sdk/openai), pointed at
// ctxgraph.
//
// It changes nothing but the base URL and the key (CTXGRAPH_BASE, CTXGRAPH_KEY) and prints one
// JSON object of what it observed: generateText running a two-step tool loop (find the order,
// then track it) to its final text, then streamText continuing the same conversation, with
// the X-Ctxgraph-* headers of every model call. The conversation is found by the hash of its
// first system and user messages: the AI SDK sends no thread key. integration/dropin_test.go
// runs it and checks what the provider behind ctxgraph received.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';

const openai = createOpenAI({ baseURL: process.env.CTXGRAPH_BASE + '/v1/openai', apiKey: process.env.CTXGRAPH_KEY });
// @ai-sdk/openai's default model speaks the Responses API (sending the items of earlier
// answers back by reference); chat() is chat completions. CTXGRAPH_VERCEL_API says which.
const model = process.env.CTXGRAPH_VERCEL_API === 'responses' ? openai('openai/gpt-4.1') : openai.chat('openai/gpt-4.1');
const system = 'You are the order desk of an online shop.';
const question = 'Find my latest order and tell me when it will be delivered.';

const tools = {
  search_orders: tool({
    description: "Search a customer's orders; answers each order's id and status.",
    inputSchema: z.object({ customer: z.string() }),
    execute: async ({ customer }) => ({ orders: [{ id: 'ord_7Q2X9', customer, status: 'shipped' }] }),
  }),
  track_order: tool({
    description: 'Track one order by its id; answers the carrier and the delivery date.',
    inputSchema: z.object({ order_id: z.string() }),
    execute: async ({ order_id }) => ({ order_id, carrier: 'DHL', eta: '2026-11-05' }),
  }),
};

function ctxgraphHeaders(headers) {
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([k]) => k.toLowerCase().startsWith('x-ctxgraph-')).map(([k, v]) => [k.toLowerCase(), v]));
}

// A failed call is said in one line (the SDK's error object runs to pages).
process.on('uncaughtException', (err) => {
  const status = err.statusCode ? ` (${err.statusCode} from ${err.url}: ${err.responseBody})` : '';
  console.error(`${err.name}: ${err.message}${status}`);
  process.exit(1);
});

// No retries: every request the provider sees is one this program made.
const generated = await generateText({ model, system, prompt: question, tools, stopWhen: stepCountIs(5), maxRetries: 0 });
const steps = generated.steps.map((s) => ({
  text: s.text,
  finishReason: s.finishReason,
  toolCalls: s.toolCalls.map((c) => ({ id: c.toolCallId, name: c.toolName, input: c.input })),
  toolResults: s.toolResults.map((r) => ({ id: r.toolCallId, name: r.toolName, output: r.output })),
  headers: ctxgraphHeaders(s.response.headers),
}));

// The chat goes on: the same first messages, the turn's messages as the SDK returned them,
// and a question that needs the id only the first tool's result held.
const streamed = streamText({
  model,
  system,
  tools,
  maxRetries: 0,
  messages: [
    { role: 'user', content: question },
    ...generated.response.messages,
    { role: 'user', content: 'I want to cancel it. Which order id should I quote?' },
  ],
});
let text = '';
for await (const delta of streamed.textStream) {
  text += delta;
}
const response = await streamed.response;

console.log(JSON.stringify({
  generate: { text: generated.text, steps, usage: generated.totalUsage },
  stream: { text, finishReason: await streamed.finishReason, usage: await streamed.usage, headers: ctxgraphHeaders(response.headers) },
}));
