"""20 MCP server: a project's memory as tools for Claude Desktop, Cursor and IDE agents.

The same server runs two ways here: connected in process (as a test would drive it) and as the
`sagewai mcp` command over stdio, the way an MCP client starts it. It remembers three things,
recalls them, forgets one (a dry run first), reverts the forget, and refuses a call that names
another project. Everything is scoped to the user and project the server was started for.

Run: python examples/20_mcp_server.py
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from _setup import example_folder
from mcp import Client, MCPError, StdioServerParameters

from sagewai import ContextEngine
from sagewai.integrations.mcp import build_mcp_server

STATEMENTS = ["I live in Oslo.", "I prefer green tea.", "I work at Initech."]


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    if result.is_error or not isinstance(result.structured_content, dict):
        raise SystemExit(f"{tool} failed: {result.content}")
    return result.structured_content


async def in_process(folder: str) -> None:
    engine = ContextEngine.local(folder, project_id="personal")
    server = build_mcp_server(engine, user_id="me")
    async with Client(server) as client:
        tools = await client.list_tools()
        print(f"tools: {[tool.name for tool in tools.tools]}")
        for text in STATEMENTS:
            stored = await call(client, "remember", text=text, session_id="chat-1")
            print(f"remembered: {[fact['content'] for fact in stored['stored']]}")
        found = await call(client, "recall", query="Where do I live?", top_k=1)
        oslo = found["results"][0]
        print(f"recall 'Where do I live?' -> {oslo['content']}")

        plan = await call(client, "forget", fact_id=oslo["id"], dry_run=True)
        print(f"dry run would forget: {[fact['content'] for fact in plan['facts']]}")
        done = await call(client, "forget", fact_id=oslo["id"])
        left = await call(client, "recall", query="Where do I live?", top_k=3)
        print(f"after forget, recall finds: {[r['content'] for r in left['results']]}")
        for change in done["changes"]:  # the record and the others of its message
            restored = await call(client, "revert", change_id=change["change_id"])
            print(f"revert {change['change_id'][:8]}...: {restored['fact']['content']!r} is back")

        try:
            await client.call_tool("recall", {"query": "salaries", "project": "payroll"})
        except MCPError as refused:
            print(f"project 'payroll' refused: MCP error {refused.code}: {refused.message}")


async def over_stdio(folder: str) -> None:
    command = ["-m", "sagewai", "mcp", "--store", folder, "--project", "personal", "--user", "me"]
    print(f"\nan MCP client starts: sagewai {' '.join(command[2:])}")
    config = {"mcpServers": {"memory": {"command": "sagewai", "args": command[2:]}}}
    print(f"claude_desktop_config.json: {json.dumps(config)}")
    async with Client(StdioServerParameters(command=sys.executable, args=command)) as client:
        found = await call(client, "recall", query="What do I drink?", top_k=1)
        print(f"over stdio, recall 'What do I drink?' -> {found['results'][0]['content']}")
        resource = await client.read_resource("sagewai://facts")
        listing = json.loads(getattr(resource.contents[0], "text", "{}"))
        print(f"resource sagewai://facts lists {len(listing['facts'])} facts of user 'me'")


async def main() -> None:
    with example_folder("20_mcp_server") as folder:
        await in_process(str(folder))
        await over_stdio(str(folder))


if __name__ == "__main__":
    asyncio.run(main())
