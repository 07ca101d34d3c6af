"""An MCP server over streamable HTTP shaped like Home Assistant's, for the tests (the `mcp` SDK's server side).

    python home_mcp_server.py PORT TOKEN STATE_JSON

Tools as Home Assistant's Assist API names them (`HassTurnOn`, `HassTurnOff`,
`GetLiveContext`), answers shaped like its intent responses, a bearer token
checked on every request, and the devices' state written to STATE_JSON after
each change so a test can see what the server did.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

PORT, TOKEN, STATE = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
DEVICES = [
    {"names": "Kitchen Light", "domain": "light", "state": "on", "areas": "Kitchen", "id": "light.kitchen"},
    {"names": "Living Room Lamp", "domain": "light", "state": "off", "areas": "Living Room", "id": "light.lamp"},
    {"names": "Hall Thermostat", "domain": "climate", "state": "heat", "areas": "Hall", "id": "climate.hall",
     "attributes": {"current_temperature": 21, "temperature": 22}},
]


class StaticToken:
    async def verify_token(self, token: str) -> AccessToken | None:
        return AccessToken(token=token, client_id="test", scopes=[]) if token == TOKEN else None


url = f"http://127.0.0.1:{PORT}"
server = MCPServer("home", token_verifier=StaticToken(),
                   auth=AuthSettings(issuer_url=url, resource_server_url=f"{url}/mcp", validate_token_resource=False))


def save() -> None:
    STATE.write_text(json.dumps({d["id"]: d["state"] for d in DEVICES}))


def matching(name: str | None, area: str | None, domain: list[str] | None) -> list[dict]:
    def ok(d: dict) -> bool:
        return ((not name or name.lower() in d["names"].lower()) and (not area or area.lower() == d["areas"].lower())
                and (not domain or d["domain"] in domain))
    return [d for d in DEVICES if ok(d)]


def switch(to: str, name: str | None, area: str | None, domain: list[str] | None) -> str:
    hits = matching(name, area, domain)
    if not hits:
        return json.dumps({"speech": {}, "response_type": "error", "data": {"code": "no_valid_targets"}})
    for d in hits:
        d["state"] = to
    save()
    return json.dumps({"speech": {}, "response_type": "action_done", "data": {
        "targets": [], "success": [{"name": d["names"], "type": "entity", "id": d["id"]} for d in hits],
        "failed": []}})


@server.tool()
def HassTurnOn(name: str | None = None, area: str | None = None, domain: list[str] | None = None) -> str:
    """Turns on/opens/presses a device or entity."""
    return switch("on", name, area, domain)


@server.tool()
def HassTurnOff(name: str | None = None, area: str | None = None, domain: list[str] | None = None) -> str:
    """Turns off/closes a device or entity."""
    return switch("off", name, area, domain)


@server.tool()
def GetLiveContext() -> str:
    """Provides real-time information about the CURRENT state, value, or mode of devices, sensors and areas."""
    lines = ["Live Context: An overview of the areas and the devices in this smart home:"]
    for d in DEVICES:
        lines += [f"- names: {d['names']}", f"  domain: {d['domain']}", f"  state: '{d['state']}'",
                  f"  areas: {d['areas']}"]
        for k, v in d.get("attributes", {}).items():
            lines += ["  attributes:"] if k == next(iter(d["attributes"])) else []
            lines.append(f"    {k}: {v}")
    return json.dumps({"success": True, "result": "\n".join(lines) + "\n"})


if __name__ == "__main__":
    save()
    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=PORT, log_level="warning")
