"""The generated Python bindings over HTTPS.

`cargo xtask test --only python` starts `likekit-tls-front` before the
server: TLS on a free loopback port with a certificate that a throwaway CA
signed, each connection forwarded to the server. It passes LIKEKIT_TLS_URL
(`https://127.0.0.1:<port>`) and LIKEKIT_TLS_CA (a file with the CA's PEM).
The client is given the CA through `LikeClientOptions`'
`extra_root_certificates_pem`; the server's state is read back over plain
HTTP through the admin client.
"""

import asyncio
import os
import ssl

import pytest

import likekit
from conftest import FixedToken, wait_idle
from likekit_admin import Admin, AdminError, Created, FaultMethod, FaultRoute, WriteResult


@pytest.fixture(scope="module")
def tls():
    """(front URL, CA PEM)."""
    url = os.environ.get("LIKEKIT_TLS_URL")
    ca = os.environ.get("LIKEKIT_TLS_CA")
    if not url or not ca:
        pytest.fail("LIKEKIT_TLS_URL and LIKEKIT_TLS_CA are not set (run `cargo xtask test --only python`)")
    with open(ca, encoding="ascii") as f:
        return url, f.read()


def options(pem=None):
    """Quick retries without jitter, trusting `pem`'s roots too."""
    return likekit.LikeClientOptions(
        retry_min_delay_ms=10,
        retry_max_delay_ms=20,
        max_retries=2,
        retry_jitter=False,
        extra_root_certificates_pem=pem,
    )


@pytest.fixture
def https_client(tls, viewer):
    """Makes clients that go through the TLS front; shuts them down after
    the test."""
    made = []

    def make(pem):
        client = likekit.LikeClient(tls[0], viewer[1], options(pem))
        made.append(client)
        return client

    yield make
    for client in made:
        asyncio.run(client.shutdown(1_000))


def read_back(admin, post, user_id):
    """(liked_by_me, count) of `post` as the server has it for `user_id`."""
    status, body = admin.as_viewer("GET", f"/posts/{post}/likes", admin.token(user_id))
    assert status == 200, body
    return body["liked_by_me"], body["count"]


def test_the_option_is_left_out_by_default():
    assert likekit.LikeClientOptions().extra_root_certificates_pem is None
    assert likekit.default_options().extra_root_certificates_pem is None


def test_taps_and_a_read_over_https_with_the_ca_as_an_extra_root(admin, viewer, tls, journal, https_client):
    post = admin.post()
    ben = admin.user("Ben")
    status, _ = admin.as_viewer("POST", f"/posts/{post}/like", admin.token(ben))
    assert status == 200
    client = https_client(tls[1])

    view = asyncio.run(client.refresh(post))
    assert (view.liked, view.count, view.line.text) == (False, 1, "1 like")

    assert client.set_liked(post, True).pending
    wait_idle(client)
    assert read_back(admin, post, viewer[0]) == (True, 2)
    view = client.view(post)
    assert (view.liked, view.count, view.pending, view.error) == (True, 2, False, None)

    assert not client.set_liked(post, False).liked
    wait_idle(client)
    assert read_back(admin, post, viewer[0]) == (False, 1)
    assert read_back(admin, post, ben) == (True, 1)

    stats = client.stats()
    assert (stats.calls_sent, stats.retries, stats.rollbacks) == (2, 0, 0)
    # The viewer's calls, as the server saw them: the read first, then one
    # like and one unlike, each applied once (the checks above read too).
    mine = [e for e in journal(post=post) if e.user == viewer[0]]
    assert (mine[0].route, mine[0].method, mine[0].status) == (FaultRoute.LIKES, FaultMethod.GET, 200)
    writes = [(e.route, e.method, e.status, e.write) for e in mine if e.route != FaultRoute.LIKES]
    assert writes == [
        (FaultRoute.LIKE, FaultMethod.POST, 200, WriteResult.APPLIED),
        (FaultRoute.UNLIKE, FaultMethod.DELETE, 200, WriteResult.APPLIED),
    ]


def test_without_the_ca_the_certificate_is_refused_as_a_network_error(admin, viewer, tls, journal, https_client):
    post = admin.post()
    client = https_client(None)

    with pytest.raises(likekit.LikeError.Network, match="certificate"):
        asyncio.run(client.refresh(post))

    shown = client.set_liked(post, True)
    assert shown.liked and shown.pending
    wait_idle(client)
    view = client.view(post)
    assert (view.liked, view.count, view.pending) == (False, 0, False)
    assert isinstance(view.error, likekit.LikeError.Network)
    assert client.stats().rollbacks == 1
    # Nothing reached the server.
    assert journal(post=post) == []
    assert read_back(admin, post, viewer[0]) == (False, 0)


def test_another_ca_does_not_help_and_the_right_one_beside_it_does(admin, tls, https_client):
    post = admin.post()
    # A real root certificate that did not sign the front's: one of the
    # system's.
    other = _system_root()
    if other is None:
        pytest.skip("no root certificate in /etc/ssl/certs to try")
    client = https_client(other)
    with pytest.raises(likekit.LikeError.Network, match="certificate"):
        asyncio.run(client.refresh(post))
    client = https_client(other + tls[1])
    assert asyncio.run(client.refresh(post)).count == 0


def _system_root():
    """The PEM of one root certificate of the system's store, if any."""
    folder = "/etc/ssl/certs"
    if not os.path.isdir(folder):
        return None
    for name in sorted(os.listdir(folder)):
        if name.endswith(".pem"):
            with open(os.path.join(folder, name), encoding="ascii", errors="replace") as f:
                text = f.read()
            if "-----BEGIN CERTIFICATE-----" in text:
                return text
    return None


@pytest.mark.parametrize(
    "pem, says",
    [
        ("", "no certificate in the PEM"),
        ("/path/to/ca.pem", "no certificate in the PEM"),
        ("-----BEGIN CERTIFICATE-----\n%%%\n-----END CERTIFICATE-----\n", "unreadable PEM: bad base64"),
        ("-----BEGIN CERTIFICATE-----\nMIIB\n", "unreadable PEM: a certificate has no -----END line"),
        (
            "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n",
            "certificate 1 of 1 is not a usable X.509 certificate",
        ),
    ],
)
def test_pem_without_a_usable_certificate_is_a_config_error(tls, viewer, pem, says):
    with pytest.raises(likekit.LikeError.Config) as refused:
        likekit.LikeClient(tls[0], FixedToken("token"), options(pem))
    assert f"extra root certificates: {says}" in str(refused.value)


def test_the_admin_client_takes_a_tls_context_for_a_server_a_test_ca_signed(tls, admin):
    """The admin client over the same front: refused (the certificate is
    not one the system trusts) until given a context trusting the test CA."""
    url, _pem = tls
    untrusting = Admin(url, os.environ["LIKEKIT_ADMIN_KEY"], timeout=10)
    with pytest.raises(AdminError) as refused:
        untrusting.create_post(admin.next_id())
    assert refused.value.code == "no_answer", refused.value
    assert "certificate" in str(refused.value).lower(), refused.value

    trusting = Admin(url, os.environ["LIKEKIT_ADMIN_KEY"], timeout=10, context=ssl.create_default_context(cafile=os.environ["LIKEKIT_TLS_CA"]))
    post = admin.next_id()
    assert trusting.create_post(post) is Created.NEW
    assert admin.get_post(post).count == 0, "the post reached the server behind the front"

    with pytest.raises(TypeError):
        Admin(url, os.environ["LIKEKIT_ADMIN_KEY"], context="no")  # type: ignore[arg-type]
