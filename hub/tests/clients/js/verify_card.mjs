// Verifies an agent card's signature (A2A v1.0 §8.4) with libraries this
// project did not write: `jose` (panva) for the JWS and the signer's JWKS,
// `canonicalize` (RFC 8785, by one of its authors) for the payload.
//
//   node verify_card.mjs CARD_URL [TOKEN]
//   node verify_card.mjs file:///path/to/card.json
//
// Fetches the card (with `Authorization: Bearer TOKEN` when given: the
// extended card) or reads it from a file (a card some server handed out),
// takes its first signature, fetches the JWKS its
// protected header names (`jku`), and verifies the detached JWS over the
// card's canonical form without `signatures`. Prints one JSON line:
// {"verified": true, "kid", "alg", "jku"} or {"verified": false, "error"}.

import { readFileSync } from 'node:fs';
import canonicalize from 'canonicalize';
import { base64url, createRemoteJWKSet, decodeProtectedHeader, flattenedVerify } from 'jose';

const [url, token] = process.argv.slice(2);
const headers = token ? { Authorization: `Bearer ${token}` } : {};
try {
  const card = url.startsWith('file://')
    ? JSON.parse(readFileSync(new URL(url), 'utf8'))
    : await (await fetch(url, { headers })).json();
  const [signature] = card.signatures ?? [];
  if (!signature) throw new Error('the card has no signature');
  const { signatures, ...unsigned } = card;
  void signatures;
  const header = decodeProtectedHeader(signature);
  const jwks = createRemoteJWKSet(new URL(header.jku));
  const { protectedHeader } = await flattenedVerify(
    {
      protected: signature.protected,
      signature: signature.signature,
      payload: base64url.encode(canonicalize(unsigned)),
    },
    jwks,
  );
  console.log(JSON.stringify({ verified: true, kid: protectedHeader.kid, alg: protectedHeader.alg, jku: header.jku }));
} catch (e) {
  console.log(JSON.stringify({ verified: false, error: String(e.message ?? e) }));
}
