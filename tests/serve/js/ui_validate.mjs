// Validates UI messages as the AI SDK does before it uses stored ones (safeValidateUIMessages,
// what an app calls on messages it loads): JSON {"messages": [...]} on stdin; prints
// {"success": true|false, "error": "..."}.
import { safeValidateUIMessages } from "ai";

const input = JSON.parse(await new Response(process.stdin).text());
const result = await safeValidateUIMessages({ messages: input.messages });
console.log(JSON.stringify({ success: result.success, error: result.success ? null : String(result.error) }));
