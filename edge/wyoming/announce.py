"""The zeroconf (mDNS) announcement Home Assistant discovers Wyoming services by: `_wyoming._tcp.local.`.

Home Assistant's Wyoming integration browses for this service type and
offers each instance it finds as a new device; the instance name is its
unique id, so it is kept stable per machine and port. The service is
announced on the address the server is bound to, or on every non-loopback
IPv4 address of the machine when it is bound to all of them (0.0.0.0).
"""
from __future__ import annotations

import ipaddress
import re
import socket

SERVICE_TYPE = "_wyoming._tcp.local."


def should_announce(host: str, mode: str) -> bool:
    """`mode` auto: only when other machines can reach the server (not bound to loopback); on; off."""
    if mode in ("on", "off"):
        return mode == "on"
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host not in ("localhost",)


def addresses(host: str) -> list[str]:
    """The IPv4 addresses to announce for a server bound to `host`."""
    if host not in ("0.0.0.0", ""):
        try:
            return [str(ipaddress.ip_address(host))]
        except ValueError:
            return [socket.gethostbyname(host)]
    import ifaddr

    found = [ip.ip for adapter in ifaddr.get_adapters() for ip in adapter.ips
             if isinstance(ip.ip, str) and not ipaddress.ip_address(ip.ip).is_loopback]
    return found or ["127.0.0.1"]


def instance_name(port: int) -> str:
    """A stable name per machine and port: Home Assistant keys the discovered device on it."""
    host = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname().split(".")[0]) or "venus-edge"
    return f"venus-edge-{host}-{port}"


class Announcement:
    """Registers the service on start, withdraws it on stop (so Home Assistant sees it go)."""

    def __init__(self, host: str, port: int, name: str | None = None) -> None:
        from zeroconf import IPVersion
        from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

        self.addresses = addresses(host)
        self.name = name or instance_name(port)
        self.info = AsyncServiceInfo(SERVICE_TYPE, f"{self.name}.{SERVICE_TYPE}", port=port,
                                     parsed_addresses=self.addresses, server=f"{self.name}.local.",
                                     properties={"software": "venus-edge"})
        self.zc = AsyncZeroconf(interfaces=self.addresses, ip_version=IPVersion.V4Only)

    async def start(self) -> None:
        await (await self.zc.async_register_service(self.info))  # the second await: until it is broadcast

    async def stop(self) -> None:
        try:
            await (await self.zc.async_unregister_service(self.info))  # the goodbye goes out before closing
        finally:
            await self.zc.async_close()
