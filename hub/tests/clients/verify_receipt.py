"""Verifies a receipt of the hub (a compact JWS over RFC 8785 claims) with
libraries this project did not write: joserfc (PyPI) for the JWS and the
hub's JWKS, rfc8785 (PyPI, Trail of Bits) for the answer's digest.

usage: python verify_receipt.py JWKS_URL RECEIPT ANSWER_JSON

RECEIPT is the compact JWS as the answer carried it, ANSWER_JSON the
capability result the caller received (the answer's data part). Checks the
receipt against the JWKS, the answer's digest (SHA-256 of its canonical
form) against the receipt's `answer`, then the same with one byte of the
answer changed and with one byte of the receipt's payload changed. Prints one
JSON line: {"verified", "kid", "claims", "answer_matches",
"changed_answer_matches", "changed_receipt_error"} or {"verified": false,
"error"}.
"""

import hashlib
import json
import re
import sys

import httpx
import rfc8785
from joserfc import jws
from joserfc.jwk import KeySet


def digest(value):
    return hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def change_byte(text, i):
    return text[:i] + ("B" if text[i] == "A" else "A") + text[i + 1:]


def main(jwks_url, receipt, answer_json):
    keys = KeySet.import_key_set(httpx.get(jwks_url).raise_for_status().json())
    verified = jws.deserialize_compact(receipt, keys, algorithms=["EdDSA"])
    claims = json.loads(verified.payload)
    answer = json.loads(answer_json)
    changed = change_byte(answer_json, re.search(r"[0-9a-z]", answer_json).start())
    header, payload, signature = receipt.split(".")
    forged = ".".join([header, change_byte(payload, len(payload) // 2), signature])
    try:
        jws.deserialize_compact(forged, keys, algorithms=["EdDSA"])
        changed_error = None
    except Exception as e:  # noqa: BLE001  (any refusal is what is asked)
        changed_error = f"{type(e).__name__}: {e}"
    return {
        "verified": True,
        "kid": verified.protected.get("kid"),
        "alg": verified.protected.get("alg"),
        "claims": claims,
        "answer_matches": digest(answer) == claims.get("answer"),
        "changed_answer_matches": digest(json.loads(changed)) == claims.get("answer"),
        "changed_receipt_error": changed_error,
    }


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    try:
        out = main(*sys.argv[1:])
    except Exception as e:  # noqa: BLE001  (printed, the test reads it)
        out = {"verified": False, "error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out))
