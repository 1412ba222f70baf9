// Reads a UI message stream as the AI SDK's client does: the SSE bytes on stdin (JSON
// {"sse": "...", "message": <UIMessage or null>}) are parsed with the SDK's own
// parseJsonEventStream + uiMessageChunkSchema (what DefaultChatTransport does with a response
// body), and the chunks are folded into a UIMessage by readUIMessageStream (what useChat does).
// Prints {"chunks": [...], "invalid": [...], "errors": [...], "messages": [...]}: every parsed
// chunk, the chunks the schema refused, the errors the reader reported, and the states of the
// message (the last is what the page shows).
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from "ai";

const input = JSON.parse(await new Response(process.stdin).text());
const bytes = new TextEncoder().encode(input.sse);
const body = new ReadableStream({
  start(controller) {
    // a few bytes at a time, as a network delivers them: frames split anywhere
    for (let at = 0; at < bytes.length; at += 7) controller.enqueue(bytes.slice(at, at + 7));
    controller.close();
  },
});

const chunks = [];
const invalid = [];
const parsed = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema }).pipeThrough(
  new TransformStream({
    transform(result, controller) {
      if (!result.success) {
        invalid.push({ raw: result.rawValue ?? null, error: String(result.error) });
        return;
      }
      chunks.push(result.value);
      controller.enqueue(result.value);
    },
  }),
);

const errors = [];
const messages = [];
for await (const message of readUIMessageStream({
  message: input.message ?? undefined,
  stream: parsed,
  onError: (error) => errors.push(String(error?.message ?? error)),
})) {
  messages.push(structuredClone(message));
}
console.log(JSON.stringify({ chunks, invalid, errors, messages }));
