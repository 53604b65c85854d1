// A member company's own identity provider, for the tests: panva's
// oidc-provider (a certified OpenID implementation, not written by this
// project), issuing JWT access tokens with the client-credentials grant.
//
//   node oidc_issuer.mjs CLIENTS_JSON
//
// CLIENTS_JSON: [{"client_id", "client_secret", "scope"}], one per member
// client. Resource indicators (RFC 8707) are on: a client names the hub's
// resource and gets a JWT whose `aud` is that resource; without one, the
// token's audience is OIDC_DEFAULT_RESOURCE.
//
// It listens on 127.0.0.1, on OIDC_PORT or a port the system picks, and
// prints one JSON line: {"issuer", "kid"}. It exits when stdin closes,
// unless OIDC_DAEMON=1 (scripts/demo --secure runs it so). Then, one command a line on stdin, one JSON line
// back:
//   rotate              the signing key is replaced by a new one (new kid),
//                       same issuer and port: a key rotation as the hub
//                       sees it; prints {"issuer", "kid"} again;
//   sign CLAIMS_JSON    {"token"}: CLAIMS signed with the issuer's real key
//                       (the test plays a forger who holds it, for the
//                       refusals that need one: an expired token, say);
//   foreign CLAIMS_JSON {"token"}: signed with a key the JWKS never held.

import http from 'node:http';
import readline from 'node:readline';
import Provider from 'oidc-provider';
import { SignJWT, exportJWK, generateKeyPair, importJWK } from 'jose';

const clients = JSON.parse(process.argv[2] ?? '[]');
const defaultResource = process.env.OIDC_DEFAULT_RESOURCE ?? 'urn:wall-street:hub';
const scopes = [...new Set(clients.flatMap((c) => (c.scope ?? '').split(' ').filter(Boolean)))];

let generation = 0;
async function signingKey() {
  generation += 1;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: `key-${generation}-${Date.now()}`, alg: 'RS256', use: 'sig' };
}

function provider(issuer, key) {
  const p = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      ...(c.scope ? { scope: c.scope } : {}),
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
    jwks: { keys: [key] },
    ttl: { ClientCredentials: 300 },
    scopes,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => defaultResource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          audience: resource,
          scope: scopes.join(' '),
          accessTokenFormat: 'jwt',
          accessTokenTTL: 300,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  p.on('server_error', (_ctx, err) => console.error('oidc-provider:', err));
  return p;
}

let current = null;
// Not ready until its first key is made (a fixed OIDC_PORT answers before).
const server = http.createServer((req, res) => {
  if (!current) {
    res.statusCode = 503;
    res.end();
    return;
  }
  current.callback()(req, res);
});
server.listen(Number(process.env.OIDC_PORT ?? 0), '127.0.0.1', async () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const announce = (key) => console.log(JSON.stringify({ issuer, kid: key.kid }));
  const sign = async (jwk, claims) => {
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt' })
      .sign(await importJWK(jwk, 'RS256'));
    console.log(JSON.stringify({ token }));
  };
  let key = await signingKey();
  current = provider(issuer, key);
  announce(key);
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', async (line) => {
    const [command, ...rest] = line.trim().split(' ');
    const argument = rest.join(' ');
    if (command === 'rotate') {
      key = await signingKey();
      current = provider(issuer, key);
      announce(key);
    } else if (command === 'sign') {
      await sign(key, JSON.parse(argument));
    } else if (command === 'foreign') {
      await sign({ ...(await signingKey()), kid: 'a-key-nobody-published' }, JSON.parse(argument));
    } else if (command) {
      console.log(JSON.stringify({ error: `unknown command ${command}` }));
    }
  });
  lines.on('close', () => {
    if (process.env.OIDC_DAEMON !== '1') process.exit(0);
  });
});
