// A conversation with a served loop through the AI SDK's own chat (ai 7.0.173): AbstractChat
// with the DefaultChatTransport, as useChat drives it in a page (no React: a plain ChatState),
// and `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses`, so an
// approval answered with addToolApprovalResponse is sent back by the chat itself.
//
// stdin: {"url" (the /api/chat endpoint), "chatId", "headers"? (sent with every request, as a
// page's transport sends its Authorization), "steps": [step, ...]}, a step one of
//   {"say": text, "files"?: [FileUIPart], "dropAfter"?: chunkType}  sendMessage (with the files
//       attached, as a page's file input gives them); with dropAfter the response is cut
//       right after the first chunk of that type, as a browser sees a dropped network
//       (a TypeError "network error": the chat keeps its state to resume);
//   {"answer": true|false, "reason"?, "dropAfter"?}  addToolApprovalResponse for the open
//       approval request; the chat resends by itself (cut as for "say" with dropAfter), and
//       the step waits for that response to finish;
//   {"resume": true}  chat.resumeStream(): GET {url}/{chatId}/stream (reconnectToStream);
//   {"regenerate": true}  chat.regenerate(): the last answer again (trigger regenerate-message);
//   {"reload": true}  a page reloaded: GET {url}/{chatId}/messages, and a new chat from them.
// stdout (last line): {"steps": [{status, error, finishes}], "requests": [{method, path, body,
// status}], "messages": the chat's UIMessages at the end}.
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
} from "ai";

const input = JSON.parse(await new Response(process.stdin).text());

class PlainState {
  status = "ready";
  error = undefined;
  messages = [];
  pushMessage = (message) => { this.messages = [...this.messages, message]; };
  popMessage = () => { this.messages = this.messages.slice(0, -1); };
  replaceMessage = (index, message) => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = (thing) => structuredClone(thing);
}

class Chat extends AbstractChat {}

const requests = [];
let dropAfter = null; // the chunk type after which the next response is cut

// The browser's fetch as the transport uses it, recording each request; told to, it cuts a
// response after a chunk of a given type (and closes the connection).
async function recordingFetch(url, init) {
  const path = new URL(url).pathname;
  const body = init.body ? JSON.parse(init.body) : null;
  const response = await fetch(url, init);
  const request = { method: init.method ?? "GET", path, body, status: response.status };
  requests.push(request);
  const cutAt = dropAfter;
  dropAfter = null;
  if (cutAt == null || !response.body) return response;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let text = ""; // what arrived, decoded
  let sent = 0; // how much of it the client was given
  const cut = new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) { controller.close(); return; }
      text += decoder.decode(value, { stream: true });
      const at = text.indexOf(`"type":"${cutAt}"`);
      const end = at === -1 ? -1 : text.indexOf("\n\n", at);
      if (end === -1) {
        controller.enqueue(encoder.encode(text.slice(sent)));
        sent = text.length;
        return;
      }
      controller.enqueue(encoder.encode(text.slice(sent, end + 2)));
      request.cut = cutAt;
      await reader.cancel();
      controller.error(new TypeError("network error"));
    },
  });
  return new Response(cut, { status: response.status, headers: response.headers });
}

const finishes = [];
let finished = null; // resolves on the next onFinish

// A chat as a page makes one, with the messages it starts from (a reloaded page's).
function newChat(messages) {
  const state = new PlainState();
  state.messages = messages;
  return new Chat({
    id: input.chatId,
    state,
    transport: new DefaultChatTransport({
      api: input.url,
      fetch: recordingFetch,
      headers: input.headers ?? {},
    }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onFinish: (event) => {
      finishes.push({
        finishReason: event.finishReason ?? null,
        isError: event.isError,
        isDisconnect: event.isDisconnect,
        isAbort: event.isAbort,
      });
      finished?.();
    },
  });
}

let chat = newChat([]);

function nextFinish() {
  return new Promise((resolve) => { finished = resolve; });
}

async function settle() {
  // the chat's own request (and any automatic follow-up) has ended
  while (chat.status === "submitted" || chat.status === "streaming" || chat.activeResponse) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function openApproval() {
  for (const message of chat.messages) {
    for (const part of message.parts) {
      if (part.state === "approval-requested") return part.approval.id;
    }
  }
  throw new Error("no approval request is open");
}

const steps = [];
for (const step of input.steps) {
  const before = finishes.length;
  if (step.say !== undefined) {
    dropAfter = step.dropAfter ?? null;
    await chat.sendMessage(step.files ? { text: step.say, files: step.files } : { text: step.say });
  } else if (step.answer !== undefined) {
    dropAfter = step.dropAfter ?? null;
    const done = nextFinish();
    await chat.addToolApprovalResponse({ id: openApproval(), approved: step.answer, reason: step.reason });
    await done;
  } else if (step.resume) {
    await chat.resumeStream();
  } else if (step.regenerate) {
    await chat.regenerate();
  } else if (step.reload) {
    const response = await recordingFetch(`${input.url}/${input.chatId}/messages`, { headers: input.headers ?? {} });
    chat = newChat(await response.json());
  }
  await settle();
  steps.push({
    status: chat.status,
    error: chat.error ? String(chat.error.message ?? chat.error) : null,
    finishes: finishes.slice(before),
  });
}
console.log(JSON.stringify({ steps, requests, messages: chat.messages }));
