// A conversation with a served loop through @ag-ui/client 1.0.0's HttpAgent, over HTTP on
// loopback: each step is one runAgent call on the same agent (same thread).
//
// stdin: {"url", "threadId", "headers"? (sent with every request), "steps": [step, ...]} where a
// step is one of
//   {"say": text, "runId"?, "dropAfter"?: {"type", "count"}}  a new user message; with dropAfter
//       the response is cut (the connection aborted) right after the count-th frame of that
//       event type, as a dropped network would;
//   {"answer": {"status", "payload"?}, "runId"?}  the same response to every open interrupt
//       (agent.pendingInterrupts), sent as RunAgentInput.resume;
//   {"reconnect": true, "runId"}  the same run again with `Last-Event-ID` set to the last SSE id
//       the dropped response carried (HttpAgent has no reconnect of its own: a subclass adds the
//       header in requestInit, and the fetch it is given records the ids the SSE parser skips).
// stdout (last line): per step what the client saw (event types, outcome, interrupts, result,
// errors, the Last-Event-ID it sent), then the agent's messages and state.
import { HttpAgent } from "@ag-ui/client";

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => resolve(text));
}));

class ReconnectingAgent extends HttpAgent {
  lastEventId = null;
  sendLastEventId = false;

  requestInit(runInput) {
    const init = super.requestInit(runInput);
    if (this.sendLastEventId && this.lastEventId) {
      init.headers = { ...init.headers, "Last-Event-ID": this.lastEventId };
    }
    return init;
  }
}

let cut = null; // {type, count} for the step being run
const sentHeaders = [];

// A fetch that records each SSE frame's id (the client's parser ignores `id:` lines) and, when
// told to, ends the response after a given frame and aborts the connection.
async function recordingFetch(url, init) {
  sentHeaders.push(init.headers ?? {});
  const aborter = new AbortController();
  init.signal?.addEventListener("abort", () => aborter.abort());
  const response = await fetch(url, { ...init, signal: aborter.signal });
  if (!response.ok || !response.body) return response;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let buffer = "";
  let seen = 0;
  const body = new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) { controller.close(); return; }
      buffer += decoder.decode(value, { stream: true });
      const frames = buffer.split("\n\n");
      buffer = frames.pop();
      for (const frame of frames) {
        const id = frame.split("\n").find((line) => line.startsWith("id: "));
        if (id) agent.lastEventId = id.slice(4);
        controller.enqueue(encoder.encode(frame + "\n\n"));
        const data = frame.split("\n").find((line) => line.startsWith("data: "));
        if (cut && data && JSON.parse(data.slice(6)).type === cut.type && ++seen === cut.count) {
          controller.close();
          aborter.abort();
          await reader.cancel().catch(() => {});
          return;
        }
      }
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}

const agent = new ReconnectingAgent({
  url: input.url,
  threadId: input.threadId,
  headers: input.headers ?? {},
  fetch: recordingFetch,
});

const steps = [];
for (const step of input.steps) {
  const seen = { types: [], outcome: null, interrupts: null, result: null, error: null };
  const subscriber = {
    onEvent: ({ event }) => { seen.types.push(event.type); },
    onRunFinishedEvent: (params) => {
      seen.outcome = params.outcome;
      if (params.outcome === "interrupt") seen.interrupts = params.interrupts;
      if (params.outcome === "success") seen.result = params.result ?? null;
    },
    onRunErrorEvent: ({ event }) => { seen.error = { message: event.message, code: event.code ?? null }; },
  };
  cut = step.dropAfter ?? null;
  agent.sendLastEventId = Boolean(step.reconnect);
  const parameters = { runId: step.runId };
  if (step.say !== undefined) {
    agent.addMessage({ id: `user-${steps.length}`, role: "user", content: step.say });
  }
  if (step.answer !== undefined) {
    parameters.resume = agent.pendingInterrupts.map((interrupt) => ({
      interruptId: interrupt.id,
      ...step.answer,
    }));
  }
  try {
    await agent.runAgent(parameters, subscriber);
  } catch (error) {
    seen.failed = String(error?.message ?? error);
  }
  seen.sentLastEventId = sentHeaders.at(-1)?.["Last-Event-ID"] ?? null;
  seen.pendingInterrupts = agent.pendingInterrupts.map((interrupt) => interrupt.id);
  steps.push(seen);
}

console.log(JSON.stringify({ steps, messages: agent.messages, state: agent.state }));
