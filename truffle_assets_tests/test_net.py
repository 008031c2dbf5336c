"""The one loopback rule, for a bind address and for an endpoint URL alike."""

import pytest

from truffle_assets.net import is_loopback, url_is_loopback


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.5", "localhost", "LOCALHOST", "::1", "[::1]", " 127.0.0.1 "])
def test_loopback_hosts(host):
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.4", "10.0.0.1", "my-laptop.lan", "127.evil.com",
                                  "localhost.evil.com", "", None])
def test_hosts_reachable_from_elsewhere(host):
    assert not is_loopback(host)


def test_urls_use_the_same_rule():
    assert url_is_loopback("http://127.0.0.1:8080/v1") and url_is_loopback("http://[::1]:8080/v1")
    assert url_is_loopback("http://localhost/v1")
    # the runtime's old prefix test took any host starting with "127." for this machine
    assert not url_is_loopback("http://127.evil.com/v1")
    assert not url_is_loopback("https://openrouter.ai/api/v1") and not url_is_loopback(None) and not url_is_loopback("")
