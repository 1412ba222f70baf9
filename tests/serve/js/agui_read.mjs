// Reads AG-UI SSE bytes the way @ag-ui/client 1.0.0 reads a server's response: an HttpAgent
// whose fetch answers with the given bytes, so the client's own SSE parser, schema enforcement,
// event verifier (verifyEvents) and reducer (defaultApplyEvents) run on exactly what the encoder
// wrote. stdin: {"threadId", "runs": [{"sse", "runId", "resume"?}], "messages"?}; each run is
// one runAgent call on the same agent (the second answers the first's interrupts). stdout (last
// line): per run the event types, outcome, interrupts, result or error; then the messages and
// state the agent holds.
import { HttpAgent } from "@ag-ui/client";

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => resolve(text));
}));

let current = "";
const sent = [];
const agent = new HttpAgent({
  url: "http://agui.invalid/",
  threadId: input.threadId,
  initialMessages: input.messages ?? [],
  fetch: async (_url, init) => {
    sent.push(JSON.parse(init.body));
    return new Response(new TextEncoder().encode(current), {
      status: 200,
      headers: { "content-type": "text/event-stream" },
    });
  },
});

const runs = [];
for (const run of input.runs) {
  current = run.sse;
  const seen = { types: [], outcome: null, interrupts: null, result: null, error: null };
  const subscriber = {
    onEvent: ({ event }) => { seen.types.push(event.type); },
    onRunFinishedEvent: (params) => {
      seen.outcome = params.outcome;
      if (params.outcome === "interrupt") seen.interrupts = params.interrupts;
      if (params.outcome === "success") {
        seen.result = params.result ?? null;
        seen.pendingToolCallIds = params.pendingToolCallIds;
      }
    },
    onRunErrorEvent: ({ event }) => { seen.error = { message: event.message, code: event.code ?? null }; },
    onRunFailed: ({ error }) => { seen.failed = String(error?.message ?? error); },
  };
  try {
    await agent.runAgent({ runId: run.runId, resume: run.resume }, subscriber);
  } catch (error) {
    seen.failed = String(error?.message ?? error);
  }
  seen.pendingInterrupts = agent.pendingInterrupts.map((i) => i.id);
  runs.push(seen);
}

console.log(JSON.stringify({ runs, messages: agent.messages, state: agent.state, sent }));
