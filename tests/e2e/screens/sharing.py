"""The Sharing screen: serving over HTTP and access tokens."""

import asyncio
import json

from harness import assert_inside, contrast, free_port, http_echo


def serve_and_tokens(run):
    """Sharing: serve over HTTP from the app, make a token (shown once, with each client's entry),
    a real HTTP client uses the entry's URL and token; revoked, it is refused."""
    config, log, wd = run.config, run.log, run.wd
    wd.click("[data-testid=nav-sharing]")
    wd.wait_text("[data-testid=serve-off]", "Not serving")
    share_port = free_port()
    wd.clear("[data-testid=serve-address]")
    wd.type("[data-testid=serve-address]", f"127.0.0.1:{share_port}")
    wd.click("[data-testid=serve-http]")
    wd.wait_text("[data-testid=serve-url]", f"http://127.0.0.1:{share_port}/mcp")
    assert json.loads(config.read_text())["http"]["listen"] == f"127.0.0.1:{share_port}"
    wd.type("[data-testid=token-name]", "e2e-agent")
    create = assert_inside(wd, "[data-testid=token-create]", "Create token")
    assert "0, 0, 0, 0" not in create["background"] and contrast(create["color"], create["background"]) >= 4.5, create
    wd.click("[data-testid=token-create]")
    token = wd.text("[data-testid=token-value]").strip()
    assert token.startswith("offload_") and len(token) > 40, token
    claude_code = wd.text("[data-testid=token-snippet]")
    url = f"http://127.0.0.1:{share_port}/mcp"
    assert f"claude mcp add --transport http offload {url}" in claude_code and token in claude_code, claude_code
    assert_inside(wd, "[data-testid=token-value]", "the new token")
    wd.screenshot("sharing-token.png")
    assert asyncio.run(http_echo(url, token, "over the app's HTTP")) == "over the app's HTTP"
    wd.click("[data-testid=token-done]")
    wd.gone("[data-testid=token-value]")
    assert token not in wd.s("GET", "/source") and token not in log.read_text(), "the token is shown once"
    wd.click("[data-testid=token-revoke-e2e-agent]")
    wd.click("[data-testid=token-revoke-yes]")
    wd.find("[data-testid=no-tokens]")
    try:
        asyncio.run(http_echo(url, token, "after revoking"))
        raise AssertionError("a revoked token still works")
    except AssertionError:
        raise
    except BaseException as e:  # the SDK's HTTP error (401), possibly in an exception group
        assert "401" in repr(e) or "Unauthorized" in repr(e) or isinstance(e, BaseExceptionGroup), repr(e)
    wd.click("[data-testid=serve-http]")
    wd.wait_text("[data-testid=serve-off]", "Not serving")
    assert "http" not in json.loads(config.read_text()), config.read_text()
    print("served over HTTP from the app; a token made there works with the Python SDK, and is refused once revoked")
