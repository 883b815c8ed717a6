"""A server written with the official Python SDK's MCPServer (mcp 2.x) that asks its client while
it serves a call: elicitation (`Elicit`), sampling (`Sample`), the client's roots (`ListRoots`),
and log messages (`ctx.info`). On 2026-07-28 the SDK asks through `input_required` results; on
older revisions through standalone requests mid-call. Offload's interop tests put it behind
Offload and check that the questions reach Offload's client intact and the answers come back.

Usage: python asking_server.py   (serves MCP on stdio)
"""

from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel

app = MCPServer("asking")


class Person(BaseModel):
    name: str


def ask_name() -> Elicit[Person]:
    return Elicit("What is your name?", Person)


def ask_model(text: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))], max_tokens=50)


def ask_roots() -> ListRoots:
    return ListRoots()


@app.tool()
def greet(person: Annotated[Person, Resolve(ask_name)]) -> str:
    """Ask the user for their name, then greet them."""
    return f"Hello, {person.name}!"


@app.tool()
def summarize(text: str, sampled: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Have the client's model summarize a text."""
    return f"summary: {sampled.content.text}"


@app.tool()
def roots(listed: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """The client's roots, one URI per line."""
    return "\n".join(str(r.uri) for r in listed.roots)


@app.tool()
async def work(ctx: Context) -> str:
    """Log a message while working."""
    await ctx.info("working on it")
    return "done"


if __name__ == "__main__":
    app.run()
