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
//   foreign CLAIMS_JSON {"token"}: signed with a key the JWKS never held;
//   login CLIENT_JSON PEOPLE_JSON
//                       {"ok": true}: people may log in now, through the
//                       authorization code flow with PKCE, at the public
//                       client CLIENT_JSON ({"client_id", "redirect_uris"});
//                       PEOPLE_JSON is {"id": {claims…}}: each person's ID
//                       token claims (a `ws_role`, say);
//   as ID               {"ok": true}: the next login is person ID's (the
//                       provider's login form is this test's stand-in: it
//                       logs in whoever the test names, with no password).

import http from 'node:http';
import readline from 'node:readline';
import Provider from 'oidc-provider';
import { SignJWT, exportJWK, generateKeyPair, importJWK } from 'jose';

const clients = JSON.parse(process.argv[2] ?? '[]');
// The canvas's login: a public client, the people, who logs in next.
let uiClient = null;
let people = {};
let nextLogin = null;
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
  const members = clients.map((c) => ({
    client_id: c.client_id,
    client_secret: c.client_secret,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    ...(c.scope ? { scope: c.scope } : {}),
    token_endpoint_auth_method: 'client_secret_basic',
  }));
  const ui = uiClient
    ? [{
        client_id: uiClient.client_id,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: uiClient.redirect_uris,
        token_endpoint_auth_method: 'none',
      }]
    : [];
  const p = new Provider(issuer, {
    clients: [...members, ...ui],
    findAccount: (_ctx, id) => (people[id]
      ? { accountId: id, claims: () => ({ sub: id, preferred_username: id, ...people[id] }) }
      : undefined),
    // Every claim a person has goes into the ID token (scope `openid`).
    claims: { openid: ['sub', 'preferred_username', 'ws_role', 'role'] },
    conformIdTokenClaims: false,
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
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
// The provider's login and consent pages, as this test's stand-in: the
// person the test named logs in, and consents to what the hub asked.
async function interaction(req, res) {
  const details = await current.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    if (!nextLogin || !people[nextLogin]) {
      res.statusCode = 403;
      res.end('nobody to log in');
      return;
    }
    await current.interactionFinished(req, res, { login: { accountId: nextLogin } }, { mergeWithLastSubmission: false });
    return;
  }
  const grant = details.grantId
    ? await current.Grant.find(details.grantId)
    : new current.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  grant.addOIDCScope(details.params.scope ?? 'openid');
  const grantId = await grant.save();
  await current.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}
// Not ready until its first key is made (a fixed OIDC_PORT answers before).
const server = http.createServer((req, res) => {
  if (!current) {
    res.statusCode = 503;
    res.end();
    return;
  }
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((e) => {
      res.statusCode = 500;
      res.end(String(e));
    });
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
    } else if (command === 'login') {
      const [client, ...who] = argument.split(' ');
      uiClient = JSON.parse(client);
      people = JSON.parse(who.join(' '));
      current = provider(issuer, key);
      console.log(JSON.stringify({ ok: true }));
    } else if (command === 'as') {
      nextLogin = argument;
      console.log(JSON.stringify({ ok: true }));
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
