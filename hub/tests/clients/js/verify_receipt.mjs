// Verifies a receipt of the hub (a compact JWS over RFC 8785 claims) with
// libraries this project did not write: `jose` (panva) for the JWS and the
// hub's JWKS, `canonicalize` (RFC 8785) for the answer's digest.
//
//   node verify_receipt.mjs JWKS_URL RECEIPT ANSWER_JSON
//
// RECEIPT is the compact JWS as the answer carried it, ANSWER_JSON the
// capability result the caller received (the answer's data part). Checks:
// the receipt against the JWKS (`compactVerify`); the answer's digest
// (SHA-256 of its canonical form) against the receipt's `answer`; then the
// same with one byte of the answer changed, and with one byte of the
// receipt's payload changed. Prints one JSON line:
// {"verified", "kid", "claims", "answer_matches", "changed_answer_matches",
//  "changed_receipt_error"} or {"verified": false, "error"}.

import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { compactVerify, createRemoteJWKSet } from 'jose';

const [jwksUrl, receipt, answerJson] = process.argv.slice(2);
const digest = (value) => createHash('sha256').update(canonicalize(value)).digest('hex');

/** The text with the byte at `i` replaced by another ASCII letter. */
function changeByte(text, i) {
  const c = text[i] === 'A' ? 'B' : 'A';
  return text.slice(0, i) + c + text.slice(i + 1);
}

try {
  const jwks = createRemoteJWKSet(new URL(jwksUrl));
  const { payload, protectedHeader } = await compactVerify(receipt, jwks);
  const claims = JSON.parse(new TextDecoder().decode(payload));
  const answer = JSON.parse(answerJson);
  const changed = changeByte(answerJson, answerJson.search(/[0-9a-z]/));
  let changedReceiptError = null;
  try {
    const [h, p, s] = receipt.split('.');
    await compactVerify([h, changeByte(p, Math.floor(p.length / 2)), s].join('.'), jwks);
  } catch (e) {
    changedReceiptError = `${e.code ?? e.name}: ${e.message}`;
  }
  console.log(
    JSON.stringify({
      verified: true,
      kid: protectedHeader.kid,
      alg: protectedHeader.alg,
      claims,
      answer_matches: digest(answer) === claims.answer,
      changed_answer_matches: digest(JSON.parse(changed)) === claims.answer,
      changed_receipt_error: changedReceiptError,
    }),
  );
} catch (e) {
  console.log(JSON.stringify({ verified: false, error: `${e.code ?? e.name}: ${e.message}` }));
}
