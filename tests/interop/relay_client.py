"""Everything else an upstream offers, through Offload, seen by the official Python SDK as the
client: server-everything's prompts, resources, templates, completions, returned resource links
and resource updates, compared with server-everything connected directly, and its task-only tool
(Offload runs the task; its elicitation reaches this client); and two copies of the conformance
upstream, whose identical resource URIs Offload must keep apart.

Usage: python relay_client.py OFFLOAD_BINARY EVERYTHING_INDEX CONFORMANCE_SERVER WORK_DIR
Prints "ok ..." lines; exits non-zero on the first mismatch.
"""

import asyncio
import base64
import json
import os
import re
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters, types

from checks import check

OFFLOAD, EVERYTHING, CONFORMANCE, WORK = sys.argv[1:5]

# server-everything's dynamic resources carry the time they were made.
TIME = re.compile(r"\d{1,2}:\d{2}:\d{2}( [AP]M)?")


def same(a, b):
    """Equal JSON, apart from times of day (also inside base64 blobs)."""
    def dump(x):
        value = x.model_dump(mode="json", exclude_none=True)
        for c in value.get("contents", []):
            if "blob" in c:
                c["blob"] = base64.b64decode(c["blob"]).decode("utf-8", "replace")
        return TIME.sub("TIME", json.dumps(value, sort_keys=True))
    return dump(a) == dump(b)


def contents_text(c):
    if isinstance(c, types.TextResourceContents):
        return c.text
    return c.blob


async def main():
    work = Path(WORK)
    data = work / "data"
    data.mkdir(exist_ok=True)
    config = work / "config.json"
    servers = {
        "everything": {"command": "node", "args": [EVERYTHING, "stdio"]},
        "conf": {"command": "node", "args": [CONFORMANCE]},
        "conf2": {"command": "node", "args": [CONFORMANCE]},
    }
    config.write_text(json.dumps({"roots": [str(data)], "tools": {"expose": "direct"}, "mcpServers": servers}))
    env = dict(os.environ, OFFLOAD_CONFIG=str(config), HOME=str(work),
               XDG_DATA_HOME=str(work / "share"), XDG_RUNTIME_DIR=str(work / "run"))

    async with Client(StdioServerParameters(command="node", args=[EVERYTHING, "stdio"]), mode="legacy") as direct:
        d_prompts = {p.name: p for p in (await direct.list_prompts()).prompts}
        d_args = await direct.get_prompt("args-prompt", {"city": "Paris", "state": "TX"})
        d_res_prompt = await direct.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "2"})
        d_complete = await direct.complete(types.PromptReference(name="completable-prompt"), {"name": "department", "value": "E"})
        d_resources = (await direct.list_resources()).resources
        d_reads = {r.uri: await direct.read_resource(r.uri) for r in d_resources}
        d_templates = (await direct.list_resource_templates()).resource_templates
        d_expanded = await direct.read_resource("demo://resource/dynamic/text/2")
        d_template_complete = await direct.complete(
            types.ResourceTemplateReference(uri="demo://resource/dynamic/text/{resourceId}"), {"name": "resourceId", "value": "1"})
        d_links = await direct.call_tool("get-resource-links", {"count": 4})
        d_link_reads = {c.uri: await direct.read_resource(c.uri) for c in d_links.content if c.type == "resource_link"}

    notices = []

    async def on_message(message):
        if isinstance(message, Exception):
            return
        notices.append(message)

    elicited = []
    sampled = []

    async def on_elicit(context, params):
        elicited.append(params)
        if getattr(params, "mode", None) == "url":
            return types.ElicitResult(action="accept")
        properties = params.requested_schema["properties"]
        if "interpretation" in properties:
            choice = properties["interpretation"]["oneOf"][0]["const"]
            return types.ElicitResult(action="accept", content={"interpretation": choice})
        return types.ElicitResult(action="decline")

    async def on_sample(context, params):
        sampled.append(params)
        return types.CreateMessageResult(role="assistant", model="test-model",
                                         content=types.TextContent(type="text", text="a sampled answer"))

    params = StdioServerParameters(command=OFFLOAD, args=["mcp", "--expose", "direct", "--mode", "embedded"], env=env)
    async with Client(params, mode="legacy", message_handler=on_message, elicitation_callback=on_elicit,
                      sampling_callback=on_sample, read_timeout_seconds=60) as offload:
        caps = offload.server_capabilities
        check(caps.prompts is not None and caps.prompts.list_changed, "Offload declares prompts (listChanged)")
        check(caps.resources.subscribe and caps.completions is not None, "Offload declares subscriptions and completions")

        prompts = {p.name: p for p in (await offload.list_prompts()).prompts}
        for name, p in d_prompts.items():
            ours = prompts.get(f"everything__{name}")
            check(ours is not None and ours.description == p.description and ours.arguments == p.arguments,
                  f"prompt everything__{name} listed with its description and arguments")
        check({"conf__test_simple_prompt", "conf2__test_simple_prompt"} <= set(prompts), "each server's prompts under its own prefix")

        r = await offload.get_prompt("everything__args-prompt", {"city": "Paris", "state": "TX"})
        check(same(r, d_args), "prompts/get routed with its arguments: the same messages as directly")
        r = await offload.get_prompt("everything__resource-prompt", {"resourceType": "Text", "resourceId": "2"})
        check(any(m.content.type == "resource" for m in r.messages) and same(r, d_res_prompt),
              "a prompt's embedded resource passes through")
        r = await offload.get_prompt("conf2__test_prompt_with_arguments", {"arg1": "a1", "arg2": "b2"})
        check("arg1='a1', arg2='b2'" in r.messages[0].content.text, "the same prompt of a second server goes to that server")

        r = await offload.complete(types.PromptReference(name="everything__completable-prompt"), {"name": "department", "value": "E"})
        check(r.completion.values == d_complete.completion.values and r.completion.values,
              f"completion of a prompt argument routed: {r.completion.values}")

        # A stored response beside the upstreams' resources.
        r = await offload.call_tool("call_tool_and_store", {"server": "everything", "tool_name": "echo",
                                                             "tool_args": {"message": "keep me"}, "description": "echo"})
        check(not r.is_error, "a response stored")
        listed = {r.uri: r for r in (await offload.list_resources()).resources}
        stored = [u for u in listed if u.startswith("file://")]
        check(len(stored) == 1, f"the stored response is listed ({stored})")
        for res in d_resources:
            ours = listed.get(res.uri)
            check(ours is not None and ours.name == res.name and ours.mime_type == res.mime_type,
                  f"{res.uri} listed under its own URI")
            check(same(await offload.read_resource(res.uri), d_reads[res.uri]), f"{res.uri} reads the same as directly")
        rewritten = [u for u in listed if u.startswith("offload-upstream://")]
        check("test://static-text" not in listed and len([u for u in rewritten if "static-text" in u]) == 2,
              f"a URI two servers offer is listed once per server, rewritten: {sorted(rewritten)}")
        for server in ("conf", "conf2"):
            uri = next(u for u in rewritten if u.startswith(f"offload-upstream://{server}/") and "static-text" in u)
            r = await offload.read_resource(uri)
            check(r.contents[0].uri == uri and r.contents[0].text.startswith("This is the content"),
                  f"a rewritten URI reads from {server}, under the URI asked for")

        templates = (await offload.list_resource_templates()).resource_templates
        for t in d_templates:
            check(any(o.uri_template == t.uri_template and o.name == t.name for o in templates), f"template {t.uri_template} listed")
        check(sum(t.uri_template == "test://template/{id}/data" for t in templates) == 1,
              "a template two servers offer is listed once")
        check(same(await offload.read_resource("demo://resource/dynamic/text/2"), d_expanded),
              "a template's expansion reads the same as directly")
        r = await offload.read_resource("test://template/7/data")
        check('"id":"7"' in r.contents[0].text, "a template of another server is read from that server")
        r = await offload.complete(types.ResourceTemplateReference(uri="demo://resource/dynamic/text/{resourceId}"),
                                   {"name": "resourceId", "value": "1"})
        check(r.completion.values == d_template_complete.completion.values,
              f"completion of a template variable routed: {r.completion.values}")

        r = await offload.call_tool("everything__get-resource-links", {"count": 4})
        links = [c for c in r.content if c.type == "resource_link"]
        check([c.uri for c in links] == list(d_link_reads), "resource links pass through")
        for link in links:
            r = await offload.read_resource(link.uri)
            check(same(r, d_link_reads[link.uri]) and contents_text(r.contents[0]),
                  f"a returned link is readable through Offload: {link.uri}")

        try:
            await offload.read_resource("test://nonexistent-resource")
            check(False, "an unknown URI is refused")
        except Exception as e:  # noqa: BLE001 - the SDK raises its own error type
            check("not found" in str(e).lower(), f"an unknown URI is refused: {e}")

        # Updates of subscribed resources come back under the URI subscribed to.
        watched = "demo://resource/static/document/architecture.md"
        await offload.subscribe_resource(watched)
        conf_uri = next(u for u in rewritten if u.startswith("offload-upstream://conf2/") and "static-text" in u)
        await offload.subscribe_resource(conf_uri)
        await offload.call_tool("everything__toggle-subscriber-updates", {})

        def updated(uri):
            return any(isinstance(n, types.ResourceUpdatedNotification) and n.params.uri == uri for n in notices)

        with anyio.fail_after(15):
            while not (updated(watched) and updated(conf_uri)):
                await anyio.sleep(0.1)
        check(True, "resources/updated relayed for both subscriptions, under the URIs subscribed to")
        check(not updated("test://static-text"), "no update under the upstream's own (colliding) URI")
        await offload.unsubscribe_resource(watched)
        await offload.call_tool("everything__toggle-subscriber-updates", {})

        # A tool that runs only as a task: Offload makes the task, relays its question and its
        # status messages (as progress), and answers with its result.
        statuses = []

        async def on_progress(progress, total, message):
            statuses.append(message)

        r = await offload.call_tool("everything__simulate-research-query", {"topic": "python", "ambiguous": True},
                                    progress_callback=on_progress)
        report = r.content[0].text
        check(not r.is_error and "# Research Report: python (programming)" in report,
              "a task-only tool is called as a task; its elicitation was answered by this client")
        check(len(elicited) == 1 and "multiple interpretations" in elicited[0].message,
              "the task's elicitation reached the client intact")
        check(len(statuses) >= 2 and any(m and "interpretation" in m for m in statuses),
              f"the task's status messages arrive as progress: {statuses}")

        # server-everything asks this client while its tools run: sampling, a form and a URL
        # elicitation reach the callbacks as the server sent them; its roots are Offload's.
        r = await offload.call_tool("everything__trigger-sampling-request", {"prompt": "tides", "maxTokens": 30})
        check(not r.is_error and "a sampled answer" in r.content[0].text, f"sampling answered: {r.content[0].text[:200]}")
        s = sampled[-1]
        check(s.messages[0].content.text.endswith("context: tides") and s.max_tokens == 30
              # rmcp holds a temperature as a 32-bit float: 0.7 arrives as 0.699999988...
              and s.system_prompt == "You are a helpful test server." and abs(s.temperature - 0.7) < 1e-6,
              "server-everything's sampling request reached the client intact")
        before = len(elicited)
        r = await offload.call_tool("everything__trigger-elicitation-request", {})
        form = elicited[before]
        check(not r.is_error and form.message == "Please provide inputs for the following fields:"
              and "untitledMultipleSelectEnum" in form.requested_schema["properties"],
              "server-everything's form elicitation reached the client intact")
        check("decline" in r.content[0].text.lower(), f"and the client's answer reached it: {r.content[0].text[:120]}")
        r = await offload.call_tool("everything__trigger-url-elicitation",
                                    {"url": "https://example.org/consent", "message": "Open it"})
        url = elicited[-1]
        check(not r.is_error and getattr(url, "mode", None) == "url" and url.url == "https://example.org/consent"
              and url.message == "Open it", "a URL-mode elicitation reached the client intact")
        check("completed the URL elicitation" in r.content[0].text, "and the client's answer reached it")
        r = await offload.call_tool("everything__get-roots-list", {})
        check(not r.is_error and data.resolve().as_uri() in r.content[0].text,
              f"server-everything sees Offload's roots: {r.content[0].text[:200]}")

        # MCP Apps: a tool's `_meta.ui` and its `ui://` resource pass through.
        tools = {t.name: t for t in (await offload.list_tools()).tools}
        app_tool = tools["conf__test_app_tool"]
        check((app_tool.meta or {}).get("ui") == {"resourceUri": "ui://widget/greeting.html"},
              f"a tool's _meta.ui passes through: {app_tool.meta}")
        r = await offload.read_resource("ui://widget/greeting.html")
        check(r.contents[0].mime_type == "text/html;profile=mcp-app" and "Hello from an MCP App" in r.contents[0].text
              and (r.contents[0].meta or {}).get("ui") == {"prefersBorder": True},
              "its ui:// resource reads through Offload with its MIME type and _meta")

        # A server added to the configuration: the prompts clients see change.
        before = sum(isinstance(n, types.PromptListChangedNotification) for n in notices)
        servers["conf3"] = {"command": "node", "args": [CONFORMANCE]}
        config.write_text(json.dumps({"roots": [str(data)], "tools": {"expose": "direct"}, "mcpServers": servers}))
        with anyio.fail_after(15):
            while sum(isinstance(n, types.PromptListChangedNotification) for n in notices) == before:
                await anyio.sleep(0.1)
        prompts = {p.name for p in (await offload.list_prompts()).prompts}
        check("conf3__test_simple_prompt" in prompts, "prompts/list_changed sent when a server is added; its prompts listed")


if __name__ == "__main__":
    asyncio.run(main())
