"""An OTLP/HTTP JSON trace receiver that holds what it is sent to OTLP's own schema.

Usage: python otlp_receiver.py PORT OUT   (POST /v1/traces; prints "listening")
Each request body is parsed strictly as an `ExportTraceServiceRequest` with the official
`opentelemetry-proto` classes (an unknown or mistyped field is refused with 400, as a collector
would); accepted bodies are appended to OUT, one JSON document per line.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

port, out = int(sys.argv[1]), sys.argv[2]


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        ok = self.path == "/v1/traces" and self.headers.get("content-type", "").startswith(
            "application/json"
        )
        try:
            json_format.Parse(body, ExportTraceServiceRequest())
        except Exception as e:  # noqa: BLE001 - every refusal is the sender's fault here
            print(f"refused: {e}", file=sys.stderr, flush=True)
            ok = False
        if ok:
            with open(out, "a") as f:
                f.write(json.dumps(json.loads(body)) + "\n")
        self.send_response(200 if ok else 400)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", port), Receiver)
print("listening", flush=True)
server.serve_forever()
