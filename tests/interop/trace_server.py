"""A streamable-HTTP MCP server (official Python SDK) that tells what trace context reached it.

Usage: python trace_server.py PORT   (serves http://127.0.0.1:PORT/mcp; prints "listening")
Its tool `trace_seen` answers, as JSON, the `traceparent` HTTP header of the request, the
`_meta.traceparent` of the call, and the trace and span ids OpenTelemetry's own W3C propagator
reads from the header (empty when it finds none valid). Offload's tracing test uses it.
"""

import json
import sys

import uvicorn
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from mcp.server.mcpserver import Context, MCPServer

port = int(sys.argv[1])
app = MCPServer("traced")


@app.tool()
def trace_seen(ctx: Context) -> str:
    """Tell the trace context this call arrived with."""
    request = ctx.request_context.request
    header = request.headers.get("traceparent", "") if request is not None else ""
    meta = ctx.request_context.meta
    meta_value = ""
    if meta is not None:
        meta_value = (meta.model_dump() if hasattr(meta, "model_dump") else dict(meta)).get(
            "traceparent", ""
        )
    extracted = TraceContextTextMapPropagator().extract(carrier={"traceparent": header})
    span = trace.get_current_span(extracted).get_span_context()
    return json.dumps(
        {
            "header": header,
            "meta": meta_value,
            "otel_trace_id": format(span.trace_id, "032x") if span.is_valid else "",
            "otel_span_id": format(span.span_id, "016x") if span.is_valid else "",
        }
    )


print("listening", flush=True)
uvicorn.run(app.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")
