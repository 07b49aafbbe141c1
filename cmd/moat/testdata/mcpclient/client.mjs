// The official TypeScript MCP SDK's client against moat mcp, as a switching
// user's client would drive it. cmd/moat's TestMCP (the tsclient command of
// testscripts/mcp/mcp_typescript.txtar) runs it:
//
//   node client.mjs stdio MOAT_BINARY ARGS...   (moat mcp over stdio)
//   node client.mjs http URL TOKEN              (moat mcp --listen)
//
// It prints one line per step, "step: what it saw", for the script to check;
// a step that throws prints "step: error: MESSAGE" and the run goes on.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: process.env, stderr: "inherit" });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]), {
    requestInit: { headers: { Authorization: `Bearer ${rest[1]}` } },
  });
} else {
  console.error("usage: node client.mjs stdio MOAT ARGS... | http URL TOKEN");
  process.exit(2);
}

const client = new Client({ name: "moat-ts-test", version: "1" }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  console.log(`elicit: ${req.params.message.split("\n")[0]}`);
  return { action: "accept", content: { approve: true } };
});

async function step(name, f) {
  try {
    console.log(`${name}: ${await f()}`);
  } catch (e) {
    console.log(`${name}: error: ${String(e.message).replace(/\n/g, " ")}`);
  }
}

const text = (r) => (r.isError ? "isError " : "") + r.content.map((c) => c.text).join("").trimEnd().replace(/\n/g, "\\n");

await client.connect(transport);
await step("server", async () => `${client.getServerVersion().name} ${client.getServerCapabilities().tools ? "tools" : "no tools"}`);
await step("tools", async () => (await client.listTools()).tools.map((t) => t.name).sort().join(" "));
await step("read_file", async () => text(await client.callTool({ name: "read_file", arguments: { path: "a.txt" } })));
await step("escape", async () => text(await client.callTool({ name: "read_file", arguments: { path: "../secret.txt" } })));
// The SDK's client checks structuredContent against the tool's outputSchema.
await step("read_files", async () => JSON.stringify((await client.callTool({ name: "read_files", arguments: { paths: ["a.txt", ".env"] } })).structuredContent));
await step("stat", async () => {
  const { path, kind, size, modified } = (await client.callTool({ name: "stat", arguments: { path: "a.txt" } })).structuredContent;
  return `${path} ${kind} ${size} ${/^\d{4}-\d\d-\d\dT/.test(modified)}`;
});
await step("unknown", async () => text(await client.callTool({ name: "read_text_file", arguments: { path: "a.txt" } })));
await step("propose_write", async () => text(await client.callTool({ name: "propose_write", arguments: { path: "new.txt", content: "from typescript\n" } })));

if (mode === "http") {
  // What a client without the token, or a page elsewhere, gets.
  const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
  const hdrs = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
  await step("no_token", async () => (await fetch(rest[0], { method: "POST", headers: hdrs, body: init })).status);
  await step("foreign_origin", async () => (await fetch(rest[0], { method: "POST", headers: { ...hdrs, Authorization: `Bearer ${rest[1]}`, Origin: "https://evil.example" }, body: init })).status);
  await step("too_large", async () => (await fetch(rest[0], { method: "POST", headers: { ...hdrs, Authorization: `Bearer ${rest[1]}` }, body: "x".repeat(17 << 20) })).status);
}
await client.close();
console.log("closed");
