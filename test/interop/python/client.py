"""OAuth 2.0 / OpenID Connect clients written the way a Python application uses Debian's packages.

Two libraries, each through its own calls:

- Authlib (``OAuth2Session`` over requests): the authorization URL with PKCE, the code exchange, ID token
  verification (``authlib.jose`` with ``CodeIDToken``), refresh, client credentials, and ``private_key_jwt`` with
  ``PrivateKeyJWT`` (which signs for 3600 s and sets ``aud`` to the URL it posts to, query included);
- requests-oauthlib with PyJWT: the same flow, the ID token checked with ``jwt.PyJWKClient``, and the client
  assertion signed with ``jwt.encode``. Its steps are reported with the prefix ``requests_oauthlib.``.

The driver (test/interop-clients.test.ts) passes the settings in INTEROP_* variables, signs the user in when the
program prints ``AUTHORIZE <url>`` and answers with the callback URL on stdin. Each step prints
``RESULT <step> <json>``; any failure raises, and the exit status is non-zero.
"""
import json
import os
import sys
import time
import uuid

# The test server speaks plain http on 127.0.0.1; both libraries refuse that unless told it is on purpose.
os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"
os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = "1"

import jwt  # noqa: E402  PyJWT
import requests  # noqa: E402
from authlib.common.security import generate_token  # noqa: E402
from authlib.integrations.requests_client import OAuth2Session  # noqa: E402
from authlib.jose import JsonWebKey  # noqa: E402
from authlib.jose import jwt as authlib_jwt  # noqa: E402
from authlib.oauth2.rfc7523 import PrivateKeyJWT  # noqa: E402
from authlib.oidc.core import CodeIDToken  # noqa: E402
from oauthlib.oauth2 import BackendApplicationClient  # noqa: E402
from requests_oauthlib import OAuth2Session as OAuthlibSession  # noqa: E402

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

ISSUER = os.environ["INTEROP_ISSUER"]
V2_URL = os.environ["INTEROP_V2_TOKEN_URL"]
CLIENT_ID = os.environ["INTEROP_CLIENT_ID"]
CLIENT_SECRET = os.environ["INTEROP_CLIENT_SECRET"]
REDIRECT_URI = os.environ["INTEROP_REDIRECT_URI"]
KEYED_CLIENT_ID = os.environ["INTEROP_KEYED_CLIENT_ID"]
KEY_ID = os.environ["INTEROP_KEY_ID"]
with open(os.environ["INTEROP_KEY_FILE"], "rb") as key_file:
    PRIVATE_KEY = key_file.read()

METADATA = requests.get(f"{ISSUER}/.well-known/openid-configuration", timeout=10).json()
assert METADATA["issuer"] == ISSUER, METADATA["issuer"]
TOKEN_URL = METADATA["token_endpoint"]


def result(step, token, **extra):
    expires_in = token["expires_in"]
    if not step.endswith("_v2"):
        # RFC 6749 §5.1: a number; clients add it to a time.
        assert isinstance(expires_in, int), f"{step}: expires_in is {expires_in!r}"
    payload = {
        "access_token": token["access_token"],
        "refresh_token": token.get("refresh_token"),
        "token_type": token["token_type"],
        "expires_in": expires_in,
        **extra,
    }
    print(f"RESULT {step} {json.dumps(payload)}", flush=True)


def callback_from_driver(url):
    print(f"AUTHORIZE {url}", flush=True)
    return sys.stdin.readline().strip()


def authlib_flow():
    session = OAuth2Session(
        CLIENT_ID, CLIENT_SECRET, scope="openid", redirect_uri=REDIRECT_URI, code_challenge_method="S256"
    )
    verifier = generate_token(48)
    nonce = generate_token(20)
    url, _state = session.create_authorization_url(
        METADATA["authorization_endpoint"], code_verifier=verifier, nonce=nonce
    )
    callback = callback_from_driver(url)
    token = session.fetch_token(TOKEN_URL, authorization_response=callback, code_verifier=verifier)
    keys = JsonWebKey.import_key_set(requests.get(METADATA["jwks_uri"], timeout=10).json())
    claims = authlib_jwt.decode(
        token["id_token"],
        keys,
        claims_cls=CodeIDToken,
        claims_options={"iss": {"essential": True, "value": ISSUER}},
        claims_params={"nonce": nonce, "client_id": CLIENT_ID, "access_token": token["access_token"]},
    )
    claims.validate()
    result("code", token, id_token_sub=claims["sub"])
    result("refresh", session.refresh_token(TOKEN_URL, refresh_token=token["refresh_token"]))

    for step, url in (("client_credentials", TOKEN_URL), ("client_credentials_v2", V2_URL)):
        credentials = OAuth2Session(CLIENT_ID, CLIENT_SECRET)
        result(step, credentials.fetch_token(url, grant_type="client_credentials"))

    for step, url in (("private_key_jwt", TOKEN_URL), ("private_key_jwt_v2", V2_URL)):
        keyed = OAuth2Session(KEYED_CLIENT_ID, PRIVATE_KEY, token_endpoint_auth_method="private_key_jwt")
        # No token_endpoint given: the assertion's aud is the URL of the request, as Authlib users leave it.
        keyed.register_client_auth_method(PrivateKeyJWT(headers={"kid": KEY_ID}))
        result(step, keyed.fetch_token(url, grant_type="client_credentials"))


def requests_oauthlib_flow():
    prefix = "requests_oauthlib."
    nonce = uuid.uuid4().hex
    session = OAuthlibSession(CLIENT_ID, redirect_uri=REDIRECT_URI, scope=["openid"])
    url, _state = session.authorization_url(METADATA["authorization_endpoint"], nonce=nonce)
    callback = callback_from_driver(url)
    token = session.fetch_token(TOKEN_URL, authorization_response=callback, client_secret=CLIENT_SECRET)
    signing_key = jwt.PyJWKClient(METADATA["jwks_uri"]).get_signing_key_from_jwt(token["id_token"])
    claims = jwt.decode(token["id_token"], signing_key.key, algorithms=["RS256"], audience=CLIENT_ID, issuer=ISSUER)
    assert claims["nonce"] == nonce, "nonce mismatch"
    result(prefix + "code", token, id_token_sub=claims["sub"])
    refreshed = session.refresh_token(TOKEN_URL, refresh_token=token["refresh_token"], auth=(CLIENT_ID, CLIENT_SECRET))
    result(prefix + "refresh", refreshed)

    for step, url in (("client_credentials", TOKEN_URL), ("client_credentials_v2", V2_URL)):
        backend = OAuthlibSession(client=BackendApplicationClient(client_id=CLIENT_ID))
        result(prefix + step, backend.fetch_token(url, client_secret=CLIENT_SECRET))

    for step, url in (("private_key_jwt", TOKEN_URL), ("private_key_jwt_v2", V2_URL)):
        now = int(time.time())
        assertion = jwt.encode(
            {"iss": KEYED_CLIENT_ID, "sub": KEYED_CLIENT_ID, "aud": url, "jti": uuid.uuid4().hex, "iat": now, "exp": now + 300},
            PRIVATE_KEY,
            algorithm="RS256",
            headers={"kid": KEY_ID},
        )
        backend = OAuthlibSession(client=BackendApplicationClient(client_id=KEYED_CLIENT_ID))
        token = backend.fetch_token(
            url, include_client_id=True, client_assertion_type=ASSERTION_TYPE, client_assertion=assertion
        )
        result(prefix + step, token)


authlib_flow()
requests_oauthlib_flow()
print("DONE", flush=True)
