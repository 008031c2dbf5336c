"""The one loopback rule: what counts as "only this machine" for binding a server or trusting an endpoint."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlparse


def is_loopback(host: str | None) -> bool:
    """`localhost` or a loopback address (127.0.0.0/8, ::1). A hostname, 0.0.0.0 or :: is reachable from elsewhere."""
    host = (host or "").strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_is_loopback(url: str | None) -> bool:
    return bool(url) and is_loopback(urlparse(url).hostname)
